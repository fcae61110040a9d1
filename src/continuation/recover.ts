/**
 * Completing the record of a claim whose dispatcher died (docs/continuation.md, Crash
 * safety). A dispatcher holds dispatch.lock from before the claim until after the outcome,
 * so under that lock a claim without a matching outcome is a dead dispatcher's. Recovery
 * only completes a record: the verdict (`stop claimed`) stands whatever it meets.
 */
import type { LivenessJudge } from "../identity/liveness.ts";
import { appendAudit, auditHasClaim, readAuditText } from "./audit.ts";
import { readClaim, readOutcomeId, writeOutcome } from "./ledger.ts";
import { CHECK_LOCK_PATIENCE_MS, withDispatchLock } from "./lock.ts";
import { claimEvent, type ClaimRecord, lostOutcome } from "./schema.ts";

/**
 * Pure: whether a claim was left unfinished. A dispatcher writes the outcome last, and holds
 * the lock from before the claim until after it; so a claim whose outcome does not name it
 * is one whose dispatcher died (or, without the lock, may still be at work).
 */
export function claimUnfinished(claim: ClaimRecord, outcomeId: string | null | undefined) {
  return outcomeId !== claim.continuation_id;
}

/** The claim of `key` when it has no outcome naming it; null otherwise. */
function unfinishedClaim(dir: string, key: string): ClaimRecord | null {
  const claim = readClaim(dir, key);
  // A claim roster cannot read names no continuation: it still counts, but there is
  // nothing to audit it by.
  return claim !== null && claimUnfinished(claim, readOutcomeId(dir, key)) ? claim : null;
}

/**
 * The caller holds dispatch.lock. Appends the claim's audit line, marked `recovered`, when
 * the dispatcher died before appending it, then writes the outcome `lost`: a dispatch is
 * printed only after its outcome is written, so this one never was, and it never will be
 * (at most once). Idempotent: the outcome ends it.
 */
function recoverUnderLock(dir: string, key: string) {
  const claim = unfinishedClaim(dir, key);
  if (claim === null) return;
  if (!auditHasClaim(readAuditText(dir), claim.continuation_id)) {
    appendAudit(dir, claimEvent(claim, true));
  }
  writeOutcome(dir, key, lostOutcome(claim, new Date().toISOString(), Deno.pid));
}

/** Runs a recovery; whatever it meets becomes a note, never a failure of the check. */
async function bestEffort(
  fn: () => void | Promise<void>,
  key: string,
  note: (message: string) => void,
) {
  try {
    await fn();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    note(`roster: note: could not complete the record of ${key}'s claim (${why})`);
  }
}

/** Completes `key`'s claim, if it is unfinished; the caller holds dispatch.lock. */
export async function recoverClaimUnderLock(
  dir: string,
  key: string,
  note: (message: string) => void,
) {
  await bestEffort(() => recoverUnderLock(dir, key), key, note);
}

/**
 * For a claiming check that found the key claimed: when the claim has no outcome yet, take
 * the lock (reclaiming it from a dead dispatcher) and recover. Cheap when all is well: two
 * small reads and no lock. A lock held by a live owner (perhaps the dispatcher, still at
 * work) is left to it: the next check tries again.
 */
export async function recoverClaim(
  dir: string,
  key: string,
  judge: LivenessJudge,
  note: (message: string) => void,
) {
  await bestEffort(
    async () => {
      if (unfinishedClaim(dir, key) === null) return;
      await withDispatchLock(dir, judge, CHECK_LOCK_PATIENCE_MS, () => recoverUnderLock(dir, key));
    },
    key,
    note,
  );
}
