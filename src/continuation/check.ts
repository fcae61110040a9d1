/**
 * continuation-check's flow (docs/continuation.md, `--claim`): read the ledger and judge the
 * owner and watchdog, decide (rules.ts); with a claim, take dispatch.lock, decide again from
 * the files as they are then, and make a dispatch or a skip durable, at most once. Under
 * dry-run, and without a claim, nothing is written.
 */
import { pause } from "../pause.ts";
import { type Liveness, type LivenessJudge, probeVerdict } from "../identity/liveness.ts";
import { appendAudit } from "./audit.ts";
import {
  assertPrivateLedger,
  createClaim,
  createSkip,
  isClaimed,
  readState,
  writeLastDispatch,
  writeOutcome,
} from "./ledger.ts";
import { CHECK_LOCK_PATIENCE_MS, withDispatchLock } from "./lock.ts";
import { dispatchMessage } from "./message.ts";
import { recoverClaim, recoverClaimUnderLock } from "./recover.ts";
import { decide, type Facts, mayWriteSkip, type Situation, type Verdict } from "./rules.ts";
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

export interface CheckRequest {
  dir: string;
  key: string;
  facts: Facts;
  judge: LivenessJudge;
  /** `--claim`: make a dispatch or a skip durable (never under dry-run). */
  claim: boolean;
  /** Where a note for a person goes (stderr): a damaged plan, an incomplete recovery. */
  note: (message: string) => void;
}

/** A dispatch this check claimed: its continuation id and the message for the agent. */
export interface Claimed {
  id: string;
  message: string;
}

interface CheckResult {
  verdict: Verdict;
  claimed?: Claimed;
}

/** A watchdog is judged by its pid alone: a running process holding it is alive. */
function livenessOfPid(judge: LivenessJudge, pid: number): Liveness {
  return probeVerdict(judge.probe(pid, true))?.liveness ?? "alive";
}

interface Observed {
  situation: Situation;
  /** What was wrong with a damaged plan, for a note on stderr. */
  planProblem: string | null;
}

/** Reads the ledger and judges the owner and watchdog: everything decide() needs. */
function observe(
  dir: string,
  key: string,
  facts: Facts,
  judge: LivenessJudge,
  expectedToken: string | null,
): Observed {
  const now = Date.now();
  const state = readState(dir, key, now);
  const plan = state.plan?.ok ? state.plan.plan : null;
  return {
    situation: {
      plan,
      expectedToken,
      claimed: state.claimed,
      skip: state.skip,
      now,
      lastDispatchMs: state.lastDispatchMs,
      owner: plan === null ? null : judge.verdict(plan.session, true).liveness,
      mode: state.mode,
      hold: state.hold,
      facts,
      watchdog: typeof facts.watchdog_pid === "number"
        ? livenessOfPid(judge, facts.watchdog_pid)
        : null,
    },
    planProblem: state.plan !== null && !state.plan.ok ? state.plan.problem : null,
  };
}

/**
 * Pure: whether a claiming check's first verdict goes on to the claim pass. Only a released
 * plan can be claimed or skipped. Without one there is nothing to write (and perhaps no
 * ledger), and a skip decided before the release (rule 1 comes first) must not decide the key
 * for good: the first answer stands, and no lock is taken for it.
 */
export function needsClaimPass(verdict: Verdict, plan: Plan | null): plan is Plan {
  return verdict.kind === "dispatch"
    ? plan !== null
    : verdict.kind === "skip"
    ? mayWriteSkip(plan, null)
    : false;
}

/**
 * Makes a dispatch durable: the claim first (from then on it happened, at most once), then
 * its audit line, `.last-dispatch` and the outcome, which comes last because a claim without
 * one marks a dispatcher that died (recover.ts). Null when the key was claimed first.
 */
function recordDispatch(dir: string, claim: ClaimRecord, plan: Plan, nowMs: number) {
  if (!createClaim(dir, claim)) return null;
  // A crash before the audit line below leaves a claim without one: the next claiming check
  // of this key appends it (recover.ts).
  pause("after-claim", dir);
  appendAudit(dir, claimEvent(claim));
  writeLastDispatch(dir, nowMs);
  pause("before-outcome", dir);
  writeOutcome(dir, claim.key, dispatchedOutcome(claim));
  return { id: claim.continuation_id, message: dispatchMessage(plan, claim.continuation_id) };
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
  const { dir, key, facts, judge, note } = req;
  pause("after-lock", dir);
  const { situation: s } = observe(dir, key, facts, judge, expectedToken);
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
    verdict.kind === "skip" && mayWriteSkip(plan, expectedToken) && !s.claimed &&
    !isClaimed(dir, key)
  ) {
    const { class: cls, reason } = verdict;
    recordSkip(dir, key, { class: cls, reason, token: plan.token, pid: Deno.pid, at });
  }
  return { verdict };
}

/**
 * The verdict for a resumed session; with `claim`, made at most once. A claiming check that
 * finds the key claimed completes that claim's record when its dispatcher died.
 */
export async function checkContinuation(req: CheckRequest): Promise<CheckResult> {
  const { dir, key, facts, judge, note } = req;
  const first = observe(dir, key, facts, judge, null);
  if (first.planProblem !== null) {
    note(`roster: note: the plan of ${key} is damaged (${first.planProblem})`);
  }
  const verdict = decide(first.situation);
  const plan = first.situation.plan;
  const claiming = req.claim && first.situation.mode !== "dry-run";
  if (claiming && needsClaimPass(verdict, plan)) {
    assertPrivateLedger(dir);
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
  if (claiming && verdict.kind === "stop" && verdict.reason === "claimed") {
    await recoverClaim(dir, key, judge, note);
  }
  return { verdict };
}
