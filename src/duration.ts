/** Durations as people write them on the command line: `90s`, `30m`, `12h`, `7d`. */
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
