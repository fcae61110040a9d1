/**
 * The session record (declared in record_format.ts), built by one pure function (buildRecord)
 * and checked by another (validateRecord): any file that is not a valid record becomes a
 * malformed row, never a crash and never a trusted value.
 */
import type { HostIdentity } from "../identity/identity.ts";
import { identityOf } from "../identity/identity.ts";
import type { ProcessInfo } from "../process/types.ts";
import { isoOrNull, isoTime } from "../time.ts";
import type { Owner } from "./owner.ts";
import { copyRecord, isRecord, NO_LIFECYCLE, recordFieldProblem } from "./record_check.ts";
import type { SessionRecord } from "./record_format.ts";
import { sessionIdOf } from "./session_id.ts";

export { NO_LIFECYCLE };
export type { ContinuationHold, SessionLink, SessionRecord, ToolCall } from "./record_format.ts";

const SCHEMA = 1;

export const PID_SOURCES = [
  "flag",
  "ROSTER_SESSION_PID",
  "CLAUDE_PID",
  "ancestor",
  "exec",
] as const;
export type PidSource = typeof PID_SOURCES[number];

/** What a session is doing, as its harness's hooks say (`roster activity`). */
export const ACTIVITIES = ["working", "waiting", "idle"] as const;
export type Activity = typeof ACTIVITIES[number];

/** The most open tool calls a record keeps: the oldest are dropped past it. */
export const MAX_OPEN_TOOL_CALLS = 64;
/** The longest tool call id or name a record keeps. */
export const MAX_TOOL_TEXT = 256;
/**
 * The largest record file the store reads: a larger one is malformed. Every writer keeps its
 * record within it (store_activity.ts drops the oldest open calls), or the record is lost.
 */
export const MAX_RECORD_BYTES = 64 * 1024;

type Registrar = SessionRecord["registrar"];

/**
 * What is wrong with a parsed JSON object as a record, by its declaration (record_format.ts):
 * the first field that fails, the required ones first; then whether the pid in the file name
 * is the record's. Null when nothing is.
 */
export function recordProblem(obj: Record<string, unknown>, filePid: number): string | null {
  return recordFieldProblem(obj) ??
    (obj.session_pid !== filePid ? `pid in file name differs from session_pid: ${filePid}` : null);
}

/**
 * Validates a parsed JSON value as a record. `filePid` is the pid in the file name, which
 * must agree with the payload. Returns the record, or a sentence saying what is wrong. The
 * check and copy are the declaration's, written out (record_check.ts): `list` and `prune` read
 * valid records by the thousand; a record the check refuses goes to recordProblem, which says
 * why.
 */
export function validateRecord(
  value: unknown,
  filePid: number,
): { record: SessionRecord } | { problem: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: "not a JSON object" };
  }
  const obj = value as Record<string, unknown>;
  if (!isRecord(obj) || obj.session_pid !== filePid) {
    return { problem: recordProblem(obj, filePid) ?? "not a valid record" };
  }
  return { record: copyRecord(obj) };
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
 * ends is taken out by its id, or without one the oldest open call of its tool's name; one that starts
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
    // By its id; by its tool's name only a call the harness gives no id (Gemini CLI): an id
    // that is not open (its start hook failed, it was dropped past the bound) closes nothing.
    const i = id !== null
      ? calls.findIndex((c) => c.id === id)
      : name !== null
      ? calls.findIndex((c) => c.name === name)
      : -1;
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
