/**
 * A claiming continuation-check after its first look (./check.ts): take dispatch.lock, decide
 * again from the files as they are then, and make a dispatch or a skip durable, at most once;
 * complete the record of a claim whose dispatcher died. Loaded only when a check claims.
 */
import { pause } from "../pause.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { appendAudit } from "./audit.ts";
import { type CheckRequest, type CheckResult, needsClaimPass, observe } from "./check.ts";
import {
  createClaim,
  createSkip,
  isClaimed,
  readLastDispatch,
  writeLastDispatch,
  writeOutcome,
} from "./ledger.ts";
import { CHECK_LOCK_PATIENCE_MS, withDispatchLock } from "./lock.ts";
import { dispatchMessage } from "./message.ts";
import { recoverClaim, recoverClaimUnderLock } from "./recover.ts";
import { decide, type Decision, mayWriteSkip, type Situation } from "./rules.ts";
import {
  claimEvent,
  type ClaimRecord,
  dispatchedOutcome,
  type Plan,
  randomHex,
  skipEvent,
  skippedOutcome,
  type SkipRecord,
} from "./schema.ts";

/** The `until` of a wait for the lock: soon. */
const LOCK_RETRY_MS = 1_000;

/**
 * Makes a dispatch durable: the claim first (from then on it happened, at most once), then
 * its audit line, `.last-dispatch` and the outcome, which comes last because a claim without
 * one marks a dispatcher that died (recover.ts). Null when the key was claimed first.
 */
function recordDispatch(dir: string, claim: ClaimRecord, plan: Plan, nowMs: number) {
  // The claim keeps its message: a hook that lost this check's output reads it back
  // (continuation-show).
  const message = dispatchMessage(plan, claim.continuation_id);
  if (!createClaim(dir, { ...claim, message })) return null;
  // A crash before the audit line below leaves a claim without one: the next claiming check
  // of this key appends it (recover.ts).
  pause("after-claim", dir);
  appendAudit(dir, claimEvent(claim));
  writeLastDispatch(dir, nowMs);
  pause("before-outcome", dir);
  writeOutcome(dir, claim.key, dispatchedOutcome(claim));
  return { id: claim.continuation_id, message };
}

/** Makes a skip durable, first writer wins; its audit line and outcome only for the winner. */
function recordSkip(dir: string, key: string, skip: SkipRecord) {
  if (!createSkip(dir, key, skip)) return;
  appendAudit(dir, skipEvent(key, skip));
  writeOutcome(dir, key, skippedOutcome(key, skip));
}

/**
 * The claim pass; the caller holds dispatch.lock. Decides again from the files as they are
 * now, then makes a dispatch or a skip durable.
 */
async function claimPass(req: CheckRequest, expectedToken: string): Promise<CheckResult> {
  const { dir, key, judge, note } = req;
  pause("after-lock", dir);
  const facts = req.look ? req.look(req.facts) : req.facts;
  const { situation: s } = await observe(
    dir,
    req.home,
    key,
    facts,
    judge,
    expectedToken,
    req.planToken ?? null,
  );
  const verdict = decide(s);
  if (s.mode === "dry-run" || s.plan === null) return { verdict };
  const plan = s.plan;
  const at = new Date(s.now).toISOString();
  if (verdict.kind === "stop" && verdict.reason === "claimed") {
    // Claimed since the first look. Its dispatcher held this lock until done, so an
    // outcome still missing now means that dispatcher died: finish what it left.
    await recoverClaimUnderLock(dir, key, note);
    return { verdict };
  }
  if (verdict.kind === "dispatch") {
    const claim = { key, token: plan.token, continuation_id: randomHex(12), pid: Deno.pid, at };
    const claimed = recordDispatch(dir, claim, plan, s.now);
    return claimed === null ? { verdict: { kind: "stop", reason: "claimed" } } : {
      verdict,
      claimed,
    };
  }
  // A skip is final, so only for the released plan the first decision saw (mayWriteSkip).
  if (
    verdict.kind === "skip" && mayWriteSkip(plan, expectedToken, verdict) && !s.claimed &&
    !isClaimed(dir, key)
  ) {
    const { class: cls, reason } = verdict;
    recordSkip(dir, key, { class: cls, reason, token: plan.token, pid: Deno.pid, at });
  }
  return { verdict };
}

/**
 * A last dispatch in the future (written while the clock ran ahead) would make every check
 * wait one spacing from "now" for as long as the clock stays behind it. Written back as now,
 * under the lock, it blocks for one spacing at most. A busy lock leaves it to the next check.
 */
async function clampLastDispatch(dir: string, judge: LivenessJudge) {
  await withDispatchLock(dir, judge, CHECK_LOCK_PATIENCE_MS, () => {
    const now = Date.now();
    const last = readLastDispatch(dir, now);
    if (last !== null && last > now) writeLastDispatch(dir, now);
  });
}

/** A claiming check, once its first look decided `verdict` from `first`. */
export async function claimAfterFirstLook(
  req: CheckRequest,
  first: Situation,
  verdict: Decision,
): Promise<CheckResult> {
  const { dir, key, judge, note } = req;
  const { plan, lastDispatchMs, now } = first;
  if (
    verdict.kind === "wait" && verdict.reason === "spacing" &&
    lastDispatchMs !== null && lastDispatchMs > now
  ) {
    await clampLastDispatch(dir, judge);
  }
  if (needsClaimPass(verdict, plan)) {
    // Dispatch and skip are made durable only from a decision taken again under the lock;
    // a live holder of the lock makes it a short wait.
    const locked = await withDispatchLock(
      dir,
      judge,
      CHECK_LOCK_PATIENCE_MS,
      () => claimPass(req, plan.token),
    );
    if ("busy" in locked) {
      return { verdict: { kind: "wait", until: Date.now() + LOCK_RETRY_MS, reason: "locked" } };
    }
    return locked.done;
  }
  if (verdict.kind === "stop" && verdict.reason === "claimed") {
    await recoverClaim(dir, key, judge, note);
  }
  return { verdict };
}
