/**
 * The record schema (what `register` writes), built by one pure function (buildRecord) and
 * checked by another (validateRecord): any file that is not a valid record becomes a
 * malformed row, never a crash and never a trusted value.
 */
import type { HostIdentity, ProcessIdentity } from "../identity/identity.ts";
import { identityOf } from "../identity/identity.ts";
import { isValidPid } from "../identity/pid.ts";
import type { ProcessInfo } from "../process/types.ts";
import { isoOrNull, parseTime } from "../time.ts";
import { type Owner, sessionIdOf } from "./owner.ts";

const SCHEMA = 1;

const PID_SOURCES = ["flag", "ROSTER_SESSION_PID", "CLAUDE_PID", "ancestor"] as const;
export type PidSource = typeof PID_SOURCES[number];

interface Registrar {
  pid: number;
  version: string;
  path: string;
}

/** A session as `register` writes it: the owner's identity, then what the session is. */
export interface SessionRecord extends ProcessIdentity {
  schema: 1;
  pid_source: PidSource;
  pid_verified: boolean;
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
}

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
  if (obj.session_pid !== filePid) {
    return { problem: `pid in file name differs from session_pid: ${filePid}` };
  }
  const registrar = obj.registrar as Registrar;
  const record: SessionRecord = {
    schema: SCHEMA,
    session_pid: obj.session_pid as number,
    pid_source: obj.pid_source as PidSource,
    pid_verified: obj.pid_verified as boolean,
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
  };
  return { record };
}

/** What register knows when it builds a record; env values are set and non-empty. */
export interface RecordInput {
  owner: Pick<Owner, "pid" | "source" | "verified" | "harness" | "inner">;
  /** What the owner's pid holds now (null where the backend cannot say). */
  process: ProcessInfo | null;
  here: HostIdentity;
  flags: { agent?: string; runtime?: string; sessionId?: string };
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
    registered_at: new Date(input.now).toISOString(),
    registrar: input.registrar,
  };
}
