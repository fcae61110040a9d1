/**
 * The continuation decision, pure: what the ledger holds, what roster's liveness says about
 * the interrupted owner and the watchdog, and the facts only the resumed harness can see go
 * in; one verdict comes out. The rules run in the documented order and the first that
 * applies decides. A fact a rule needs and did not get makes that rule veto
 * (`fact-missing:<name>`): the convenient value is never assumed.
 */
import type { Liveness } from "../identity/liveness.ts";
import {
  bool,
  described,
  either,
  format,
  int,
  nullable,
  optional,
  pid,
  str,
  type ValueOf,
} from "../format/format.ts";
import type { Result } from "../format/result.ts";
import { parseTime } from "../time.ts";
import type { SkipRead } from "./ledger.ts";
import { DEFAULT_CHAIN_LIMIT, type Plan, type SkipClass } from "./schema.ts";

export type Mode = "on" | "off" | "dry-run";

const flag = described(bool, "a boolean");
const text = described(nullable(str(65_536)), "a string or null");

/** What the resumed harness reports. An absent key is a missing fact; null is a value. */
const FACTS = format("facts", {
  /** The harness confirms it resumed this session (and is about to send the turn). */
  ack_resumed: optional(flag),
  session_id: optional(text),
  pane_key: optional(text),
  /** The id of the last transcript entry now; null when the transcript is empty. */
  last_entry_id: optional(text),
  idle: optional(flag),
  /** Queued user messages: a count, or a boolean. */
  pending_messages: optional(
    described(either(bool, int(0, Number.MAX_SAFE_INTEGER)), "a boolean or a non-negative integer"),
  ),
  /** Unsent text in the input box; null when the harness has none. */
  editor_text: optional(text),
  user_active: optional(flag),
  prompt_open: optional(flag),
  /** The pid of a watchdog process for this session; null when there is none. */
  watchdog_pid: optional(described(nullable(pid), "a process id or null")),
  /** The watchdog's start token (as `roster token` prints it): a reused pid is then dead. */
  watchdog_token: optional(described(nullable(str(512, 1)), "a start token or null")),
}, {
  notObject: "expected a JSON object",
  invalid: (name, v, type) => {
    const got = JSON.stringify(v) ?? String(v);
    return `fact ${name} must be ${type.expected}, got ${got.slice(0, 60)}`;
  },
});
export type Facts = ValueOf<typeof FACTS>;
type FactName = keyof Facts;

export const FACT_NAMES = FACTS.names as readonly FactName[];

/** Validates the facts object. Unknown keys are ignored; a known key of the wrong type is not. */
export function parseFacts(value: unknown): Result<Facts> {
  return FACTS.check(value);
}

type WaitReason = "not-before" | "spacing" | "locked";
type StopReason =
  | "not-released"
  | "plan-changed"
  | "claimed"
  | "parked"
  | "resumed"
  | "owner-alive";

/**
 * The registry's record of the plan's session, as its lifecycle has it now: parked (set aside
 * on purpose), resumed (it lives on in its successor: `running` says whether the successor's
 * record is live, with the identity the continue must then come through), or neither. Null
 * when the registry holds no record of that process (a plan another tool wrote, a record
 * removed): the owner's liveness alone then decides, as before.
 */
export type Lifecycle =
  | { state: "parked" }
  | {
    state: "resumed";
    successor: { running: boolean; session_id: string | null; tmux_pane: string | null };
  }
  | { state: "none" };

/** What decide() answers for a key; continuation-check prints it as its `verdict`. */
export type Decision =
  | { kind: "dispatch" }
  | { kind: "wait"; until: number; reason: WaitReason }
  /** `would`: under mode dry-run, the verdict that mode on would have given. */
  /** `detail`: why continuations are off, for `disabled`. */
  | { kind: "skip"; class: SkipClass; reason: string; would?: Decision; detail?: string }
  | { kind: "stop"; reason: StopReason }
  /** An existing skip file decided it; `class` is null when that file is damaged. */
  | { kind: "vetoed"; reason: string; class: SkipClass | null };

/** Everything one decision looks at. */
export interface Situation {
  /** The plan on disk; null when there is none or it is damaged. */
  plan: Plan | null;
  /** The token the caller judged before (the claim pass); null accepts any. */
  expectedToken: string | null;
  /** `--plan-token`: the plan the hook was started for; null accepts any. */
  pinnedToken?: string | null;
  claimed: boolean;
  skip: SkipRead;
  now: number;
  lastDispatchMs: number | null;
  /** Roster's liveness of the plan's session; null when it was not judged. */
  owner: Liveness | null;
  /** The session's record's lifecycle; null when the registry has no record of it. */
  lifecycle: Lifecycle | null;
  mode: Mode;
  /** Why the mode is off (which file, what is wrong); null when it is on or dry-run. */
  modeDetail?: string | null;
  hold: boolean;
  facts: Facts;
  /** Liveness of `facts.watchdog_pid` when it is a pid; null when not judged. */
  watchdog: Liveness | null;
}

const skip = (cls: SkipClass, reason: string): Decision => ({ kind: "skip", class: cls, reason });
const veto = (reason: string) => skip("veto", reason);
const stop = (reason: StopReason): Decision => ({ kind: "stop", reason });
const wait = (until: number, reason: WaitReason): Decision => ({ kind: "wait", until, reason });

/** The first of `names` the facts lack, as a veto; null when all are there. */
function missing(facts: Facts, names: FactName[]): Decision | null {
  for (const n of names) if (facts[n] === undefined) return veto(`fact-missing:${n}`);
  return null;
}

export function decide(s: Situation): Decision {
  const f = s.facts;
  // 1. Acknowledged as resumed.
  const noAck = missing(f, ["ack_resumed"]);
  if (noAck) return noAck;
  if (f.ack_resumed !== true) return skip("process-end", "ack");

  // 2. The plan, the claim, the skip, and the clock.
  const plan = s.plan;
  if (plan === null) return stop("not-released");
  if (s.pinnedToken != null && plan.token !== s.pinnedToken) return stop("plan-changed");
  if (
    plan.state !== "released" || (s.expectedToken !== null && plan.token !== s.expectedToken)
  ) {
    return stop("not-released");
  }
  if (s.claimed) return stop("claimed");
  if (s.skip !== null) {
    return "damaged" in s.skip
      ? { kind: "vetoed", reason: "skip-damaged", class: null }
      : { kind: "vetoed", reason: s.skip.reason, class: s.skip.class };
  }
  const deadline = plan.deadline === null ? null : parseTime(plan.deadline);
  if (deadline !== null && s.now > deadline) return skip("process-end", "timeout");
  const notBefore = plan.not_before === null ? null : parseTime(plan.not_before);
  if (notBefore !== null && s.now < notBefore) return wait(notBefore, "not-before");
  if (s.lastDispatchMs !== null && plan.spacing_ms > 0) {
    // A last dispatch in the future (the clock was stepped back) counts as now.
    const next = Math.min(s.lastDispatchMs, s.now) + plan.spacing_ms;
    if (s.now < next) return wait(next, "spacing");
  }

  // 3. The lifecycle: a parked session is never continued, a resumed one only through its
  // successor (rule 5 then compares the facts with the successor's identity). Neither is
  // written: the key stays open for a resume, or for a successor that runs again.
  if (s.lifecycle?.state === "parked") return stop("parked");
  if (s.lifecycle?.state === "resumed" && !s.lifecycle.successor.running) return stop("resumed");
  // The interrupted owner must be gone, as far as roster can tell.
  if (s.owner === "alive") return stop("owner-alive");
  if (s.owner !== "dead") return veto("owner-unknown");

  // 4. The ledger's switches.
  if (s.mode !== "on") {
    if (s.mode !== "dry-run") {
      return s.modeDetail == null
        ? veto("disabled")
        : { kind: "skip", class: "veto", reason: "disabled", detail: s.modeDetail };
    }
    return { kind: "skip", class: "veto", reason: "disabled", would: fromHold(s, plan) };
  }
  return fromHold(s, plan);
}

/**
 * Whether a skip decided for `plan` may be made durable as `K.skip`. Rule 1 answers before
 * the plan is looked at, so a skip can be decided for a plan that is still `planned`, or
 * that was replaced since the caller first judged it (`expectedToken`, null: any). Writing
 * it would decide for good a continuation that was never offered: a hook that fires before
 * the release, without its ack, must not cost the session its continue. The verdict stands
 * either way; only the write depends on this.
 */
export function mayWriteSkip(
  plan: Plan | null,
  expectedToken: string | null,
  verdict?: Decision,
): boolean {
  // Continuations being off decides nothing: the key stays open until they are on.
  if (verdict?.kind === "skip" && verdict.reason === "disabled") return false;
  return plan !== null && plan.state === "released" &&
    (expectedToken === null || plan.token === expectedToken);
}

/** Rules 4 (hold) to 9, as mode on would run them. */
function fromHold(s: Situation, plan: Plan): Decision {
  const f = s.facts;
  if (s.hold) return veto("hold");
  // A crash loop: this session was continued `chain - 1` times lately, and crashed again.
  if ((plan.chain ?? 1) > (plan.chain_limit ?? DEFAULT_CHAIN_LIMIT)) return veto("chain");

  // 5. Identity: of the session the continue goes to, the successor of a resumed one.
  const noId = missing(f, ["session_id", "pane_key"]);
  if (noId) return noId;
  const to = s.lifecycle?.state === "resumed" ? s.lifecycle.successor : plan.session;
  if (f.session_id !== to.session_id || f.pane_key !== to.tmux_pane) return veto("identity");

  // 6. Nobody acted since the interruption.
  const noEntry = missing(f, ["last_entry_id"]);
  if (noEntry) return noEntry;
  if (f.last_entry_id !== plan.frozen_marker) return veto("new-entry");

  // 7. A person is there; the session is busy.
  const noPerson = missing(f, ["user_active", "editor_text", "prompt_open"]);
  if (noPerson) return noPerson;
  const typing = typeof f.editor_text === "string" && f.editor_text.trim() !== "";
  if (f.user_active || typing || f.prompt_open) return veto("user-active");
  const noIdle = missing(f, ["idle", "pending_messages"]);
  if (noIdle) return noIdle;
  const pending = f.pending_messages === true ||
    (typeof f.pending_messages === "number" && f.pending_messages > 0);
  if (!f.idle || pending) return veto("busy");

  // 8. A watchdog for the session is alive (null: the harness says there is none).
  const noWatchdog = missing(f, ["watchdog_pid"]);
  if (noWatchdog) return noWatchdog;
  if (f.watchdog_pid !== null) {
    if (s.watchdog === "alive") return veto("watchdog");
    if (s.watchdog !== "dead") return veto("watchdog-unknown");
  }

  // 9.
  return { kind: "dispatch" };
}
