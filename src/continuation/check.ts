/**
 * continuation-check's flow (docs/continuation.md, `--claim`): read the ledger and judge the
 * owner and watchdog, decide (rules.ts); with a claim, take dispatch.lock, decide again from
 * the files as they are then, and make a dispatch or a skip durable, at most once. Under
 * dry-run, and without a claim, nothing is written.
 */
import { pause } from "../pause.ts";
import { type Liveness, type LivenessJudge, probeVerdict } from "../identity/liveness.ts";
import { verifyToken } from "../identity/token.ts";
import { appendAudit } from "./audit.ts";
import {
  assertPrivateLedger,
  createClaim,
  createSkip,
  isClaimed,
  readLastDispatch,
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
  /** `--plan-token`: the plan the hook was started for; null: whichever is on disk. */
  planToken?: string | null;
  /** Where a note for a person goes (stderr): a damaged plan, an incomplete recovery. */
  note: (message: string) => void;
  /**
   * Facts roster reads itself (`--tmux`), laid over the hook's: called before each decision,
   * the claiming one under the lock, so they are as fresh as the dispatch.
   */
  look?: (facts: Facts) => Facts;
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

/**
 * A watchdog is judged by its pid: a running process holding it is alive. With its token
 * (as `roster token` printed it), a pid now held by another process is dead: a reused pid no
 * longer vetoes for ever.
 */
function watchdogLiveness(judge: LivenessJudge, pid: number, token: string | null): Liveness {
  const probe = judge.probe(pid, true);
  const byProbe = probeVerdict(probe)?.liveness ?? "alive";
  if (token === null || byProbe !== "alive") return byProbe;
  const verdict = verifyToken(
    token,
    probe,
    judge.here.bootId,
    (a, b) => judge.backend.compareTokens(a, b),
  );
  return verdict === "same" ? "alive" : verdict === "unknown" ? "unknown" : "dead";
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
  pinnedToken: string | null,
): Observed {
  const now = Date.now();
  const state = readState(dir, key, now);
  const plan = state.plan?.ok ? state.plan.plan : null;
  return {
    situation: {
      plan,
      expectedToken,
      pinnedToken,
      claimed: state.claimed,
      skip: state.skip,
      now,
      lastDispatchMs: state.lastDispatchMs,
      owner: plan === null ? null : judge.verdict(plan.session, true).liveness,
      mode: state.mode.mode,
      modeDetail: state.mode.detail,
      hold: state.hold,
      facts,
      watchdog: typeof facts.watchdog_pid === "number"
        ? watchdogLiveness(judge, facts.watchdog_pid, facts.watchdog_token ?? null)
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
    ? mayWriteSkip(plan, null, verdict)
    : false;
}

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
  const { situation: s } = observe(dir, key, facts, judge, expectedToken, req.planToken ?? null);
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
  assertPrivateLedger(dir);
  await withDispatchLock(dir, judge, CHECK_LOCK_PATIENCE_MS, () => {
    const now = Date.now();
    const last = readLastDispatch(dir, now);
    if (last !== null && last > now) writeLastDispatch(dir, now);
  });
}

/**
 * The verdict for a resumed session; with `claim`, made at most once. A claiming check that
 * finds the key claimed completes that claim's record when its dispatcher died.
 */
export async function checkContinuation(req: CheckRequest): Promise<CheckResult> {
  const { dir, key, judge, note } = req;
  const facts = req.look ? req.look(req.facts) : req.facts;
  const first = observe(dir, key, facts, judge, null, req.planToken ?? null);
  if (first.planProblem !== null) {
    note(`roster: note: the plan of ${key} is damaged (${first.planProblem})`);
  }
  const verdict = decide(first.situation);
  if (verdict.kind === "skip" && verdict.detail !== undefined) {
    note(`roster: note: continuations are off: ${verdict.detail}`);
  }
  const plan = first.situation.plan;
  const claiming = req.claim && first.situation.mode !== "dry-run";
  const { lastDispatchMs, now } = first.situation;
  if (
    claiming && verdict.kind === "wait" && verdict.reason === "spacing" &&
    lastDispatchMs !== null && lastDispatchMs > now
  ) {
    await clampLastDispatch(dir, judge);
  }
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
