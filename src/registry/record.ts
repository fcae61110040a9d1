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

/** What a session is doing, as its harness's hooks say (`roster activity`). */
export const ACTIVITIES = ["working", "waiting", "idle"] as const;
export type Activity = typeof ACTIVITIES[number];

/** A tool call its harness started and has not said finished (`roster activity --tool-start`). */
export interface ToolCall {
  /** The harness's id of the call (else its tool's name, where the harness gives no id). */
  id: string;
  name: string | null;
  started_at: string;
}

/** The most open tool calls a record keeps: the oldest are dropped past it. */
export const MAX_OPEN_TOOL_CALLS = 64;
/** The longest tool call id or name a record keeps. */
export const MAX_TOOL_TEXT = 256;

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
  /**
   * What the session is doing, when its hooks last said (`roster activity`); null before any
   * hook said. Optional when read (older records lack them), always written.
   */
  activity: Activity | null;
  activity_at: string | null;
  open_tool_calls: ToolCall[];
  /**
   * The OS that registered it (`Deno.build.os`): a record of another OS is another host's,
   * whatever its name. Optional when read (older records lack it: null), always written.
   */
  os: string | null;
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
  activity: null,
  activity_at: null,
  open_tool_calls: [] as ToolCall[],
} as const;

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

type Check = (value: unknown) => boolean;
const str: Check = (v) => typeof v === "string" && v.length <= 4096;
const nullableStr: Check = (v) => v === null || str(v);
const time: Check = (v) => typeof v === "string" && parseTime(v) !== null;
const token: Check = (v) =>
  v === null || (typeof v === "string" && v.length > 0 && v.length <= 256);
function registrarOk(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  return isValidPid(r.pid) && str(r.version) && str(r.path);
}
const successorOk: Check = (v) =>
  v === null ||
  (isObj(v) && isValidPid(v.pid) && token(v.start_token) && nullableStr(v.session_id));
const continuationOk: Check = (v) =>
  v === null || (isObj(v) && str(v.key) && str(v.ledger) && (v.key as string).length > 0);

/** An OS's name as Deno.build.os gives it: it goes into a place directory's name (layout.ts). */
const osOk: Check = (v) => v === null || (typeof v === "string" && /^[a-z0-9_]{1,32}$/.test(v));
const activityOk: Check = (v) => v === null || (ACTIVITIES as readonly unknown[]).includes(v);
const toolText: Check = (v) => typeof v === "string" && v.length > 0 && v.length <= MAX_TOOL_TEXT;
function toolCallsOk(v: unknown): boolean {
  if (!Array.isArray(v) || v.length > MAX_OPEN_TOOL_CALLS) return false;
  for (const c of v) {
    if (!isObj(c) || !toolText(c.id) || !(c.name === null || toolText(c.name))) return false;
    if (!time(c.started_at)) return false;
  }
  return true;
}

const FIELDS: [keyof SessionRecord, Check][] = [
  ["schema", (v) => v === SCHEMA],
  ["session_pid", isValidPid],
  ["pid_source", (v) => (PID_SOURCES as readonly unknown[]).includes(v)],
  ["pid_verified", (v) => typeof v === "boolean"],
  ["start_token", token],
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
  ["registrar", (v) => registrarOk(v)],
];

/** Fields added with the lifecycle: absent means null; present must be well formed. */
const OPTIONAL_FIELDS: [keyof SessionRecord, Check][] = [
  ["hosted", (v) => typeof v === "boolean"],
  ["model", nullableStr],
  ["native_session_id", nullableStr],
  ["ended_at", (v) => v === null || time(v)],
  ["ended_reason", nullableStr],
  ["parked_at", (v) => v === null || time(v)],
  ["successor", successorOk],
  ["continuation", continuationOk],
  ["activity", activityOk],
  ["activity_at", (v) => v === null || time(v)],
  ["open_tool_calls", toolCallsOk],
  ["os", osOk],
];

/**
 * What is wrong with a parsed JSON object as a record, by the tables above (the first field
 * that fails, in their order); null when nothing is.
 */
export function recordProblem(obj: Record<string, unknown>, filePid: number): string | null {
  for (const [name, check] of FIELDS) {
    if (!(name in obj)) return `missing field: ${name}`;
    if (!check(obj[name])) return `invalid field: ${name}`;
  }
  for (const [name, check] of OPTIONAL_FIELDS) {
    if (name in obj && !check(obj[name])) return `invalid field: ${name}`;
  }
  if (obj.session_pid !== filePid) return `pid in file name differs from session_pid: ${filePid}`;
  return null;
}

/**
 * The tables' checks written out field by field, for the valid records `list` and `prune` read
 * by the thousand: named loads and direct calls that V8 optimises early, where the tables'
 * loop makes every load and call site megamorphic. It accepts exactly what recordProblem
 * accepts (tests/registry/record_test.ts checks the two against each other); a record it
 * refuses goes to recordProblem, which says why.
 */
function isPlainValid(o: RawRecord, filePid: number): boolean {
  return "schema" in o && o.schema === SCHEMA &&
    "session_pid" in o && o.session_pid === filePid && isValidPid(o.session_pid) &&
    "pid_source" in o && (PID_SOURCES as readonly unknown[]).includes(o.pid_source) &&
    "pid_verified" in o && typeof o.pid_verified === "boolean" &&
    "start_token" in o && token(o.start_token) &&
    "process_started_at" in o && (o.process_started_at === null || time(o.process_started_at)) &&
    "boot_id" in o && nullableStr(o.boot_id) &&
    "machine_id" in o && nullableStr(o.machine_id) &&
    "pid_ns" in o && nullableStr(o.pid_ns) &&
    "host" in o && str(o.host) && (o.host as string).length > 0 &&
    "agent" in o && str(o.agent) &&
    "runtime" in o && nullableStr(o.runtime) &&
    "session_id" in o && nullableStr(o.session_id) &&
    "cwd" in o && str(o.cwd) &&
    "tmux_pane" in o && nullableStr(o.tmux_pane) &&
    "registered_at" in o && time(o.registered_at) &&
    "registrar" in o && registrarOk(o.registrar) &&
    (!("hosted" in o) || typeof o.hosted === "boolean") &&
    (!("model" in o) || nullableStr(o.model)) &&
    (!("native_session_id" in o) || nullableStr(o.native_session_id)) &&
    (!("ended_at" in o) || o.ended_at === null || time(o.ended_at)) &&
    (!("ended_reason" in o) || nullableStr(o.ended_reason)) &&
    (!("parked_at" in o) || o.parked_at === null || time(o.parked_at)) &&
    (!("successor" in o) || successorOk(o.successor)) &&
    (!("continuation" in o) || continuationOk(o.continuation)) &&
    (!("activity" in o) || activityOk(o.activity)) &&
    (!("activity_at" in o) || o.activity_at === null || time(o.activity_at)) &&
    (!("open_tool_calls" in o) || toolCallsOk(o.open_tool_calls)) &&
    (!("os" in o) || osOk(o.os));
}

/** A parsed record file's fields, as read (nothing about them checked yet). */
type RawRecord = { [K in keyof SessionRecord]?: unknown };

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
  if (!isPlainValid(obj, filePid)) {
    return { problem: recordProblem(obj, filePid) ?? "not a valid record" };
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
    activity: (obj.activity ?? null) as Activity | null,
    activity_at: (obj.activity_at ?? null) as string | null,
    open_tool_calls: Array.isArray(obj.open_tool_calls)
      ? (obj.open_tool_calls as ToolCall[]).map((c) => ({
        id: c.id,
        name: c.name,
        started_at: c.started_at,
      }))
      : [],
    os: (obj.os ?? null) as string | null,
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
    // A shared server's $TMUX_PANE is the pane of whichever terminal started the server, not
    // this session's: a hosted session records none (issue 23.4).
    tmux_pane: owner.harness?.hosted === true ? null : env("TMUX_PANE") ?? null,
    registered_at: isoTime(input.now),
    registrar: input.registrar,
    ...NO_LIFECYCLE,
    model: flags.model || env("ROSTER_MODEL") || null,
    native_session_id: flags.nativeSessionId || env("ROSTER_NATIVE_SESSION_ID") || null,
    // Last: the field came after the others, and files keep their order.
    hosted: owner.harness?.hosted === true,
    // After hosted, for the same reason.
    os: id.os,
  };
}

/** What one activity hook says (`roster activity`): a state, a tool call started or ended. */
export interface ActivityChange {
  activity?: Activity;
  /** A call without an id (the harness gives none) is known by its tool's name. */
  toolStart?: { id: string | null; name: string | null };
  toolEnd?: { id: string | null; name: string | null };
}

/**
 * Pure: the record after an activity hook. A tool starting or ending means the session works
 * (unless the hook names a state); `idle` (the turn ended) closes every open call. A call that
 * ends is taken out by its id, else the oldest open call of its tool's name; one that starts
 * again under an id already open is not added twice.
 */
export function withActivity(
  record: SessionRecord,
  change: ActivityChange,
  now: number,
): SessionRecord {
  const at = isoTime(now);
  let calls = record.open_tool_calls;
  if (change.toolEnd) {
    const { id, name } = change.toolEnd;
    let i = id === null ? -1 : calls.findIndex((c) => c.id === id);
    if (i === -1 && name !== null) i = calls.findIndex((c) => c.name === name);
    if (i !== -1) calls = [...calls.slice(0, i), ...calls.slice(i + 1)];
  }
  const start = change.toolStart;
  const id = start ? start.id ?? start.name : null;
  if (start && id !== null && (start.id === null || !calls.some((c) => c.id === id))) {
    calls = [...calls, { id, name: start.name, started_at: at }].slice(-MAX_OPEN_TOOL_CALLS);
  }
  const tool = change.toolStart !== undefined || change.toolEnd !== undefined;
  const activity = change.activity ?? (tool ? "working" : record.activity);
  if (activity === "idle") calls = [];
  return { ...record, activity, activity_at: at, open_tool_calls: calls };
}
