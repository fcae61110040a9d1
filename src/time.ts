/**
 * Time as roster reads and writes it: durations as people type them (`90s`, `30m`, `12h`,
 * `7d`), RFC 3339 timestamps in files, short ages in tables.
 */
import { isDigit, runEnd } from "./chars.ts";
import { UsageError } from "./errors.ts";

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
/** Ten years: anything longer is a typo, and larger numbers stop being exact. */
const MAX_MS = 10 * 365 * 86_400_000;

/** Parses `<integer><unit>` (units ms, s, m, h, d, w) into milliseconds; `flag` names the flag. */
export function parseDuration(value: string, flag: string, allowZero = false): number {
  const m = /^(\d{1,12})(ms|s|m|h|d|w)$/.exec(value);
  const ms = m ? Number(m[1]) * UNITS[m[2]] : NaN;
  if (!m || ms > MAX_MS || (!allowZero && ms === 0)) {
    throw new UsageError(
      `Invalid ${flag}: expected a ${
        allowZero ? "" : "positive "
      }duration such as 90s, 30m, 12h or 7d` +
        `, got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

/** The longest delay one timer takes: a longer one fires at once (and Deno warns). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A pause of `ms` that may be as long as any duration roster parses (ten years): a timer is
 * re-armed in steps of at most MAX_TIMER_MS, so a `--timeout 30d` waits 30 days, not 0 ms.
 * `cancel` ends it unresolved, so a pending pause never keeps the process alive.
 */
export function delay(ms: number): { done: Promise<void>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = performance.now() + ms;
  const done = new Promise<void>((ok) => {
    const arm = (left: number) => {
      timer = setTimeout(() => {
        const rest = end - performance.now();
        if (left > MAX_TIMER_MS && rest > 0) arm(rest);
        else ok();
      }, Math.min(Math.max(left, 0), MAX_TIMER_MS));
    };
    arm(ms);
  });
  return { done, cancel: () => clearTimeout(timer) };
}

/** `delay(ms).done`: a pause nothing cancels. */
export const sleep = (ms: number): Promise<void> => delay(ms).done;

/** A short age for tables: 42s, 5m, 3h, 2d. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/**
 * RFC 3339 date-time with a zone, what roster writes and what it accepts:
 * `^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$`, read char by char
 * (src/chars.ts: why).
 */
export function isRfc3339(v: string): boolean {
  const at = (i: number) => v.charCodeAt(i);
  const digits = (...is: number[]) => is.every((i) => isDigit(at(i)));
  if (
    !digits(0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18) || at(4) !== 45 || at(7) !== 45 ||
    at(13) !== 58 || at(16) !== 58 || !(at(10) === 84 || at(10) === 116 || at(10) === 32)
  ) return false;
  let zone = 19;
  if (at(zone) === 46 /* . */) {
    zone = runEnd(v, isDigit, 20);
    if (zone === 20 || zone > 29) return false;
  }
  const z = at(zone);
  if (z === 90 || z === 122) return v.length === zone + 1; // Z, z
  return (z === 43 || z === 45) && v.length === zone + 6 && digits(zone + 1, zone + 2) &&
    at(zone + 3) === 58 && digits(zone + 4, zone + 5);
}

/** The last answer of parseTime: `list` checks a record's registered_at, then sorts by it. */
let lastValue = "";
let lastMs: number | null = null;

/** An RFC 3339 timestamp as epoch milliseconds; null for anything else. */
export function parseTime(value: string): number | null {
  if (value === lastValue) return lastMs;
  const ms = isRfc3339(value) ? Date.parse(value) : NaN;
  lastValue = value;
  lastMs = Number.isFinite(ms) ? ms : null;
  return lastMs;
}

/** Epoch milliseconds as RFC 3339 (UTC), or null. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoTime(ms);
}

/**
 * 10000-01-01T00:00:00Z: from there on Date writes a six-digit, signed year, no RFC 3339
 * date-time: the end of the times roster writes.
 */
export const YEAR_10000_MS = 253_402_300_800_000;
const DAY_MS = 86_400_000;

/**
 * Epoch milliseconds as RFC 3339 in UTC, the text `new Date(ms).toISOString()` gives, computed
 * without a Date: a process's first toISOString costs about a millisecond (every `register`
 * writes a timestamp). Outside 1970 to 9999, and for what is no time, Date's own answer.
 */
export function isoTime(ms: number): string {
  if (!(ms >= 0 && ms < YEAR_10000_MS)) return new Date(ms).toISOString();
  const t = Math.trunc(ms); // Date's TimeClip: the fraction of a millisecond is dropped
  const days = Math.floor(t / DAY_MS);
  let rest = t - days * DAY_MS;
  // Days since 1970-01-01 to a proleptic Gregorian date, in eras of 400 years from 0000-03-01
  // (H. Hinnant's civil_from_days); no era before 1970 is reached here.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  const milli = rest - second * 1000;
  const two = (n: number) => (n < 10 ? "0" : "") + n;
  return `${String(year).padStart(4, "0")}-${two(month)}-${two(day)}T${two(hour)}:${two(minute)}:${
    two(second)
  }.${String(milli).padStart(3, "0")}Z`;
}
