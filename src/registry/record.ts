/**
 * The record schema (what `register` writes) and the row shape (what `list` prints), with
 * pure validation: any file that is not a valid record becomes a malformed row, never a
 * crash and never a trusted value.
 */

export const SCHEMA = 1;
/** Record files are `<pid>.json`; everything else in a host directory is ignored. */
export const RECORD_NAME = /^([1-9][0-9]{0,9})\.json$/;
/** Largest pid accepted anywhere (Linux pid_max limit is 2^22; Windows pids fit in u32). */
export const MAX_PID = 0xffff_ffff;
export const MAX_RECORD_BYTES = 64 * 1024;

export const PID_SOURCES = ["flag", "ROSTER_SESSION_PID", "CLAUDE_PID", "ancestor"] as const;
export type PidSource = typeof PID_SOURCES[number];

export interface Registrar {
  pid: number;
  version: string;
  path: string;
}

export interface SessionRecord {
  schema: 1;
  session_pid: number;
  pid_source: PidSource;
  pid_verified: boolean;
  start_token: string | null;
  process_started_at: string | null;
  boot_id: string | null;
  /** The machine (Linux /etc/machine-id), or null: tells apart hosts that share a name. */
  machine_id: string | null;
  /** The pid namespace (Linux `pid:[N]`), or null: tells a container from its host. */
  pid_ns: string | null;
  host: string;
  agent: string;
  runtime: string | null;
  session_id: string | null;
  cwd: string;
  tmux_pane: string | null;
  registered_at: string;
  registrar: Registrar;
}

export type Liveness = "alive" | "dead" | "unknown";
export type Reason =
  | "running"
  | "pid-only"
  | "exited"
  | "zombie"
  | "pid-reused"
  | "rebooted"
  | "other-host"
  | "unverifiable"
  | "unsupported"
  | "malformed";

/** A record as listed: nullable where a malformed file could not supply a value. */
export type Row =
  & { [K in keyof SessionRecord]: SessionRecord[K] | null }
  & {
    liveness: Liveness;
    reason: Reason;
    path: string;
    malformed: boolean;
    /** For malformed rows, what is wrong with the file; null otherwise. */
    detail: string | null;
  };

/** Host directory name: every character outside [A-Za-z0-9._-] becomes `_`. */
export function hostDirName(host: string): string {
  const safe = host.replace(/[^A-Za-z0-9._-]/g, "_");
  return safe === "" || safe === "." || safe === ".." ? `_${safe}` : safe;
}

/** RFC 3339 date-time with a zone: what roster writes and what it accepts. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export function parseTime(value: string): number | null {
  if (!RFC3339.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

export function isValidPid(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 &&
    value <= MAX_PID;
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

/** Every record field null: the base of rows that no valid record stands behind. */
export const NULL_RECORD: Readonly<{ [K in keyof SessionRecord]: null }> = {
  schema: null,
  session_pid: null,
  pid_source: null,
  pid_verified: null,
  start_token: null,
  process_started_at: null,
  boot_id: null,
  machine_id: null,
  pid_ns: null,
  host: null,
  agent: null,
  runtime: null,
  session_id: null,
  cwd: null,
  tmux_pane: null,
  registered_at: null,
  registrar: null,
};

/** Epoch milliseconds as RFC 3339 (UTC), or null. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The row for a file that is not a valid record: every field it could not vouch for is null. */
export function malformedRow(
  path: string,
  filePid: number | null,
  hostDir: string,
  mtimeMs: number | null,
  detail: string,
): Row {
  return {
    ...NULL_RECORD,
    session_pid: filePid,
    host: hostDir,
    registered_at: isoOrNull(mtimeMs),
    liveness: "unknown",
    reason: "malformed",
    path,
    malformed: true,
    detail,
  };
}
