/** `roster completions`: shell completion scripts (issue 5; not implemented yet). */
import { RosterError } from "../errors.ts";

export function run(): number {
  throw new RosterError("Not implemented yet");
}
