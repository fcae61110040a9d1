/**
 * The continuation ledger: one directory (`<home>/continuations/`, 0700) holding, per key K,
 * `K.plan.json`, `K.claim`, `K.skip` and `K.outcome`, and globally `dispatch.lock`,
 * `.last-dispatch`, `config.json`, `hold` and `audit.ndjson`. Reads go through the store's
 * safe reader (no symlinks, FIFOs or devices; size-capped; ours only). Plans, outcomes and
 * `.last-dispatch` are replaced atomically; claims, skips and the lock are created
 * exclusively from fully written temp files, so no reader ever sees a torn one.
 */
import { ioError, RosterError } from "../errors.ts";
import type { Judge } from "../registry/liveness.ts";
import { isValidPid, parseTime } from "../registry/record.ts";
import {
  createExclusive,
  ensurePrivateDir,
  join,
  randomHex,
  readSmallFile,
  withLock,
  writeAtomic,
} from "../registry/store.ts";
import type { Mode } from "./rules.ts";

/** A key names files, never a path: letters, digits, `.`, `_`, `-`; not starting with a dot. */
export const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
export const KEY_RULE = "1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot";

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export const LOCK_FILE = "dispatch.lock";
export const LAST_DISPATCH_FILE = ".last-dispatch";
export const CONFIG_FILE = "config.json";
export const HOLD_FILE = "hold";
export const AUDIT_FILE = "audit.ndjson";
export const PLAN_SCHEMA = 1;

export const defaultLedger = (home: string) => join(home, "continuations");
export const planPath = (dir: string, key: string) => join(dir, `${key}.plan.json`);
export const claimPath = (dir: string, key: string) => join(dir, `${key}.claim`);
export const skipPath = (dir: string, key: string) => join(dir, `${key}.skip`);
export const outcomePath = (dir: string, key: string) => join(dir, `${key}.outcome`);

// ---------------------------------------------------------------------------------------
// Schemas (pure)

/** The interrupted session, as its registry row showed it (extra row fields are ignored). */
export interface PlanSession {
  session_pid: number;
  start_token: string | null;
  boot_id: string | null;
  host: string;
  session_id: string | null;
  agent: string | null;
  runtime: string | null;
  cwd: string | null;
  tmux_pane: string | null;
}

export interface ToolCall {
  id: string;
  name: string;
}

export type PlanState = "planned" | "released";
export type Cause = "signal" | "hard";

export interface Plan {
  schema: 1;
  key: string;
  token: string;
  state: PlanState;
  session: PlanSession;
  frozen_marker: string | null;
  interrupted_at: string | null;
  cause: Cause | null;
  tool_calls: ToolCall[];
  not_before: string | null;
  deadline: string | null;
  spacing_ms: number;
}

export type SkipClass = "process-end" | "veto";

export interface SkipRecord {
  class: SkipClass;
  reason: string;
  token: string | null;
  pid: number;
  at: string;
}

export const MAX_TOOL_CALLS = 1000;
/** Ten years, as for durations: anything larger is a typo. */
const MAX_SPACING_MS = 10 * 365 * 86_400_000;

type Check = (v: unknown) => boolean;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (max = 4096): Check => (v) => typeof v === "string" && v.length <= max;
const nullable = (c: Check): Check => (v) => v === null || c(v);
const time: Check = (v) => typeof v === "string" && parseTime(v) !== null;

function checkFields(
  obj: Record<string, unknown>,
  fields: [string, Check][],
  where = "",
): string | null {
  for (const [name, check] of fields) {
    if (!(name in obj)) return `missing field: ${where}${name}`;
    if (!check(obj[name])) return `invalid field: ${where}${name}`;
  }
  return null;
}

const SESSION_FIELDS: [keyof PlanSession, Check][] = [
  ["session_pid", isValidPid],
  ["start_token", nullable((v) => typeof v === "string" && v.length > 0 && v.length <= 256)],
  ["boot_id", nullable(str())],
  ["host", (v) => typeof v === "string" && v.length > 0 && v.length <= 4096],
  ["session_id", nullable(str())],
  ["agent", nullable(str())],
  ["runtime", nullable(str())],
  ["cwd", nullable(str())],
  ["tmux_pane", nullable(str())],
];

const PLAN_FIELDS: [keyof Plan, Check][] = [
  ["schema", (v) => v === PLAN_SCHEMA],
  ["key", (v) => typeof v === "string" && isValidKey(v)],
  ["token", (v) => typeof v === "string" && v.length > 0 && v.length <= 256],
  ["state", (v) => v === "planned" || v === "released"],
  ["session", isObject],
  ["frozen_marker", nullable(str())],
  ["interrupted_at", nullable(time)],
  ["cause", (v) => v === null || v === "signal" || v === "hard"],
  ["tool_calls", (v) => Array.isArray(v) && v.length <= MAX_TOOL_CALLS],
  ["not_before", nullable(time)],
  ["deadline", nullable(time)],
  [
    "spacing_ms",
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0 && v <= MAX_SPACING_MS,
  ],
];

/** Validates a parsed plan file for key `key`: the plan, or what is wrong with it. */
export function validatePlan(value: unknown, key: string): { plan: Plan } | { problem: string } {
  if (!isObject(value)) return { problem: "not a JSON object" };
  const problem = checkFields(value, PLAN_FIELDS);
  if (problem) return { problem };
  if (value.key !== key) return { problem: `key differs from the file name: ${value.key}` };
  const s = value.session as Record<string, unknown>;
  const sessionProblem = checkFields(s, SESSION_FIELDS, "session.");
  if (sessionProblem) return { problem: sessionProblem };
  const calls: ToolCall[] = [];
  for (const [i, c] of (value.tool_calls as unknown[]).entries()) {
    if (!isObject(c) || !str(256)(c.id) || !str(256)(c.name)) {
      return { problem: `invalid field: tool_calls[${i}] (expected {id, name} strings)` };
    }
    calls.push({ id: c.id as string, name: c.name as string });
  }
  const session = Object.fromEntries(SESSION_FIELDS.map(([n]) => [n, s[n]])) as unknown;
  return {
    plan: {
      schema: PLAN_SCHEMA,
      key,
      token: value.token as string,
      state: value.state as PlanState,
      session: session as PlanSession,
      frozen_marker: value.frozen_marker as string | null,
      interrupted_at: value.interrupted_at as string | null,
      cause: value.cause as Cause | null,
      tool_calls: calls,
      not_before: value.not_before as string | null,
      deadline: value.deadline as string | null,
      spacing_ms: value.spacing_ms as number,
    },
  };
}

export function validateSkip(value: unknown): { skip: SkipRecord } | { problem: string } {
  if (!isObject(value)) return { problem: "not a JSON object" };
  const problem = checkFields(value, [
    ["class", (v) => v === "process-end" || v === "veto"],
    ["reason", (v) => typeof v === "string" && v.length > 0 && v.length <= 256],
    ["token", nullable(str(256))],
    ["pid", isValidPid],
    ["at", time],
  ]);
  if (problem) return { problem };
  return {
    skip: {
      class: value.class as SkipClass,
      reason: value.reason as string,
      token: value.token as string | null,
      pid: value.pid as number,
      at: value.at as string,
    },
  };
}

/** `config.json`: `{mode: "on" | "off" | "dry-run"}`; anything else means off. */
export function parseMode(text: string): Mode {
  try {
    const v = JSON.parse(text);
    if (isObject(v) && (v.mode === "on" || v.mode === "off" || v.mode === "dry-run")) {
      return v.mode;
    }
  } catch { /* fall through: off */ }
  return "off";
}

// ---------------------------------------------------------------------------------------
// Reading

function parseJson(text: string): { value: unknown } | { problem: string } {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { problem: "not valid JSON" };
  }
}

export type PlanRead = { ok: true; plan: Plan } | { ok: false; problem: string } | null;

/** The plan of `key`: valid, damaged (with why), or null when there is none. */
export function readPlan(dir: string, key: string): PlanRead {
  const file = readSmallFile(planPath(dir, key));
  if (file === null) return null;
  if (!file.ok) return { ok: false, problem: file.problem };
  const parsed = parseJson(file.text);
  if ("problem" in parsed) return { ok: false, problem: parsed.problem };
  const checked = validatePlan(parsed.value, key);
  return "problem" in checked ? { ok: false, problem: checked.problem } : {
    ok: true,
    plan: checked.plan,
  };
}

/** Whether anything exists at `path` (any type, even a dangling symlink): fail closed. */
export function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    return true;
  }
}

export type SkipRead = SkipRecord | { damaged: string } | null;

/** The skip record of `key`; an unreadable or damaged one is `{damaged}` (a veto). */
export function readSkip(dir: string, key: string): SkipRead {
  const path = skipPath(dir, key);
  const file = readSmallFile(path);
  if (file === null) return exists(path) ? { damaged: "cannot be read" } : null;
  if (!file.ok) return { damaged: file.problem };
  const parsed = parseJson(file.text);
  if ("problem" in parsed) return { damaged: parsed.problem };
  const checked = validateSkip(parsed.value);
  return "problem" in checked ? { damaged: checked.problem } : checked.skip;
}

/**
 * When the last dispatch happened. A damaged file falls back to its mtime (it was written
 * then), and to now when even that is unknown: spacing fails closed.
 */
export function readLastDispatch(dir: string, now = Date.now()): number | null {
  const path = join(dir, LAST_DISPATCH_FILE);
  const file = readSmallFile(path);
  if (file === null) return exists(path) ? now : null;
  if (file.ok) {
    const parsed = parseJson(file.text);
    if ("value" in parsed && isObject(parsed.value) && typeof parsed.value.at === "string") {
      const t = parseTime(parsed.value.at);
      if (t !== null) return t;
    }
  }
  return file.mtimeMs ?? now;
}

export function readMode(dir: string): Mode {
  const file = readSmallFile(join(dir, CONFIG_FILE));
  return file !== null && file.ok ? parseMode(file.text) : "off";
}

export interface LedgerState {
  plan: PlanRead;
  claimed: boolean;
  skip: SkipRead;
  lastDispatchMs: number | null;
  mode: Mode;
  hold: boolean;
}

/** Everything the rules need from the ledger for one key, read once. */
export function readState(dir: string, key: string, now = Date.now()): LedgerState {
  return {
    plan: readPlan(dir, key),
    claimed: exists(claimPath(dir, key)),
    skip: readSkip(dir, key),
    lastDispatchMs: readLastDispatch(dir, now),
    mode: readMode(dir),
    hold: exists(join(dir, HOLD_FILE)),
  };
}

// ---------------------------------------------------------------------------------------
// Writing

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

export function ensureLedger(dir: string): string {
  return ensurePrivateDir(dir);
}

export function writePlan(dir: string, plan: Plan) {
  writeAtomic(planPath(dir, plan.key), json(plan));
}

export interface ClaimRecord {
  key: string;
  token: string;
  continuation_id: string;
  pid: number;
  at: string;
}

function validateClaim(value: unknown, key: string): ClaimRecord | null {
  if (!isObject(value) || value.key !== key) return null;
  const problem = checkFields(value, [
    ["token", (v) => typeof v === "string" && v.length > 0 && v.length <= 256],
    ["continuation_id", (v) => typeof v === "string" && v.length > 0 && v.length <= 64],
    ["pid", isValidPid],
    ["at", time],
  ]);
  if (problem) return null;
  return {
    key,
    token: value.token as string,
    continuation_id: value.continuation_id as string,
    pid: value.pid as number,
    at: value.at as string,
  };
}

/** The claim of `key`; null when there is none or it cannot be read as one. */
export function readClaim(dir: string, key: string): ClaimRecord | null {
  const file = readSmallFile(claimPath(dir, key));
  if (file === null || !file.ok) return null;
  const parsed = parseJson(file.text);
  return "value" in parsed ? validateClaim(parsed.value, key) : null;
}

/** The continuation id `K.outcome` names; undefined when there is no readable outcome. */
export function readOutcomeId(dir: string, key: string): string | null | undefined {
  const file = readSmallFile(outcomePath(dir, key));
  if (file === null || !file.ok) return undefined;
  const parsed = parseJson(file.text);
  if (!("value" in parsed) || !isObject(parsed.value)) return undefined;
  const id = parsed.value.continuation_id;
  return typeof id === "string" || id === null ? id : undefined;
}

/**
 * Pure: whether a claim was left unfinished. A dispatcher writes the outcome last, and holds
 * the lock from before the claim until after it; so a claim whose outcome does not name it
 * is one whose dispatcher died (or, without the lock, may still be at work).
 */
export function claimUnfinished(claim: ClaimRecord, outcomeId: string | null | undefined) {
  return outcomeId !== claim.continuation_id;
}

/** Pure: whether audit text holds a `claim` line for `continuationId` (torn lines skipped). */
export function auditHasClaim(text: string, continuationId: string): boolean {
  for (const line of text.split("\n")) {
    if (!line.includes(continuationId)) continue;
    try {
      const v = JSON.parse(line);
      if (isObject(v) && v.event === "claim" && v.continuation_id === continuationId) return true;
    } catch { /* a torn line vouches for nothing */ }
  }
  return false;
}

/**
 * The whole audit log as text ("" when there is none). Only ever a regular file (a FIFO
 * would block), and only the file that was checked: this runs on the rare recovery path,
 * where a log of any length must be read.
 */
export function readAuditText(dir: string): string {
  const path = join(dir, AUDIT_FILE);
  let before: Deno.FileInfo;
  try {
    before = Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "";
    throw ioError("Could not read the audit", path, err);
  }
  if (!before.isFile) {
    throw new RosterError(`Could not read the audit: not a regular file: ${path}`);
  }
  try {
    using file = Deno.openSync(path, { read: true });
    const opened = file.statSync();
    if (opened.ino !== before.ino || opened.dev !== before.dev) {
      throw new RosterError(
        `Could not read the audit: the file changed while being opened: ${path}`,
      );
    }
    const chunks: Uint8Array[] = [];
    for (;;) {
      const buf = new Uint8Array(1 << 16);
      const n = file.readSync(buf);
      if (n === null || n === 0) break;
      chunks.push(buf.subarray(0, n));
    }
    const all = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
    let off = 0;
    for (const c of chunks) {
      all.set(c, off);
      off += c.length;
    }
    return new TextDecoder().decode(all);
  } catch (err) {
    throw ioError("Could not read the audit", path, err);
  }
}

/** Creates `K.claim`; false when it already exists (someone else claimed first). */
export function createClaim(dir: string, claim: ClaimRecord): boolean {
  return createExclusive(claimPath(dir, claim.key), json(claim)) !== null;
}

/** Creates `K.skip`, first writer wins; false when one exists. */
export function createSkip(dir: string, key: string, skip: SkipRecord): boolean {
  return createExclusive(skipPath(dir, key), json(skip)) !== null;
}

export function writeOutcome(
  dir: string,
  key: string,
  outcome:
    & { outcome: string; continuation_id: string | null; at: string }
    & Record<
      string,
      unknown
    >,
) {
  writeAtomic(outcomePath(dir, key), json(outcome));
}

export function writeLastDispatch(dir: string, atMs: number) {
  writeAtomic(join(dir, LAST_DISPATCH_FILE), json({ at: new Date(atMs).toISOString() }));
}

/**
 * Appends one JSON line to `audit.ndjson`. The file must be a regular file (never a link,
 * FIFO or device); one write of one short line, so concurrent appenders never interleave.
 */
export function appendAudit(dir: string, event: { event: string } & Record<string, unknown>) {
  const path = join(dir, AUDIT_FILE);
  const line = JSON.stringify({ at: new Date().toISOString(), pid: Deno.pid, ...event }) + "\n";
  let before: Deno.FileInfo | null = null;
  try {
    before = Deno.lstatSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw ioError("Could not audit", path, err);
  }
  if (before !== null && !before.isFile) {
    throw new RosterError(`Could not audit: not a regular file: ${path}`);
  }
  try {
    using file = Deno.openSync(path, { append: true, create: true, mode: 0o600 });
    const opened = file.statSync();
    if (!opened.isFile || (before !== null && opened.ino !== before.ino)) {
      throw new RosterError(`Could not audit: the file changed while being opened: ${path}`);
    }
    const bytes = new TextEncoder().encode(line);
    let off = 0;
    while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
  } catch (err) {
    throw ioError("Could not audit", path, err);
  }
}

/** Every line of the audit log that parses (for tests and tools). */
export function readAudit(dir: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(join(dir, AUDIT_FILE));
  } catch {
    return [];
  }
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------------------
// dispatch.lock

export interface LockOwner {
  pid: number;
  start_token: string | null;
  host: string;
  boot_id: string | null;
  at: string;
  /** Random per lock: inode numbers are reused, so release checks this too. */
  nonce: string;
}

export interface HeldLock {
  path: string;
  /** Removes the lock, only while it is still this one (same inode). */
  release(): void;
}

export type LockAttempt = { held: HeldLock } | { busy: LockOwner };

function validateLockOwner(value: unknown): LockOwner | null {
  if (!isObject(value)) return null;
  const problem = checkFields(value, [
    ["pid", isValidPid],
    ["start_token", nullable((v) => typeof v === "string" && v.length > 0 && v.length <= 256)],
    ["host", (v) => typeof v === "string" && v.length > 0 && v.length <= 4096],
    ["boot_id", nullable(str())],
    ["at", time],
    ["nonce", str(64)],
  ]);
  if (problem) return null;
  return {
    pid: value.pid as number,
    start_token: value.start_token as string | null,
    host: value.host as string,
    boot_id: value.boot_id as string | null,
    at: value.at as string,
    nonce: value.nonce as string,
  };
}

/** The current lock's owner, null when there is no lock; throws when the lock is damaged. */
export function readLockOwner(dir: string): LockOwner | null {
  const path = join(dir, LOCK_FILE);
  const file = readSmallFile(path);
  if (file === null) return null;
  const parsed = file.ok ? parseJson(file.text) : { problem: file.problem };
  const owner = "value" in parsed ? validateLockOwner(parsed.value) : null;
  if (owner === null) {
    const why = "problem" in parsed ? parsed.problem : "not a lock record";
    throw new RosterError(
      `The dispatch lock is damaged (${why}): remove it once no roster runs: ${path}`,
    );
  }
  return owner;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** This process as a lock owner, with its own start token as the backend reads it. */
export function selfOwner(judge: Judge): LockOwner {
  const probe = judge.probe(Deno.pid, true);
  return {
    pid: Deno.pid,
    start_token: probe.kind === "exists" ? probe.info.startToken : null,
    host: judge.here.host,
    boot_id: judge.here.bootId,
    at: new Date().toISOString(),
    nonce: randomHex(16),
  };
}

/**
 * One attempt at a lock held by someone else: under the ledger's advisory lock (so two
 * reclaimers never race each other), re-read it and remove it when roster's liveness says
 * its owner is dead, auditing the reclaim. Returns the live owner, or null when it is gone.
 */
async function reclaimIfDead(dir: string, judge: Judge): Promise<LockOwner | null> {
  const path = join(dir, LOCK_FILE);
  return await withLock(dir, () => {
    const owner = readLockOwner(dir);
    if (owner === null) return null;
    const verdict = judge.judge({
      session_pid: owner.pid,
      start_token: owner.start_token,
      host: owner.host,
      boot_id: owner.boot_id,
    }, true);
    if (verdict.liveness !== "dead") return owner;
    // Only the owner removes a lock of its own, and that owner is dead; other reclaimers
    // wait for this advisory lock; acquirers only link. So this is still the file judged.
    try {
      Deno.removeSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw ioError("Could not reclaim", path, err);
      return null;
    }
    appendAudit(dir, { event: "lock-reclaim", owner, owner_reason: verdict.reason });
    return null;
  });
}

/**
 * Takes `dispatch.lock`: a hard link of a fully written temp file holding this process's
 * pid and start token. A lock whose owner is dead is reclaimed (and audited); a live (or
 * unknown) owner is waited for at most `patienceMs`, then reported as busy.
 */
export async function acquireDispatchLock(
  dir: string,
  judge: Judge,
  patienceMs: number,
): Promise<LockAttempt> {
  const path = join(dir, LOCK_FILE);
  const self = selfOwner(judge);
  const me = JSON.stringify(self, null, 2) + "\n";
  const giveUp = Date.now() + patienceMs;
  for (let spins = 0;; spins++) {
    if (spins > 10_000) throw new RosterError(`Could not take the dispatch lock: ${path}`);
    const created = createExclusive(path, me);
    if (created !== null) {
      return {
        held: {
          path,
          release() {
            try {
              const info = Deno.lstatSync(path);
              if (info.ino !== created.ino || info.dev !== created.dev) return;
              if (readLockOwner(dir)?.nonce === self.nonce) Deno.removeSync(path);
            } catch { /* already gone, or no longer ours */ }
          },
        },
      };
    }
    const owner = await reclaimIfDead(dir, judge);
    if (owner === null) continue;
    if (Date.now() >= giveUp) return { busy: owner };
    await sleep(15 + Math.floor(Math.random() * 20));
  }
}
