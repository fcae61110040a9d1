/**
 * The ledger's file formats, pure: what a plan, claim, skip, outcome, lock and audit line hold,
 * and validation of what was read back. A file that does not validate is never trusted; what
 * that means (no plan, a veto, an error) is decided by the reader in ledger.ts and lock.ts.
 */
import type { ProcessIdentity } from "../identity/identity.ts";
import { isValidPid } from "../identity/pid.ts";
import { parseTime } from "../time.ts";
import type { Mode } from "./rules.ts";

/** A key names files, never a path: letters, digits, `.`, `_`, `-`; not starting with a dot. */
const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
export const KEY_RULE = "1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot";

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

const PLAN_SCHEMA = 1;
export const MAX_TOOL_CALLS = 1000;
/** Ten years, as for durations: anything larger is a typo. */
const MAX_SPACING_MS = 10 * 365 * 86_400_000;

/** The interrupted session, as its registry row showed it (extra row fields are ignored). */
interface PlanSession extends ProcessIdentity {
  // machine_id and pid_ns stay optional: plans written by other tools may lack them.
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

type PlanState = "planned" | "released";
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
  /** Optional (older plans lack them): the place in a crash loop, and the most allowed. */
  chain?: number;
  chain_limit?: number;
}

/** A plan's chain limit when it names none. */
export const DEFAULT_CHAIN_LIMIT = 3;

/** `declined`: the resumed session's hook gave up (continuation-decline). */
export type SkipClass = "process-end" | "veto" | "declined";

export interface SkipRecord {
  class: SkipClass;
  reason: string;
  token: string | null;
  pid: number;
  at: string;
}

export interface ClaimRecord {
  key: string;
  token: string;
  continuation_id: string;
  pid: number;
  at: string;
  /** The message handed to the agent (optional: older claims lack it). */
  message?: string;
}

/**
 * `dispatch.lock`'s owner: a process identity under the name `pid` (the file's format), with
 * its machine and pid namespace, since a lock taken inside a container is not ours to judge.
 */
export interface LockOwner extends Omit<ProcessIdentity, "session_pid"> {
  pid: number;
  at: string;
  /** Random per lock: inode numbers are reused, so release checks this too. */
  nonce: string;
}

// ---------------------------------------------------------------------------------------
// Field checks

type Check = (v: unknown) => boolean;
type Fields<T> = [keyof T & string, Check][];

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (max = 4096): Check => (v) => typeof v === "string" && v.length <= max;
const nonEmpty = (max = 4096): Check => (v) =>
  typeof v === "string" && v.length > 0 && v.length <= max;
const nullable = (c: Check): Check => (v) => v === null || c(v);
const time: Check = (v) => typeof v === "string" && parseTime(v) !== null;
const token = nonEmpty(256);
/** How a process is named, in a plan's session and in a lock's owner alike. */
const startToken = nullable(nonEmpty(256));
const host = nonEmpty();
const bootId = nullable(str());

/**
 * Checks `fields` of `obj` in order, then copies exactly those fields, in that order (the
 * order of the file written back): the record, or the first missing or invalid field.
 */
function pick<T>(
  obj: Record<string, unknown>,
  fields: Fields<T>,
  where = "",
): { value: T } | { problem: string } {
  for (const [name, check] of fields) {
    if (!(name in obj)) return { problem: `missing field: ${where}${name}` };
    if (!check(obj[name])) return { problem: `invalid field: ${where}${name}` };
  }
  return { value: Object.fromEntries(fields.map(([n]) => [n, obj[n]])) as T };
}

const SESSION_FIELDS: Fields<PlanSession> = [
  ["session_pid", isValidPid],
  ["start_token", startToken],
  ["boot_id", bootId],
  ["host", host],
  ["session_id", nullable(str())],
  ["agent", nullable(str())],
  ["runtime", nullable(str())],
  ["cwd", nullable(str())],
  ["tmux_pane", nullable(str())],
];

const PLAN_FIELDS: Fields<Plan> = [
  ["schema", (v) => v === PLAN_SCHEMA],
  ["key", (v) => typeof v === "string" && isValidKey(v)],
  ["token", token],
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

const SKIP_FIELDS: Fields<SkipRecord> = [
  ["class", (v) => v === "process-end" || v === "veto" || v === "declined"],
  ["reason", nonEmpty(256)],
  ["token", nullable(str(256))],
  ["pid", isValidPid],
  ["at", time],
];

const CLAIM_FIELDS: Fields<ClaimRecord> = [
  ["key", (v) => typeof v === "string"],
  ["token", token],
  ["continuation_id", nonEmpty(64)],
  ["pid", isValidPid],
  ["at", time],
];

const LOCK_FIELDS: Fields<LockOwner> = [
  ["pid", isValidPid],
  ["start_token", startToken],
  ["host", host],
  ["boot_id", bootId],
  ["at", time],
  ["nonce", str(64)],
];

// ---------------------------------------------------------------------------------------
// Validation of what was read

/** Validates a parsed plan file for key `key`: the plan, or what is wrong with it. */
export function validatePlan(value: unknown, key: string): { plan: Plan } | { problem: string } {
  if (!isObject(value)) return { problem: "not a JSON object" };
  const plan = pick(value, PLAN_FIELDS);
  if ("problem" in plan) return plan;
  if (plan.value.key !== key) return { problem: `key differs from the file name: ${value.key}` };
  const session = pick(value.session as Record<string, unknown>, SESSION_FIELDS, "session.");
  if ("problem" in session) return session;
  const identity = pickIdentity(value.session as Record<string, unknown>, "session.");
  if ("problem" in identity) return identity;
  // Schema order: the identity fields stand beside boot_id, as in a registry record.
  const { session_pid, start_token, boot_id, ...rest } = session.value;
  session.value = { session_pid, start_token, boot_id, ...identity.value, ...rest };
  const calls: ToolCall[] = [];
  for (const [i, c] of (value.tool_calls as unknown[]).entries()) {
    if (!isObject(c) || !str(256)(c.id) || !str(256)(c.name)) {
      return { problem: `invalid field: tool_calls[${i}] (expected {id, name} strings)` };
    }
    calls.push({ id: c.id as string, name: c.name as string });
  }
  const chain: { chain?: number; chain_limit?: number } = {};
  for (const name of ["chain", "chain_limit"] as const) {
    if (!(name in value)) continue;
    const v = value[name];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1 || v > 1_000_000) {
      return { problem: `invalid field: ${name}` };
    }
    chain[name] = v;
  }
  // Overwriting keeps each field where pick put it: a released plan is written back as read.
  return { plan: { ...plan.value, session: session.value, tool_calls: calls, ...chain } };
}

export function validateSkip(value: unknown): { skip: SkipRecord } | { problem: string } {
  if (!isObject(value)) return { problem: "not a JSON object" };
  const skip = pick(value, SKIP_FIELDS);
  return "problem" in skip ? skip : { skip: skip.value };
}

/** A claim for `key`; null when it is not one (a claim for another key is not this one). */
export function validateClaim(value: unknown, key: string): ClaimRecord | null {
  if (!isObject(value) || value.key !== key) return null;
  const claim = pick(value, CLAIM_FIELDS);
  if ("problem" in claim) return null;
  return typeof value.message === "string" && value.message.length <= 65_536
    ? { ...claim.value, message: value.message }
    : claim.value;
}

export function validateLockOwner(value: unknown): LockOwner | null {
  if (!isObject(value)) return null;
  const owner = pick(value, LOCK_FIELDS);
  if ("problem" in owner) return null;
  const identity = pickIdentity(value, "");
  return "problem" in identity ? null : { ...owner.value, ...identity.value };
}

/**
 * The optional machine and pid-namespace fields (as in registry records): copied when present
 * and well formed, a problem when present and not. Absent means "not known", never "differs".
 */
function pickIdentity(
  obj: Record<string, unknown>,
  where: string,
): { value: { machine_id?: string | null; pid_ns?: string | null } } | { problem: string } {
  const value: { machine_id?: string | null; pid_ns?: string | null } = {};
  for (const name of ["machine_id", "pid_ns"] as const) {
    if (!(name in obj)) continue;
    if (!nullable(str(256))(obj[name])) return { problem: `invalid field: ${where}${name}` };
    value[name] = obj[name] as string | null;
  }
  return { value };
}

/** `config.json`: `{mode: "on" | "off" | "dry-run"}`; anything else means off. */
export function modeOf(value: unknown): Mode {
  if (
    isObject(value) && (value.mode === "on" || value.mode === "off" || value.mode === "dry-run")
  ) {
    return value.mode;
  }
  return "off";
}

/** `.last-dispatch`: `{at}`; null when it does not hold a time. */
export function lastDispatchOf(value: unknown): number | null {
  return isObject(value) && typeof value.at === "string" ? parseTime(value.at) : null;
}

/** The continuation id an outcome names: null for a skip; undefined when it names none. */
export function outcomeIdOf(value: unknown): string | null | undefined {
  if (!isObject(value)) return undefined;
  const id = value.continuation_id;
  return typeof id === "string" || id === null ? id : undefined;
}

// ---------------------------------------------------------------------------------------
// Records written

/** What every `K.outcome` holds first (docs/continuation.md, Audit lines). */
export interface Outcome {
  outcome: "dispatched" | "skipped" | "lost";
  continuation_id: string | null;
  at: string;
  key: string;
  token: string | null;
  [more: string]: unknown;
}

/** The outcome of a claim its dispatcher saw through. */
export function dispatchedOutcome(claim: ClaimRecord): Outcome {
  const { continuation_id, at, key, token, pid } = claim;
  return { outcome: "dispatched", continuation_id, at, key, token, pid };
}

/** The outcome of a claim whose dispatcher died before announcing it, written by `pid`. */
export function lostOutcome(claim: ClaimRecord, at: string, pid: number): Outcome {
  const { continuation_id, key, token } = claim;
  return {
    outcome: "lost",
    continuation_id,
    at,
    key,
    token,
    pid,
    claim_pid: claim.pid,
    recovered: true,
  };
}

export function skippedOutcome(key: string, skip: SkipRecord): Outcome {
  return {
    outcome: "skipped",
    continuation_id: null,
    at: skip.at,
    key,
    token: skip.token,
    class: skip.class,
    reason: skip.reason,
  };
}

/** An audit line before `at` and `pid`, which appendAudit adds. */
export type AuditEvent = { event: string } & Record<string, unknown>;

/** The `claim` line; `recovered` when a later check wrote it for a dead dispatcher. */
export function claimEvent(claim: ClaimRecord, recovered = false): AuditEvent {
  const { key, token, continuation_id } = claim;
  return { event: "claim", key, token, continuation_id, ...(recovered ? { recovered } : {}) };
}

export function skipEvent(key: string, skip: SkipRecord): AuditEvent {
  return { event: "skip", key, token: skip.token, class: skip.class, reason: skip.reason };
}

/** The identity of a lock's owner, to judge whether it still runs. */
export function identityOfOwner(owner: LockOwner): ProcessIdentity {
  return {
    session_pid: owner.pid,
    start_token: owner.start_token,
    host: owner.host,
    boot_id: owner.boot_id,
    machine_id: owner.machine_id,
    pid_ns: owner.pid_ns,
  };
}

/** Random lowercase hex, `bytes` bytes of it: plan tokens, lock nonces, continuation ids. */
export function randomHex(bytes = 6): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
