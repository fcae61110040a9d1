/**
 * The continuation commands: `continuation-plan` writes a plan from a registry row,
 * `continuation-release` releases it, and `continuation-check` gives the verdict for a
 * resumed session and, with `--claim`, makes it at most once under `dispatch.lock`.
 * Validation and output live here; the decision is src/continuation/rules.ts, the files
 * src/continuation/ledger.ts.
 */
import { parseDuration } from "../duration.ts";
import { pause, pauseSetting } from "../pause.ts";
import { RosterError, UsageError } from "../errors.ts";
import { appendAudit, auditHasClaim, readAuditText } from "../continuation/audit.ts";
import { exists } from "../continuation/files.ts";
import {
  claimPath,
  claimUnfinished,
  createClaim,
  createSkip,
  defaultLedger,
  ensureLedger,
  readClaim,
  readOutcomeId,
  readPlan,
  readSkip,
  readState,
  writeLastDispatch,
  writeOutcome,
  writePlan,
} from "../continuation/ledger.ts";
import { acquireDispatchLock, type HeldLock } from "../continuation/lock.ts";
import { isValidKey, KEY_RULE, type Plan } from "../continuation/schema.ts";
import { dispatchMessage } from "../continuation/message.ts";
import {
  decide,
  EXIT_CODES,
  type Facts,
  mayWriteSkip,
  parseFacts,
  type Situation,
  type Verdict,
} from "../continuation/rules.ts";
import type { Judge } from "../registry/liveness.ts";
import { parsePid } from "../registry/owner.ts";
import { hostDirName, type Liveness, type Row } from "../registry/record.ts";
import { readRows } from "../registry/registry.ts";
import { randomHex } from "../registry/store.ts";
import type { Parsed } from "./args.ts";
import type { Context } from "./context.ts";

const MAX_FACTS_BYTES = 64 * 1024;
const MAX_MARKER = 4096;
/** How long a check waits for a live lock holder before answering wait. */
const CHECK_LOCK_PATIENCE_MS = 500;
/** The `until` of a wait for the lock: soon. */
const LOCK_RETRY_MS = 1_000;
/** plan and release are not on a hook's hot path: they wait longer. */
const ADMIN_LOCK_PATIENCE_MS = 10_000;
export const DEFAULT_DEADLINE = "1h";
export const DEFAULT_SPACING = "5s";

// ---------------------------------------------------------------------------------------
// Flags

function requireKey(args: Parsed): string {
  const key = args.get("key");
  if (key === undefined) {
    throw new UsageError(`Missing --key: expected a continuation key (${KEY_RULE})`);
  }
  if (!isValidKey(key)) {
    throw new UsageError(
      `Invalid --key: expected ${KEY_RULE}, got ${JSON.stringify(key.slice(0, 200))}`,
    );
  }
  return key;
}

function ledgerDir(ctx: Context, args: Parsed): string {
  const flag = args.get("ledger");
  if (flag === "") {
    throw new UsageError("Invalid --ledger: expected a directory path, got an empty string");
  }
  return flag ?? defaultLedger(ctx.home);
}

function readCapped(read: (buf: Uint8Array) => number | null, what: string): string {
  const buf = new Uint8Array(MAX_FACTS_BYTES + 1);
  let off = 0;
  while (off < buf.length) {
    const n = read(buf.subarray(off));
    if (n === null || n === 0) break;
    off += n;
  }
  if (off > MAX_FACTS_BYTES) throw new UsageError(`Invalid --facts: larger than 64 KiB: ${what}`);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, off));
  } catch {
    throw new UsageError(`Invalid --facts: ${what} is not valid UTF-8`);
  }
}

/**
 * Reads a facts file. Its type is judged before it is opened (a link by what it points at):
 * opening a FIFO with no writer blocks for ever, and a hook that hangs holds up its harness.
 * The file opened must be the file judged, and at most 64 KiB of it is read.
 */
function readFactsFile(path: string): string {
  const unreadable = (err: unknown) =>
    new UsageError(
      `Invalid --facts: ${
        err instanceof Deno.errors.NotFound ? "no such file" : "cannot be read"
      }: ${path}`,
    );
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
    if (info.isSymlink) info = Deno.statSync(path);
  } catch (err) {
    throw unreadable(err);
  }
  if (!info.isFile) {
    throw new UsageError(
      `Invalid --facts: not a regular file: ${path} (expected a regular file, or - for stdin)`,
    );
  }
  if (info.size > MAX_FACTS_BYTES) {
    throw new UsageError(`Invalid --facts: larger than 64 KiB: ${path}`);
  }
  try {
    using file = Deno.openSync(path, { read: true });
    const opened = file.statSync();
    if (!opened.isFile || opened.ino !== info.ino || opened.dev !== info.dev) {
      throw new UsageError(`Invalid --facts: the file changed while being opened: ${path}`);
    }
    return readCapped((b) => file.readSync(b), path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw unreadable(err);
  }
}

/** `--facts FILE` or `-` (stdin): a JSON object. No flag: no facts at all. */
export function readFacts(args: Parsed): Facts {
  const source = args.get("facts");
  if (source === undefined) return {};
  if (source === "") throw new UsageError('Invalid --facts: expected FILE or -, got ""');
  const text = source === "-"
    ? readCapped((b) => Deno.stdin.readSync(b), "stdin")
    : readFactsFile(source);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`Invalid --facts: expected a JSON object, got invalid JSON`);
  }
  const parsed = parseFacts(value);
  if ("problem" in parsed) throw new UsageError(`Invalid --facts: ${parsed.problem}`);
  return parsed.facts;
}

// ---------------------------------------------------------------------------------------
// Output

type Printed = {
  kind: Verdict["kind"];
  reason?: string;
  class?: string;
  until?: string;
  continuation_id?: string;
  message?: string;
  would?: Printed;
};

function toPrinted(v: Verdict, claimed?: { id: string; message: string }): Printed {
  switch (v.kind) {
    case "dispatch":
      return claimed
        ? { kind: v.kind, continuation_id: claimed.id, message: claimed.message }
        : { kind: v.kind };
    case "wait":
      return { kind: v.kind, reason: v.reason, until: new Date(v.until).toISOString() };
    case "skip":
      return {
        kind: v.kind,
        reason: v.reason,
        class: v.class,
        ...(v.would ? { would: toPrinted(v.would) } : {}),
      };
    case "stop":
      return { kind: v.kind, reason: v.reason };
    case "vetoed":
      return v.class === null
        ? { kind: v.kind, reason: v.reason }
        : { kind: v.kind, reason: v.reason, class: v.class };
  }
}

function oneLine(p: Printed, nested = false): string {
  switch (p.kind) {
    case "dispatch":
      return p.continuation_id
        ? `dispatch: continuation ${p.continuation_id} claimed`
        : nested
        ? "dispatch"
        : "dispatch (not claimed: pass --claim to claim it)";
    case "wait":
      return `wait until ${p.until} (${p.reason})`;
    case "skip":
      return `skip (${p.class}): ${p.reason}` +
        (p.would ? `; dry run would: ${oneLine(p.would, true)}` : "");
    case "stop":
      return `stop: ${p.reason}`;
    case "vetoed":
      return `vetoed: ${p.reason}` + (p.class ? ` (${p.class})` : "");
  }
}

// ---------------------------------------------------------------------------------------
// continuation-check

function livenessOfPid(judge: Judge, pid: number): Liveness {
  const p = judge.probe(pid, true);
  if (p.kind === "unsupported") return "unknown";
  return p.kind === "exists" && !p.info.zombie ? "alive" : "dead";
}

interface Read {
  situation: Situation;
  /** What was wrong with a damaged plan, for a note on stderr. */
  planProblem: string | null;
}

/** Reads the ledger and judges the owner and watchdog: everything decide() needs. */
function observe(
  dir: string,
  key: string,
  facts: Facts,
  judge: Judge,
  expectedToken: string | null,
): Read {
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
      owner: plan === null ? null : judge.judge(plan.session, true).liveness,
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
 * The claim pass, under dispatch.lock: decide again from the files as they are now, then
 * make a dispatch or a skip durable. Returns the final verdict and, for a dispatch, the
 * continuation id and message.
 */
async function claimUnderLock(
  dir: string,
  key: string,
  facts: Facts,
  judge: Judge,
  expectedToken: string | null,
  note: (message: string) => void,
): Promise<{ verdict: Verdict; claimed?: { id: string; message: string } }> {
  const attempt = await acquireDispatchLock(dir, judge, CHECK_LOCK_PATIENCE_MS);
  if ("busy" in attempt) {
    return { verdict: { kind: "wait", until: Date.now() + LOCK_RETRY_MS, reason: "locked" } };
  }
  const lock: HeldLock = attempt.held;
  try {
    pause("after-lock", dir);
    const { situation: s } = observe(dir, key, facts, judge, expectedToken);
    const verdict = decide(s);
    if (s.mode === "dry-run" || s.plan === null) return { verdict };
    const plan = s.plan;
    const at = new Date(s.now).toISOString();
    if (verdict.kind === "stop" && verdict.reason === "claimed") {
      // Claimed since the first look. Its dispatcher held this lock until done, so an
      // outcome still missing now means that dispatcher died: finish what it left.
      await bestEffort(() => recoverClaimUnderLock(dir, key), key, note);
      return { verdict };
    }
    if (verdict.kind === "dispatch") {
      const id = randomHex(12);
      if (!createClaim(dir, { key, token: plan.token, continuation_id: id, pid: Deno.pid, at })) {
        return { verdict: { kind: "stop", reason: "claimed" } };
      }
      // The dispatch is durable from here. A crash before the audit line below leaves a claim
      // without one: the next claiming check of this key appends it (recoverClaimUnderLock).
      pause("after-claim", dir);
      appendAudit(dir, { event: "claim", key, token: plan.token, continuation_id: id });
      writeLastDispatch(dir, s.now);
      pause("before-outcome", dir);
      writeOutcome(dir, key, {
        outcome: "dispatched",
        continuation_id: id,
        at,
        key,
        token: plan.token,
        pid: Deno.pid,
      });
      return { verdict, claimed: { id, message: dispatchMessage(plan, id) } };
    }
    // A skip is final, so only for the released plan the first decision saw (mayWriteSkip).
    if (
      verdict.kind === "skip" && mayWriteSkip(plan, expectedToken) && !s.claimed &&
      !exists(claimPath(dir, key))
    ) {
      const record = {
        class: verdict.class,
        reason: verdict.reason,
        token: plan.token,
        pid: Deno.pid,
        at,
      };
      if (createSkip(dir, key, record)) {
        appendAudit(dir, {
          event: "skip",
          key,
          token: plan.token,
          class: verdict.class,
          reason: verdict.reason,
        });
        writeOutcome(dir, key, {
          outcome: "skipped",
          continuation_id: null,
          at,
          key,
          token: plan.token,
          class: verdict.class,
          reason: verdict.reason,
        });
      }
    }
    return { verdict };
  } finally {
    lock.release();
  }
}

/**
 * Completes a claim whose dispatcher died before writing the outcome; the caller holds
 * dispatch.lock. A dispatcher holds that lock from before the claim until after the outcome,
 * so under it a claim without a matching outcome is a dead dispatcher's. Appends the claim's
 * audit line, marked `recovered`, when the dispatcher died before appending it, then writes
 * the outcome `lost`: a dispatch is printed only after its outcome is written, so this one
 * never was, and it never will be (at most once). Idempotent: the outcome ends it.
 */
function recoverClaimUnderLock(dir: string, key: string) {
  const claim = readClaim(dir, key);
  // A claim roster cannot read names no continuation: it still counts, but there is
  // nothing to audit it by.
  if (claim === null || !claimUnfinished(claim, readOutcomeId(dir, key))) return;
  if (!auditHasClaim(readAuditText(dir), claim.continuation_id)) {
    appendAudit(dir, {
      event: "claim",
      key,
      token: claim.token,
      continuation_id: claim.continuation_id,
      recovered: true,
    });
  }
  writeOutcome(dir, key, {
    outcome: "lost",
    continuation_id: claim.continuation_id,
    at: new Date().toISOString(),
    key,
    token: claim.token,
    pid: Deno.pid,
    claim_pid: claim.pid,
    recovered: true,
  });
}

/** Recovery only completes a record: whatever it meets, the verdict stands, with a note. */
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

/**
 * For a claiming check that found the key claimed: when the claim has no outcome yet, take
 * the lock (reclaiming it from a dead dispatcher) and recover. Cheap when all is well: two
 * small reads and no lock. A lock held by a live owner (perhaps the dispatcher, still at
 * work) is left to it: the next check tries again.
 */
async function recoverClaim(dir: string, key: string, judge: Judge) {
  const claim = readClaim(dir, key);
  if (claim === null || !claimUnfinished(claim, readOutcomeId(dir, key))) return;
  const attempt = await acquireDispatchLock(dir, judge, CHECK_LOCK_PATIENCE_MS);
  if ("busy" in attempt) return;
  try {
    recoverClaimUnderLock(dir, key);
  } finally {
    attempt.held.release();
  }
}

export async function check(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const facts = readFacts(args);
  const dir = ledgerDir(ctx, args);
  pauseSetting();
  const judge = await ctx.judge();
  const first = observe(dir, key, facts, judge, null);
  if (first.planProblem !== null) {
    ctx.err(`roster: note: the plan of ${key} is damaged (${first.planProblem})`);
  }
  const note = (message: string) => ctx.err(message);
  let verdict = decide(first.situation);
  let claimed: { id: string; message: string } | undefined;
  // Only a released plan can be claimed or skipped. Without one there is nothing to write
  // (and perhaps no ledger), and a skip decided before the release (rule 1 comes first) must
  // not decide the key for good: the first answer stands, and no lock is taken for it.
  const plan = first.situation.plan;
  const writes = verdict.kind === "dispatch"
    ? plan !== null
    : verdict.kind === "skip"
    ? mayWriteSkip(plan, null)
    : false;
  const claiming = args.has("claim") && first.situation.mode !== "dry-run";
  if (claiming && writes) {
    // Dispatch and skip are made durable only from a decision taken again under the lock.
    ({ verdict, claimed } = await claimUnderLock(
      dir,
      key,
      facts,
      judge,
      first.situation.plan?.token ?? null,
      note,
    ));
  } else if (claiming && verdict.kind === "stop" && verdict.reason === "claimed") {
    await bestEffort(() => recoverClaim(dir, key, judge), key, note);
  }
  const printed = toPrinted(verdict, claimed);
  if (ctx.json) ctx.printJson(printed);
  else ctx.out(oneLine(printed));
  return EXIT_CODES[verdict.kind];
}

// ---------------------------------------------------------------------------------------
// continuation-plan and continuation-release

/** Runs `fn` holding dispatch.lock, so plan changes never interleave with a claim. */
async function underLock<T>(dir: string, judge: Judge, fn: () => T): Promise<T> {
  const attempt = await acquireDispatchLock(dir, judge, ADMIN_LOCK_PATIENCE_MS);
  if ("busy" in attempt) {
    throw new RosterError(
      `Could not take the dispatch lock in 10 s: held by pid ${attempt.busy.pid}: ${dir}`,
    );
  }
  try {
    return fn();
  } finally {
    attempt.held.release();
  }
}

/** The registry row of `pid`: this host's when several hosts have one. */
function findRow(ctx: Context, judge: Judge, pid: number): Row {
  const rows = readRows(ctx.home, judge).filter((r) => r.session_pid === pid);
  const here = rows.filter((r) => r.host === ctx.host || r.host === hostDirName(ctx.host));
  const pick = here.length === 1 ? here : rows;
  if (pick.length === 0) {
    throw new UsageError(
      `Invalid --session: no record for pid ${pid} in ${ctx.home} (see roster list --all)`,
    );
  }
  if (pick.length > 1) {
    throw new UsageError(`Invalid --session: pid ${pid} has records on several hosts`);
  }
  const row = pick[0];
  if (row.malformed) {
    throw new UsageError(
      `Invalid --session: the record of pid ${pid} is malformed (${row.detail}): ${row.path}`,
    );
  }
  return row;
}

function refuseDecided(dir: string, key: string) {
  if (exists(claimPath(dir, key))) {
    throw new UsageError(`Invalid --key: ${key} is already claimed; plan under a new key`);
  }
  if (readSkip(dir, key) !== null) {
    throw new UsageError(`Invalid --key: ${key} is already skipped; plan under a new key`);
  }
}

function printPlan(ctx: Context, plan: Plan, verb: string) {
  if (ctx.json) ctx.printJson(plan);
  else {
    ctx.out(
      `${verb} ${plan.key} for pid ${plan.session.session_pid} (${plan.state}` +
        (plan.deadline ? `, deadline ${plan.deadline}` : "") + ")",
    );
  }
}

export async function plan(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const sessionFlag = args.get("session");
  if (sessionFlag === undefined) {
    throw new UsageError("Missing --session: expected the interrupted session's PID");
  }
  const pid = parsePid(sessionFlag, "--session");
  const deadlineMs = parseDuration(args.get("deadline") ?? DEFAULT_DEADLINE, "--deadline");
  const nb = args.get("not-before");
  const notBeforeMs = nb === undefined ? null : parseDuration(nb, "--not-before", true);
  const spacingMs = parseDuration(args.get("spacing") ?? DEFAULT_SPACING, "--spacing", true);
  if (notBeforeMs !== null && notBeforeMs >= deadlineMs) {
    throw new UsageError(
      "Invalid --not-before: must be shorter than --deadline, or the plan could never dispatch",
    );
  }
  const marker = args.get("frozen-marker") ?? null;
  if (marker !== null && marker.length > MAX_MARKER) {
    throw new UsageError(`Invalid --frozen-marker: longer than ${MAX_MARKER} characters`);
  }
  const dir = ledgerDir(ctx, args);
  const judge = await ctx.judge();
  const row = findRow(ctx, judge, pid);
  const now = Date.now();
  const iso = (ms: number) => new Date(now + ms).toISOString();
  const value: Plan = {
    schema: 1,
    key,
    token: randomHex(16),
    state: args.has("release") ? "released" : "planned",
    session: {
      session_pid: pid,
      start_token: row.start_token,
      boot_id: row.boot_id,
      host: row.host!,
      session_id: row.session_id,
      agent: row.agent,
      runtime: row.runtime,
      cwd: row.cwd,
      tmux_pane: row.tmux_pane,
    },
    frozen_marker: marker,
    // Roster sees the interruption only as a dead owner: at or before now.
    interrupted_at: row.liveness === "dead" ? new Date(now).toISOString() : null,
    cause: (args.get("cause") ?? null) as Plan["cause"],
    tool_calls: [],
    not_before: notBeforeMs === null ? null : iso(notBeforeMs),
    deadline: iso(deadlineMs),
    spacing_ms: spacingMs,
  };
  ensureLedger(dir);
  await underLock(dir, judge, () => {
    refuseDecided(dir, key);
    writePlan(dir, value);
  });
  printPlan(ctx, value, "Planned");
  return 0;
}

export async function release(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const dir = ledgerDir(ctx, args);
  const judge = await ctx.judge();
  if (readPlan(dir, key) === null) {
    throw new UsageError(`Invalid --key: no plan for ${key} in ${dir}`);
  }
  ensureLedger(dir);
  const released = await underLock(dir, judge, () => {
    const read = readPlan(dir, key);
    if (read === null) throw new UsageError(`Invalid --key: no plan for ${key} in ${dir}`);
    if (!read.ok) {
      throw new RosterError(`Could not release: the plan is damaged (${read.problem}): ${key}`);
    }
    const next: Plan = { ...read.plan, state: "released" };
    if (read.plan.state !== "released") writePlan(dir, next);
    return next;
  });
  printPlan(ctx, released, "Released");
  return 0;
}
