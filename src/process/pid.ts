/**
 * The one pid rule, at the bottom so every layer can use it: a pid is an integer in a range,
 * 1 to MAX_PID unless an OS narrows it. src/identity/pid.ts adds its text form.
 */

/** The largest pid accepted anywhere (Linux's pid_max is at most 2^22; Windows pids fit in u32). */
export const MAX_PID = 0xffff_ffff;
/** The largest pid a signed 32-bit pid_t holds (macOS, FreeBSD, ps). */
export const MAX_PID_T = 0x7fff_ffff;

/** Whether `value` is an integer pid from `least` (Windows' idle process is 0) to `most`. */
export function isPid(value: unknown, most = MAX_PID, least = 1): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= least &&
    value <= most;
}
