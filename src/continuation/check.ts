/**
 * continuation-check's flow (docs/continuation.md, `--claim`): read the ledger and judge the
 * owner and watchdog, decide (rules.ts); with a claim, take dispatch.lock, decide again from
 * the files as they are then, and make a dispatch or a skip durable, at most once. Under
 * dry-run, and without a claim, nothing is written.
 */
import { lazyModule } from "../lazy.ts";
import { type Liveness, type LivenessJudge, probeVerdict } from "../identity/liveness.ts";
import { verifyToken } from "../identity/token.ts";
import { readState } from "./ledger.ts";
import {
  decide,
  type Decision,
  type Facts,
  type Lifecycle,
  mayWriteSkip,
  type Situation,
} from "./rules.ts";
import type { Plan } from "./schema.ts";

/**
 * The claim's side of the flow (./claim.ts: the dispatch lock, the durable writes, recovery),
 * loaded only by a claiming check: a check without `--claim` reads and decides, nothing more.
 */
const claimModule = lazyModule<typeof import("./claim.ts")>("./claim.ts", (s) => import(s));
/**
 * The registry's lookup of one session, read only when there is a plan whose session's
 * lifecycle counts (not all of registry/mod.ts: its scanner and writers are not needed here).
 */
const lookupModule = lazyModule<typeof import("../registry/lookup.ts")>(
  "../registry/lookup.ts",
  (s) => import(s),
);

export interface CheckRequest {
  dir: string;
  /** The store whose record of the plan's session says whether it was parked or resumed. */
  home: string;
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

export interface CheckResult {
  verdict: Decision;
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

export interface Observed {
  situation: Situation;
  /** What was wrong with a damaged plan, for a note on stderr. */
  planProblem: string | null;
}

/**
 * The lifecycle of `plan`'s session as the registry at `home` records it now, its successor
 * judged afresh; null when the registry has no record of it.
 */
async function lifecycleOf(
  home: string,
  plan: Plan,
  judge: LivenessJudge,
): Promise<Lifecycle | null> {
  const { sessionLifecycle } = await lookupModule();
  const found = sessionLifecycle(home, plan.session, judge);
  if (found === null) return null;
  if (found.successor !== null) {
    const row = found.successor.row;
    return {
      state: "resumed",
      successor: {
        running: row !== null && row.liveness === "alive",
        session_id: row?.session_id ?? null,
        tmux_pane: row?.tmux_pane ?? null,
      },
    };
  }
  return { state: found.parked ? "parked" : "none" };
}

/**
 * Reads the ledger and judges the owner and watchdog, and the plan's session's lifecycle in
 * the registry at `home`: everything decide() needs.
 */
export async function observe(
  dir: string,
  home: string,
  key: string,
  facts: Facts,
  judge: LivenessJudge,
  expectedToken: string | null,
  pinnedToken: string | null,
): Promise<Observed> {
  const now = Date.now();
  const state = readState(dir, key, now);
  const plan = state.plan?.ok ? state.plan.value : null;
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
      lifecycle: plan === null ? null : await lifecycleOf(home, plan, judge),
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
export function needsClaimPass(verdict: Decision, plan: Plan | null): plan is Plan {
  return verdict.kind === "dispatch"
    ? plan !== null
    : verdict.kind === "skip"
    ? mayWriteSkip(plan, null, verdict)
    : false;
}

/**
 * The verdict for a resumed session; with `claim`, made at most once. A claiming check that
 * finds the key claimed completes that claim's record when its dispatcher died.
 */
export async function checkContinuation(req: CheckRequest): Promise<CheckResult> {
  const { dir, home, key, judge, note } = req;
  const facts = req.look ? req.look(req.facts) : req.facts;
  const first = await observe(dir, home, key, facts, judge, null, req.planToken ?? null);
  if (first.planProblem !== null) {
    note(`roster: note: the plan of ${key} is damaged (${first.planProblem})`);
  }
  const verdict = decide(first.situation);
  if (verdict.kind === "skip" && verdict.detail !== undefined) {
    note(`roster: note: continuations are off: ${verdict.detail}`);
  }
  if (!req.claim || first.situation.mode === "dry-run") return { verdict };
  const claim = await claimModule();
  return await claim.claimAfterFirstLook(req, first.situation, verdict);
}
