/** The one pid rule: what roster accepts as a process id, in files and on the command line. */
import { UsageError } from "../errors.ts";
import { every, isDigit } from "../chars.ts";
import { isPid, MAX_PID } from "../process/pid.ts";
/** A pid as text: a positive decimal integer, no sign, no leading zero, at most 10 digits. */
export const PID_TEXT = "[1-9][0-9]{0,9}";

/** Whether `s` from `from` up to `to` is PID_TEXT, read char by char (src/chars.ts: why). */
export function isPidText(s: string, from = 0, to = s.length): boolean {
  const n = to - from;
  return n >= 1 && n <= 10 && s.charCodeAt(from) !== 48 && every(s, isDigit, from, to);
}

/** Whether a parsed value (from JSON, say) is a valid pid. */
export function isValidPid(value: unknown): value is number {
  return isPid(value);
}

/** Parses a pid given by a person or a hook: a positive decimal integer, nothing else. */
export function parsePid(value: string, what: string): number {
  if (!isPidText(value) || Number(value) > MAX_PID) {
    throw new UsageError(
      `Invalid ${what}: expected a positive integer process id, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}
