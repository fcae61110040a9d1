/**
 * `roster restore`'s flow for one session: plan its continue, relaunch it with its harness's
 * resume command in a tmux window, see its start hook register it and it still run a few
 * seconds later, and only then link it and release the plan; later, once its hooks say it is
 * idle, claim and type the one continue. A harness whose start hook runs only at its first
 * prompt (Codex) gets its continue claimed before the relaunch, as the resume command's
 * prompt. A relaunch that fails is reported with its reason and left restorable.
 *
 * Over 400 lines: one session's restore is one sequence (plan, relaunch, verify, link, release,
 * continue) whose steps share the session's state; split, each part would pass it all along.
 */
import { cutText } from "../../chars.ts";
import { checkContinuation, type CheckResult } from "../../continuation/check.ts";
import { createPlan, releasePlan } from "../../continuation/plan.ts";
import type { Decision } from "../../continuation/rules.ts";
import type { Plan, ToolCall } from "../../continuation/schema.ts";
import { readPaneFacts, withPaneFacts } from "../../continuation/tmux.ts";
import { RosterError, UsageError } from "../../errors.ts";
import { type LivenessJudge, LivenessJudge as Judge } from "../../identity/liveness.ts";
import { resumeCommand } from "../../registry/owner.ts";
import type { Row } from "../../registry/row.ts";
import { forEachRow } from "../../registry/scan.ts";
import { resumeSession } from "../../registry/store_update.ts";
import { parseTime, sleep } from "../../time.ts";
import { shQuote } from "../quote.ts";
import { clearAttempts, recordFailure } from "./attempts.ts";
import type { Candidate } from "./select.ts";
import {
  closeWindow,
  keepWindow,
  lastLines,
  openWindow,
  paneState,
  pressEnter,
  RESTORE_SESSION,
  serverStartedMs,
  sessionOfPane,
  startIn,
  typeInto,
} from "./tmux.ts";

export interface Place {
  home: string;
  host: string;
  ledger: string;
  /** The restore's own directory in the ledger (attempts, the lock). */
  dir: string;
  judge: LivenessJudge;
}

export interface Timing {
  /** How long the successor's start hook has to register it. */
  registerMs: number;
  /** How long it must keep running after that. */
  settleMs: number;
  /** How long the continue waits for the successor to be idle. */
  continueMs: number;
  maxFailures: number;
}

/** One relaunch that came up: what the continue needs. */
export interface Restored {
  /**
   * The successor's record; null for a harness that registers only at its first prompt,
   * relaunched without one (no continue went with it).
   */
  successor: Row | null;
  /** The crashed session's record (what its hooks recorded before it died). */
  predecessor: Row;
  successorPid: number;
  pane: string;
  /** When the pane was opened (ms): a key a person pressed into it since holds the continue. */
  openedMs: number;
  plan: Plan | null;
  /** Why there is no plan, when there is none. */
  noPlan: string | null;
  /**
   * What became of the continue of a harness that registers at its first prompt, decided
   * before the relaunch (sent: it went as the resume command's prompt); null: sendContinue
   * decides once the session's hooks say it is idle.
   */
  firstPrompt: ContinueResult | null;
}

/** `command`: the argv run in the window, null when nothing was started. */
export type RelaunchResult =
  | { ok: true; restored: Restored; command: string[] }
  | { ok: false; reason: string; failures: number; command: string[] | null };

/** Variables every relaunch passes on from the caller when set: where things are, never a secret. */
const COMMON_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TZ",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_STATE_HOME",
  "XDG_CACHE_HOME",
  "XDG_RUNTIME_DIR",
  "NO_COLOR",
  "ROSTER_RETENTION",
];
/** A name that may hold a secret is never passed: it would show in tmux's command line. */
const SECRET = /KEY|TOKEN|SECRET|PASS|CREDENTIAL|AUTH|COOKIE/i;

/**
 * Pure: the environment a relaunch is given explicitly, so that a tmux server started with
 * another (or a bare) environment cannot break it: PATH and the locations the caller has, the
 * store (so the successor's hooks register where this restore looks), and the model the record
 * carries.
 */
export function relaunchEnv(
  c: Pick<Candidate, "envNames" | "row">,
  home: string,
  env: (name: string) => string | undefined,
): [string, string][] {
  const out: [string, string][] = [];
  for (const name of [...COMMON_ENV, ...c.envNames]) {
    const v = env(name);
    if (v !== undefined && v !== "" && !SECRET.test(name)) out.push([name, v]);
  }
  out.push(["ROSTER_HOME", home]);
  if (c.row.model) out.push(["ROSTER_MODEL", c.row.model]);
  return out;
}

/** A word for sh, single-quoted unless it needs no quotes (for --print). */
export function shq(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : shQuote(s);
}

/**
 * The tool calls the session's hooks recorded as open when it died, as `roster activity`
 * writes them (`open_tool_calls`: `{id, name, started_at}`, `name` null where the harness gave
 * none). A call without a name is named by the words "unnamed tool" and still by its id.
 */
export function openToolCalls(row: Row): ToolCall[] {
  const raw: unknown = row.open_tool_calls;
  if (!Array.isArray(raw)) return [];
  const calls: ToolCall[] = [];
  const text = (v: unknown) => typeof v === "string" && v !== "" ? cutText(v, 256) : null;
  for (const c of raw) {
    if (typeof c === "string") {
      if (text(c) !== null) calls.push({ id: text(c)!, name: text(c)! });
    } else if (c && typeof c === "object") {
      const o = c as Record<string, unknown>;
      const id = text(o.id);
      if (id !== null) calls.push({ id, name: text(o.name) ?? text(o.tool) ?? "unnamed tool" });
    }
  }
  return calls;
}

/** A judge of its own for each look: a judge remembers what it probed. */
const freshJudge = (j: LivenessJudge) => new Judge(j.backend, j.here);

/**
 * The tmux session to open the window in: the one the session's pane is in, while that pane
 * is the same (its server started before the session registered: pane ids start again at
 * %0 with every server), else the restore session.
 */
async function targetSession(row: Row): Promise<string> {
  if (row.tmux_pane === null) return RESTORE_SESSION;
  const started = await serverStartedMs();
  const registered = parseTime(row.registered_at ?? "");
  if (started === null || registered === null || started > registered) return RESTORE_SESSION;
  return (await sessionOfPane(row.tmux_pane)) ?? RESTORE_SESSION;
}

/** The successor's record: the same session id, another process, registered since `since`. */
export function findSuccessor(place: Place, row: Row, since: number): Row | null {
  let found: Row | null = null;
  forEachRow(place.home, freshJudge(place.judge), (r) => {
    if (r.malformed || r.session_id !== row.session_id || r.path === row.path) return;
    if (r.session_pid === row.session_pid && r.start_token === row.start_token) return;
    const up = r.liveness === "alive" || (r.liveness === "unknown" && r.reason === "hosted");
    if (!up || (parseTime(r.registered_at ?? "") ?? 0) < since) return;
    if (
      found === null || (parseTime(r.registered_at!) ?? 0) > (parseTime(found.registered_at!) ?? 0)
    ) {
      found = r;
    }
  });
  return found;
}

/** Whether the successor's process is still the one that registered. */
function stillRunning(place: Place, successor: Row): boolean {
  const v = freshJudge(place.judge).verdict({
    session_pid: successor.session_pid!,
    start_token: successor.start_token,
    boot_id: successor.boot_id,
    machine_id: successor.machine_id,
    pid_ns: successor.pid_ns,
    host: successor.host!,
  }, true);
  return v.liveness === "alive";
}

function windowName(row: Row): string {
  return `${row.agent ?? "session"}-${(row.session_id ?? String(row.session_pid)).slice(0, 8)}`
    .replace(/[^A-Za-z0-9._-]/g, "_");
}

/** Relaunches one session and verifies it; see the module's comment. */
export async function relaunch(
  place: Place,
  c: Candidate,
  env: [string, string][],
  timing: Timing,
  progress: (line: string) => void,
): Promise<RelaunchResult> {
  const { row } = c;
  let plan: Plan | null = null;
  let noPlan: string | null = null;
  try {
    plan = await createPlan(
      { dir: place.ledger, home: place.home, host: place.host, judge: place.judge },
      {
        key: c.key,
        pid: row.session_pid!,
        deadlineMs: 3_600_000,
        notBeforeMs: null,
        spacingMs: 2_000,
        frozenMarker: null,
        cause: "hard",
        release: false,
        toolCalls: openToolCalls(row),
      },
      row,
    );
  } catch (err) {
    // Decided before (a continue already went out for this interruption): relaunch only.
    if (!(err instanceof UsageError)) throw err;
    noPlan = err.message;
  }
  let command: string[] | null = null;
  /** Said of every failure once the continue went with the relaunch: it is spent. */
  let spent = "";
  const fail = (reason: string): RelaunchResult => {
    const a = recordFailure(place.dir, c.key, reason + spent, timing.maxFailures);
    return { ok: false, reason: reason + spent, failures: a.failures, command };
  };
  const session = await targetSession(row);
  const since = Date.now() - 1_000;
  let pane: string;
  try {
    pane = await openWindow(session, windowName(row), row.cwd!);
  } catch (err) {
    if (!(err instanceof RosterError)) throw err;
    return fail(err.message);
  }
  let argv = c.command!;
  let firstPrompt: ContinueResult | null = null;
  if (c.registersAtFirstPrompt) {
    let first: { result: ContinueResult; message: string | null };
    try {
      first = plan === null
        ? { result: notSent(noPlan!), message: null }
        : await continueAsPrompt(place, c, pane, since, timing);
    } catch (err) {
      // The pane could not be read, the lock not taken: nothing was started.
      if (!(err instanceof RosterError)) throw err;
      await closeWindow(pane);
      return fail(err.message);
    }
    firstPrompt = first.result;
    if (first.message !== null) {
      spent = `; its continue (continuation ${first.result.continuation_id}) went with this ` +
        "relaunch as its first prompt and is spent: it may or may not have reached the model, " +
        "and it is never sent again (at most once)";
      const resume = resumeCommand(row.agent, row.session_id, row.hosted === true, first.message);
      if ("problem" in resume) {
        await closeWindow(pane);
        return fail(resume.problem);
      }
      argv = resume.argv;
    }
  }
  let pid: number;
  try {
    pid = await startIn(pane, row.cwd!, env, argv);
    command = argv;
  } catch (err) {
    if (!(err instanceof RosterError)) throw err;
    // respawn-pane failed: nothing was started, and the pane is the placeholder's or gone.
    await closeWindow(pane);
    return fail(err.message);
  }
  const opened = { pane, pid };
  progress(
    `relaunching ${describe(row)} in ${session} (pane ${pane}): ${argv.map(shq).join(" ")}`,
  );
  /** Null while the pane's command runs; else how it ended, `when` it did, and its last lines. */
  const gone = async (when = ""): Promise<string | null> => {
    let state = await paneState(opened.pane);
    if (state !== null && !state.dead) return null;
    // tmux may see the exit before it has read the pane's last output and the status: a
    // moment more, then look again, until the status is there (a killed command has none: at
    // most two seconds).
    for (let i = 0; state !== null && (i === 0 || state.status === null) && i < 7; i++) {
      await sleep(300);
      state = await paneState(opened.pane);
    }
    const lines = state === null ? "" : await lastLines(opened.pane);
    const status = state?.status ?? null;
    return `exited${status === null ? "" : ` with status ${status}`}${when}` +
      (lines ? `: ${lines}` : "");
  };
  // Without its first prompt, nothing registers it: it is up when its process keeps running.
  if (firstPrompt !== null && !firstPrompt.sent) {
    const up = await upWithoutHook(place, c, opened, timing, gone, fail);
    return up.ok ? { ...up, restored: { ...up.restored, noPlan, firstPrompt } } : up;
  }
  const deadline = Date.now() + timing.registerMs;
  let successor: Row | null = null;
  for (;;) {
    successor = findSuccessor(place, row, since);
    if (successor !== null) break;
    const exited = await gone();
    if (exited !== null) {
      await closeWindow(opened.pane);
      return fail(exited);
    }
    if (Date.now() > deadline) {
      const lines = await lastLines(opened.pane);
      await closeWindow(opened.pane);
      return fail(
        `its start hook did not register it within ${timing.registerMs / 1000} s` +
          (lines ? `: ${lines}` : ""),
      );
    }
    await sleep(250);
  }
  progress(`registered ${describe(row)} as pid ${successor.session_pid}`);
  await sleep(timing.settleMs);
  const within = ` within ${timing.settleMs / 1000} s of registering`;
  const exited = await gone(within);
  if (exited !== null || !stillRunning(place, successor)) {
    const why = exited ?? `pid ${successor.session_pid} exited${within}`;
    await closeWindow(opened.pane);
    return fail(why);
  }
  await keepWindow(opened.pane);
  await resumeSession(place.home, place.host, place.judge, { path: row.path }, {
    pid: successor.session_pid!,
    start_token: successor.start_token,
    session_id: successor.session_id,
  });
  // Released before the relaunch when its continue went as the first prompt.
  if (plan !== null && firstPrompt === null) {
    plan = await releasePlan(place.ledger, place.judge, c.key, opened.pane);
  }
  clearAttempts(place.dir, c.key);
  return {
    ok: true,
    command: argv,
    restored: {
      successor,
      predecessor: row,
      successorPid: successor.session_pid!,
      pane: opened.pane,
      openedMs: since,
      plan,
      noPlan,
      firstPrompt,
    },
  };
}

const notSent = (reason: string): ContinueResult => ({
  sent: false,
  reason,
  continuation_id: null,
});

/** A verdict that sends no continue, as the report gives it. */
function verdictReason(v: Decision): string {
  const detail = "detail" in v && v.detail ? ` (${v.detail})` : "";
  return `${v.kind}: ${"reason" in v ? v.reason : ""}${detail}`;
}

/**
 * One claiming continuation-check of the restore's key for the session in `pane`: the rules
 * decide, on facts roster gathers itself (the pane read by roster, per pane: a key in another
 * pane, the one `roster restore` was typed in, is not this one's; any key into this pane since
 * restore opened it, `openedMs`, is a person at it).
 */
async function claimFor(
  place: Place,
  plan: Plan,
  pane: string,
  sessionId: string | null,
  openedMs: number,
): Promise<CheckResult> {
  return await checkContinuation({
    dir: place.ledger,
    home: place.home,
    key: plan.key,
    judge: freshJudge(place.judge),
    claim: true,
    planToken: plan.token,
    note: () => {},
    facts: {
      ack_resumed: true,
      session_id: sessionId,
      pane_key: pane,
      last_entry_id: null,
      idle: true,
      pending_messages: 0,
      prompt_open: false,
      editor_text: null,
      user_active: false,
      watchdog_pid: null,
    },
    look: (f) => withPaneFacts(f, readPaneFacts(pane, Date.now(), openedMs)),
  });
}

/**
 * The continue of a harness whose hooks run only from its first prompt (Codex): no hook of a
 * relaunch could say it is idle before a turn is sent, so the continue is that first turn, the
 * resume command's prompt, which the harness sends itself once the session is loaded (its own
 * readiness stands in for the idle fact). It is claimed BEFORE the relaunch, under the same
 * rules as any, for the pane just opened (nothing runs in it yet) and the plan released with
 * it: from the claim on it is spent, whatever becomes of the relaunch, so two restores, or a
 * retry of one that failed, never send it twice (at most once beats at least once).
 */
async function continueAsPrompt(
  place: Place,
  c: Candidate,
  pane: string,
  openedMs: number,
  timing: Timing,
): Promise<{ result: ContinueResult; message: string | null }> {
  const released = await releasePlan(place.ledger, place.judge, c.key, pane);
  const deadline = Date.now() + timing.continueMs;
  for (;;) {
    const result = await claimFor(place, released, pane, c.row.session_id, openedMs);
    const v = result.verdict;
    if (v.kind === "dispatch" && result.claimed) {
      const { id, message } = result.claimed;
      return { result: { sent: true, reason: null, continuation_id: id }, message };
    }
    // Spacing after another dispatch, or the lock busy: soon.
    if (v.kind === "wait" && Date.now() < deadline) {
      await sleep(Math.max(200, Math.min(v.until - Date.now(), deadline - Date.now())));
      continue;
    }
    return { result: notSent(verdictReason(v)), message: null };
  }
}

/**
 * A harness whose start hook runs only at a session's first prompt (Codex), relaunched without
 * one: nothing registers it, so it is up when the process restore started still runs after the
 * settle time; that process is the successor the old record is linked to.
 */
async function upWithoutHook(
  place: Place,
  c: Candidate,
  opened: { pane: string; pid: number },
  timing: Timing,
  gone: (when?: string) => Promise<string | null>,
  fail: (reason: string) => RelaunchResult,
): Promise<RelaunchResult> {
  await sleep(timing.settleMs);
  const exited = await gone(` within ${timing.settleMs / 1000} s`);
  const probe = place.judge.probe(opened.pid, true);
  if (exited !== null || probe.kind !== "exists" || probe.info.zombie) {
    await closeWindow(opened.pane);
    return fail(exited ?? `pid ${opened.pid} exited within ${timing.settleMs / 1000} s`);
  }
  await keepWindow(opened.pane);
  await resumeSession(place.home, place.host, place.judge, { path: c.row.path }, {
    pid: opened.pid,
    start_token: probe.info.startToken,
    session_id: c.row.session_id,
  });
  clearAttempts(place.dir, c.key);
  return {
    ok: true,
    command: c.command!,
    restored: {
      successor: null,
      predecessor: c.row,
      successorPid: opened.pid,
      pane: opened.pane,
      openedMs: Date.now(),
      plan: null,
      noPlan: null,
      firstPrompt: null,
    },
  };
}

/** A session in words for a progress line: "claude 123 (0199a-b)". */
export function describe(row: Pick<Row, "agent" | "session_pid" | "session_id">): string {
  return `${row.agent || "session"} ${row.session_pid}` +
    (row.session_id ? ` (${row.session_id})` : "");
}

/** What became of a restored session's one continue. */
export interface ContinueResult {
  sent: boolean;
  reason: string | null;
  continuation_id: string | null;
}

/**
 * Pure: whether a session's hooks record activity (`roster activity` in its recipes), told by
 * its record: a hook of it has said what it was doing at least once.
 */
export function recordsActivity(row: Row): boolean {
  return typeof row.activity === "string" || typeof row.activity_at === "string";
}

/** What the successor's activity says of the continue now. */
export type IdleState =
  | { kind: "idle" }
  /** Not yet: look again. */
  | { kind: "wait"; why: string }
  /** Never: its hooks cannot say. */
  | { kind: "never"; why: string };

/**
 * Pure: the successor's activity as its own hooks recorded it (`activity`, written by
 * `roster activity` into its own record, null before any hook said). Idle only when the
 * successor itself said so: a fresh record carries nothing of the predecessor's. With no word
 * from it yet, it waits only when the predecessor's hooks recorded activity (the same recipes
 * run in the successor); a predecessor that never recorded any says its hooks cannot tell.
 */
export function idleState(predecessor: Row, now: Row): IdleState {
  const v = now.activity;
  if (v === "idle") return { kind: "idle" };
  if (typeof v === "string") return { kind: "wait", why: `the session is ${v}` };
  if (recordsActivity(predecessor)) {
    return { kind: "wait", why: "the session has not yet said what it is doing" };
  }
  return {
    kind: "never",
    why: "its hooks record no activity, so roster cannot tell when it is idle",
  };
}

/** The successor's row as it is now, by its path; null when it is gone. */
function rowAt(place: Place, path: string): Row | null {
  let found: Row | null = null;
  forEachRow(place.home, freshJudge(place.judge), (r) => {
    if (r.path === path) found = r;
  });
  return found;
}

/**
 * Pure: whether the session's hooks have said anything since `sinceMs` (a turn started, a
 * tool ran, it went idle again): what the typed continue was submitted by.
 */
export function spokeSince(row: Row, sinceMs: number): boolean {
  const at = row.activity_at;
  return typeof at === "string" && Date.parse(at) >= sinceMs;
}

/**
 * After typing the continue: the session's own hooks must say a turn started. A TUI still busy
 * starting up can read the Enter in one chunk with the text, as part of a paste (seen with
 * Gemini CLI 0.61 under load), leaving the message typed but unsent; then Enter alone again,
 * never the text (on an empty prompt Enter does nothing), until its hooks speak. Not once a
 * person is at the pane (a key into it since, or copy mode): an Enter then would send what they
 * are typing, and the prompt is theirs.
 */
async function confirmSubmitted(
  place: Place,
  path: string,
  pane: string,
  typedAt: number,
): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      const now = rowAt(place, path);
      if (now === null || spokeSince(now, typedAt)) return;
      await sleep(250);
    }
    let facts;
    try {
      facts = readPaneFacts(pane, Date.now(), typedAt);
    } catch (err) {
      if (err instanceof RosterError) return; // the pane cannot be read: press nothing blind
      throw err;
    }
    if (facts.pane_key === null || facts.user_active === true) return;
    await pressEnter(pane);
  }
}

/**
 * Waits for the successor's hooks to report it idle, then decides (continuation-check's
 * rules, the pane read by roster itself) and, on dispatch, types the one continue into its
 * pane. At most once, whatever runs at the same time: the claim decides.
 */
export async function sendContinue(
  place: Place,
  restored: Restored,
  timing: Timing,
): Promise<ContinueResult> {
  const { plan, pane, successor } = restored;
  if (restored.firstPrompt !== null) return restored.firstPrompt;
  if (plan === null || successor === null) {
    return { sent: false, reason: restored.noPlan, continuation_id: null };
  }
  const deadline = Date.now() + timing.continueMs;
  const none = (reason: string): ContinueResult => ({ sent: false, reason, continuation_id: null });
  let last = "the session never reported idle";
  while (Date.now() < deadline) {
    const now = rowAt(place, successor.path);
    if (now === null || !(now.liveness === "alive" || now.reason === "hosted")) {
      return none("the resumed session ended first");
    }
    const state = idleState(restored.predecessor, now);
    if (state.kind === "never") return none(state.why);
    if (state.kind === "wait") {
      last = state.why;
      await sleep(500);
      continue;
    }
    const result = await claimFor(place, plan, pane, now.session_id, restored.openedMs);
    const v = result.verdict;
    if (v.kind === "dispatch" && result.claimed) {
      const typedAt = Date.now();
      await typeInto(pane, result.claimed.message);
      await confirmSubmitted(place, successor.path, pane, typedAt);
      return { sent: true, reason: null, continuation_id: result.claimed.id };
    }
    if (v.kind === "wait") {
      await sleep(Math.max(200, Math.min(v.until - Date.now(), deadline - Date.now())));
      continue;
    }
    if (v.kind === "stop" && v.reason === "not-released") {
      await sleep(500);
      continue;
    }
    return none(verdictReason(v));
  }
  return none(`gave up after ${timing.continueMs / 1000} s: ${last}`);
}
