/** The one pid rule: what roster accepts as a process id, in files and on the command line. */
import { UsageError } from "../errors.ts";
import { isPid, MAX_PID } from "../process/pid.ts";
/** A pid as text: a positive decimal integer, no sign, no leading zero, at most 10 digits. */
export const PID_TEXT = "[1-9][0-9]{0,9}";
const PID_ONLY = new RegExp(`^${PID_TEXT}$`);

/** Whether a parsed value (from JSON, say) is a valid pid. */
export function isValidPid(value: unknown): value is number {
  return isPid(value);
}

/** Parses a pid given by a person or a hook: a positive decimal integer, nothing else. */
export function parsePid(value: string, what: string): number {
  if (!PID_ONLY.test(value) || Number(value) > MAX_PID) {
    throw new UsageError(
      `Invalid ${what}: expected a positive integer process id, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}
