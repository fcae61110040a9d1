/**
 * Start tokens as `roster token` prints them (boot-qualified) and their verification: does a
 * token a caller kept still name the process that holds the pid?
 */
import { isGone, type Probe, type TokenMatch } from "../process/types.ts";

/**
 * The token `roster token` prints: the start token, qualified by the boot where the OS has a
 * boot id, so a pid file that outlives a reboot never matches an early-boot process that
 * happens to have the same pid and start time.
 */
export function formatToken(startToken: string, bootId: string | null): string {
  return bootId === null ? startToken : `${startToken}@${bootId}`;
}

export type TokenVerdict = "same" | "different" | "gone" | "unknown";

/**
 * Pure: does `given` (as `roster token` printed it, or a record's bare `start_token`) still
 * name the process that holds the pid? A boot-qualified token from another boot differs.
 */
export function verifyToken(
  given: string,
  probe: Probe,
  bootId: string | null,
  compare: (recorded: string, current: string) => TokenMatch,
): TokenVerdict {
  if (isGone(probe)) return "gone";
  if (probe.kind !== "exists") return "unknown";
  const at = given.lastIndexOf("@");
  const token = at === -1 ? given : given.slice(0, at);
  const boot = at === -1 ? null : given.slice(at + 1);
  if (boot !== null && bootId !== null && boot !== bootId) return "different";
  if (probe.info.startToken === null) return "unknown";
  const match = compare(token, probe.info.startToken);
  return match === "same" ? "same" : match === "different" ? "different" : "unknown";
}
