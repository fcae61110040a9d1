/**
 * The ledger's file formats, pure: what a plan, claim, skip, outcome, lock and audit line hold,
 * and validation of what was read back. A file that does not validate is never trusted; what
 * that means (no plan, a veto, an error) is decided by the reader in ledger.ts and lock.ts.
 */
import {
  array,
  constant,
  described,
  format,
  int,
  lenient,
  nullable,
  object,
  oneOf,
  optional,
  pattern,
  pid,
  required,
  str,
  time,
  type ValueOf,
  withSchema,
} from "../format/format.ts";
import { isObject, type Result } from "../format/result.ts";
import type { ProcessIdentity } from "../identity/identity.ts";
import { parseTime } from "../time.ts";
import type { Mode } from "./rules.ts";

/** A key names files, never a path: letters, digits, `.`, `_`, `-`; not starting with a dot. */
const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
export const KEY_RULE = "1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot";

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export const MAX_TOOL_CALLS = 1000;
/** Ten years, as for durations: anything larger is a typo. */
const MAX_SPACING_MS = 10 * 365 * 86_400_000;

// ---------------------------------------------------------------------------------------
// The formats read back, each declared once (src/format): its fields in the order of the file
// written back, which are optional, and what each holds. The published schema of a plan
// (src/cli/schemas.ts) is PLAN's.

const INT = { type: "integer" };
const text = str();
/** How a process is named, in a plan's session and in a lock's owner alike. */
const startToken = nullable(str(256, 1));
const host = str(4096, 1);
const bootId = nullable(str());
/**
 * The optional machine and pid-namespace fields (as in registry records): copied when present,
 * a problem when not well formed; absent means "not known", never "differs".
 */
const machineId = optional(nullable(str(256)));

/** The interrupted session, as its registry row showed it (extra row fields are ignored). */
const PLAN_SESSION = format("plan session", {
  session_pid: withSchema(pid, INT),
  start_token: startToken,
  boot_id: bootId,
  // Optional: plans written by other tools may lack them.
  machine_id: machineId,
  pid_ns: machineId,
  host,
  session_id: nullable(text),
  agent: nullable(text),
  runtime: required(nullable(text), { schemaOptional: true }),
  cwd: required(nullable(text), { schemaOptional: true }),
  tmux_pane: required(nullable(text), { schemaOptional: true }),
});

const TOOL_CALL = format("tool call", { id: str(256), name: str(256) });

/** A plan's chain counts: optional (older plans lack them). */
const chainCount = optional(int(1, 1_000_000));

const PLAN = format("plan", {
  schema: constant(1),
  key: withSchema(pattern(KEY_PATTERN), { type: "string" }),
  token: str(256, 1),
  state: oneOf(["planned", "released"]),
  session: required(object(PLAN_SESSION), { deep: true }),
  frozen_marker: nullable(text),
  interrupted_at: nullable(time),
  cause: nullable(oneOf(["signal", "hard"])),
  tool_calls: required(
    array(described(object(TOOL_CALL), "{id, name} strings"), MAX_TOOL_CALLS),
    { deep: true },
  ),
  not_before: nullable(time),
  deadline: nullable(time),
  spacing_ms: int(0, MAX_SPACING_MS),
  /** The place in a crash loop, and the most allowed. */
  chain: chainCount,
  chain_limit: chainCount,
});

const SKIP = format("skip", {
  /** `declined`: the resumed session's hook gave up (continuation-decline). */
  class: oneOf(["process-end", "veto", "declined"]),
  reason: str(256, 1),
  token: nullable(str(256)),
  pid,
  at: time,
});

const CLAIM = format("claim", {
  key: str(Infinity),
  token: str(256, 1),
  continuation_id: str(64, 1),
  pid,
  at: time,
  /** The message handed to the agent (optional: older claims lack it). */
  message: lenient(str(65_536)),
});

/**
 * `dispatch.lock`'s owner: a process identity under the name `pid` (the file's format), with
 * its machine and pid namespace, since a lock taken inside a container is not ours to judge.
 */
const LOCK_OWNER = format("lock owner", {
  pid,
  start_token: startToken,
  host,
  boot_id: bootId,
  at: time,
  /** Random per lock: inode numbers are reused, so release checks this too. */
  nonce: str(64),
  machine_id: machineId,
  pid_ns: machineId,
});

export { PLAN as PLAN_FORMAT };
export type Plan = ValueOf<typeof PLAN>;
export type ToolCall = ValueOf<typeof TOOL_CALL>;
export type Cause = NonNullable<Plan["cause"]>;
export type SkipRecord = ValueOf<typeof SKIP>;
export type SkipClass = SkipRecord["class"];
export type ClaimRecord = ValueOf<typeof CLAIM>;
export type LockOwner = ValueOf<typeof LOCK_OWNER>;

/** A plan's chain limit when it names none. */
export const DEFAULT_CHAIN_LIMIT = 3;

// ---------------------------------------------------------------------------------------
// Validation of what was read

/** Validates a parsed plan file for key `key`: the plan, or what is wrong with it. */
export function validatePlan(value: unknown, key: string): Result<Plan> {
  return PLAN.check(
    value,
    (o) => o.key !== key ? `key differs from the file name: ${o.key}` : null,
  );
}

/** Validates a parsed skip record: the record, or what is wrong with it. */
export function validateSkip(value: unknown): Result<SkipRecord> {
  return SKIP.check(value);
}

/** A claim for `key`; null when it is not one (a claim for another key is not this one). */
export function validateClaim(value: unknown, key: string): ClaimRecord | null {
  if (!isObject(value) || value.key !== key) return null;
  const claim = CLAIM.check(value);
  return claim.ok ? claim.value : null;
}

export function validateLockOwner(value: unknown): LockOwner | null {
  const owner = LOCK_OWNER.check(value);
  return owner.ok ? owner.value : null;
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
