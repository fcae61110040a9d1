/**
 * The record schema (what `register` writes), built by one pure function (buildRecord) and
 * checked by another (validateRecord): any file that is not a valid record becomes a
 * malformed row, never a crash and never a trusted value.
 */
import type { HostIdentity, ProcessIdentity } from "../identity/identity.ts";
import { identityOf } from "../identity/identity.ts";
import { isValidPid } from "../identity/pid.ts";
import type { ProcessInfo } from "../process/types.ts";
import { isoOrNull, isoTime, parseTime } from "../time.ts";
import type { Owner } from "./owner.ts";
import { sessionIdOf } from "./session_id.ts";

const SCHEMA = 1;

const PID_SOURCES = ["flag", "ROSTER_SESSION_PID", "CLAUDE_PID", "ancestor", "exec"] as const;
export type PidSource = typeof PID_SOURCES[number];

interface Registrar {
  pid: number;
  version: string;
  path: string;
}

/** The session that continues an ended or parked one (`roster resume`). */
export interface SessionLink {
  pid: number;
  start_token: string | null;
  session_id: string | null;
}

/** The continuation key whose plan keeps this record (`continuation-plan`). */
export interface ContinuationHold {
  key: string;
  /** The ledger directory, as an absolute path. */
  ledger: string;
}

/** A session as `register` writes it: the owner's identity, then what the session is. */
export interface SessionRecord extends ProcessIdentity {
  schema: 1;
  pid_source: PidSource;
  pid_verified: boolean;
  /**
   * The pid is a shared server hosting this session among others (Codex's app-server): the
   * record is filed per session, and the server running says nothing of this session.
   * Optional when read (older records lack it: false), always written.
   */
  hosted: boolean;
  process_started_at: string | null;
  machine_id: string | null;
  pid_ns: string | null;
  agent: string;
  runtime: string | null;
  session_id: string | null;
  cwd: string;
  tmux_pane: string | null;
  registered_at: string;
  registrar: Registrar;
  /** The lifecycle fields: optional when read (older records lack them), always written. */
  model: string | null;
  /** The harness's own session id, where it differs from `session_id`. */
  native_session_id: string | null;
  /** When roster first saw the session ended, and how (a liveness reason). */
  ended_at: string | null;
  ended_reason: string | null;
  parked_at: string | null;
  successor: SessionLink | null;
  continuation: ContinuationHold | null;
}

/** The lifecycle fields of a session that has not ended, been parked or been planned for. */
export const NO_LIFECYCLE = {
  model: null,
  native_session_id: null,
  ended_at: null,
  ended_reason: null,
  parked_at: null,
  successor: null,
  continuation: null,
} as const;

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

type Check = (value: unknown) => boolean;
const str: Check = (v) => typeof v === "string" && v.length <= 4096;
const nullableStr: Check = (v) => v === null || str(v);
const time: Check = (v) => typeof v === "string" && parseTime(v) !== null;

const FIELDS: [keyof SessionRecord, Check][] = [
  ["schema", (v) => v === SCHEMA],
  ["session_pid", isValidPid],
  ["pid_source", (v) => (PID_SOURCES as readonly unknown[]).includes(v)],
  ["pid_verified", (v) => typeof v === "boolean"],
  ["start_token", (v) => v === null || (typeof v === "string" && v.length > 0 && v.length <= 256)],
  ["process_started_at", (v) => v === null || time(v)],
  ["boot_id", nullableStr],
  ["machine_id", nullableStr],
  ["pid_ns", nullableStr],
  ["host", (v) => str(v) && (v as string).length > 0],
  ["agent", str],
  ["runtime", nullableStr],
  ["session_id", nullableStr],
  ["cwd", str],
  ["tmux_pane", nullableStr],
  ["registered_at", time],
  ["registrar", (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
    const r = v as Record<string, unknown>;
    return isValidPid(r.pid) && str(r.version) && str(r.path);
  }],
];

const token = (v: unknown) =>
  v === null || (typeof v === "string" && v.length > 0 && v.length <= 256);

/** Fields added with the lifecycle: absent means null; present must be well formed. */
const OPTIONAL_FIELDS: [keyof SessionRecord, Check][] = [
  ["hosted", (v) => typeof v === "boolean"],
  ["model", nullableStr],
  ["native_session_id", nullableStr],
  ["ended_at", (v) => v === null || time(v)],
  ["ended_reason", nullableStr],
  ["parked_at", (v) => v === null || time(v)],
  ["successor", (v) =>
    v === null ||
    (isObj(v) && isValidPid(v.pid) && token(v.start_token) && nullableStr(v.session_id))],
  [
    "continuation",
    (v) => v === null || (isObj(v) && str(v.key) && str(v.ledger) && (v.key as string).length > 0),
  ],
];

/**
 * Validates a parsed JSON value as a record. `filePid` is the pid in the file name, which
 * must agree with the payload. Returns the record, or a sentence saying what is wrong.
 */
export function validateRecord(
  value: unknown,
  filePid: number,
): { record: SessionRecord } | { problem: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: "not a JSON object" };
  }
  const obj = value as Record<string, unknown>;
  for (const [name, check] of FIELDS) {
    if (!(name in obj)) return { problem: `missing field: ${name}` };
    if (!check(obj[name])) return { problem: `invalid field: ${name}` };
  }
  for (const [name, check] of OPTIONAL_FIELDS) {
    if (name in obj && !check(obj[name])) return { problem: `invalid field: ${name}` };
  }
  if (obj.session_pid !== filePid) {
    return { problem: `pid in file name differs from session_pid: ${filePid}` };
  }
  const registrar = obj.registrar as Registrar;
  const record: SessionRecord = {
    schema: SCHEMA,
    session_pid: obj.session_pid as number,
    pid_source: obj.pid_source as PidSource,
    pid_verified: obj.pid_verified as boolean,
    hosted: obj.hosted === true,
    start_token: obj.start_token as string | null,
    process_started_at: obj.process_started_at as string | null,
    boot_id: obj.boot_id as string | null,
    machine_id: obj.machine_id as string | null,
    pid_ns: obj.pid_ns as string | null,
    host: obj.host as string,
    agent: obj.agent as string,
    runtime: obj.runtime as string | null,
    session_id: obj.session_id as string | null,
    cwd: obj.cwd as string,
    tmux_pane: obj.tmux_pane as string | null,
    registered_at: obj.registered_at as string,
    registrar: { pid: registrar.pid, version: registrar.version, path: registrar.path },
    model: (obj.model ?? null) as string | null,
    native_session_id: (obj.native_session_id ?? null) as string | null,
    ended_at: (obj.ended_at ?? null) as string | null,
    ended_reason: (obj.ended_reason ?? null) as string | null,
    parked_at: (obj.parked_at ?? null) as string | null,
    successor: isObj(obj.successor)
      ? {
        pid: obj.successor.pid as number,
        start_token: obj.successor.start_token as string | null,
        session_id: obj.successor.session_id as string | null,
      }
      : null,
    continuation: isObj(obj.continuation)
      ? { key: obj.continuation.key as string, ledger: obj.continuation.ledger as string }
      : null,
  };
  return { record };
}

/** What register knows when it builds a record; env values are set and non-empty. */
export interface RecordInput {
  owner: Pick<Owner, "pid" | "source" | "verified" | "harness" | "inner">;
  /** What the owner's pid holds now (null where the backend cannot say). */
  process: ProcessInfo | null;
  here: HostIdentity;
  flags: {
    agent?: string;
    runtime?: string;
    sessionId?: string;
    model?: string;
    nativeSessionId?: string;
  };
  env: (name: string) => string | undefined;
  cwd: string;
  now: number;
  registrar: Registrar;
}

/**
 * Pure: the record `register` writes. Each field takes the first that is given: the flag,
 * then the environment, then what was detected. `--agent ""` names an anonymous session,
 * while an empty `--session-id` counts as unset.
 */
export function buildRecord(input: RecordInput): SessionRecord {
  const { owner, process, flags, env } = input;
  const id = identityOf(owner.pid, process?.startToken ?? null, input.here);
  // Field by field, in the order every record file has always had.
  return {
    schema: SCHEMA,
    session_pid: id.session_pid,
    pid_source: owner.source,
    pid_verified: owner.verified,
    start_token: id.start_token,
    process_started_at: isoOrNull(process?.startedAtMs ?? null),
    boot_id: id.boot_id,
    machine_id: id.machine_id,
    pid_ns: id.pid_ns,
    host: id.host,
    agent: flags.agent ?? env("ROSTER_AGENT") ?? owner.harness?.agent ?? "",
    runtime: flags.runtime ?? env("ROSTER_RUNTIME") ?? owner.harness?.runtime ?? null,
    session_id: sessionIdOf(owner, flags.sessionId, env),
    cwd: input.cwd,
    tmux_pane: env("TMUX_PANE") ?? null,
    registered_at: isoTime(input.now),
    registrar: input.registrar,
    ...NO_LIFECYCLE,
    model: flags.model || env("ROSTER_MODEL") || null,
    native_session_id: flags.nativeSessionId || env("ROSTER_NATIVE_SESSION_ID") || null,
    // Last: the field came after the others, and files keep their order.
    hosted: owner.harness?.hosted === true,
  };
}
