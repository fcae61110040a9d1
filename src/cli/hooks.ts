/** Commands for hooks: unregister, check, token, whoami (issue 5; not implemented yet). */
import { RosterError } from "../errors.ts";

const todo = (): number => {
  throw new RosterError("Not implemented yet");
};
export const unregister = todo;
export const check = todo;
export const token = todo;
export const whoami = todo;
