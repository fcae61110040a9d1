/** The continuation commands (issue 3; not implemented yet). */
import { RosterError } from "../errors.ts";

const todo = (): number => {
  throw new RosterError("Not implemented yet");
};
export const plan = todo;
export const release = todo;
export const check = todo;
