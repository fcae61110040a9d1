/**
 * Time as roster reads and writes it: durations as people type them (`90s`, `30m`, `12h`,
 * `7d`), RFC 3339 timestamps in files, short ages in tables.
 */
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

/** A short age for tables: 42s, 5m, 3h, 2d. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** RFC 3339 date-time with a zone: what roster writes and what it accepts. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The last answer of parseTime: `list` checks a record's registered_at, then sorts by it. */
let lastValue = "";
let lastMs: number | null = null;

/** An RFC 3339 timestamp as epoch milliseconds; null for anything else. */
export function parseTime(value: string): number | null {
  if (value === lastValue) return lastMs;
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  lastValue = value;
  lastMs = Number.isFinite(ms) ? ms : null;
  return lastMs;
}

/** Epoch milliseconds as RFC 3339 (UTC), or null. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
