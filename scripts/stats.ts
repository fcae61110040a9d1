/** What the benchmark scripts share: summary statistics of timing samples. */

/** The middle of the sorted samples (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * The median of a[i] / b[i]: the ratio of two cases measured in the same interleaved rounds,
 * round by round. Runs of one round share the machine's state of that moment (another tenant's
 * load, the CPU's clock), so each round's ratio cancels it where a ratio of the two medians,
 * each taken over every round, cancels it only on the whole. Around the same middle, it moves
 * less from run to run: by half for two cases alone, a little in the bench's rounds of many cases
 * (docs/performance.md, stop 34).
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) {
    throw new RangeError(
      `Paired samples must be two of one length: got ${a.length} and ${b.length}`,
    );
  }
  return median(a.map((x, i) => x / b[i]));
}
