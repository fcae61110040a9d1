/**
 * Rows, what `list`, `check` and the other readers print: every kind of row is built here,
 * from a valid record, a malformed file, a harness's own session file, or a bare pid.
 */
import type { Verdict } from "../identity/liveness.ts";
import type { Liveness, Reason } from "../identity/liveness.ts";
import type { Probe } from "../process/types.ts";
import { isoOrNull, parseTime } from "../time.ts";
import { lifecycleVerdict } from "./lifecycle.ts";
import type { SessionRecord } from "./record.ts";
import { NULL_RECORD } from "./record_check.ts";

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
    /** The row that names this one as its successor (filled by list as rows stream). */
    predecessor?: { pid: number; session_id: string | null; path: string } | null;
  };

/** The row of a valid record at `path`, as judged now. */
export function recordRow(record: SessionRecord, verdict: Verdict, path: string): Row {
  const judged = lifecycleVerdict(record, verdict);
  return {
    ...record,
    liveness: judged.liveness,
    reason: judged.reason,
    path,
    malformed: false,
    detail: null,
    predecessor: null,
  };
}

/** The row for a file that is not a valid record: every field it could not vouch for is null. */
export function malformedRow(
  path: string,
  filePid: number | null,
  dirName: string,
  mtimeMs: number | null,
  detail: string,
): Row {
  return {
    ...NULL_RECORD,
    session_pid: filePid,
    host: dirName,
    registered_at: isoOrNull(mtimeMs),
    liveness: "unknown",
    reason: "malformed",
    path,
    malformed: true,
    detail,
    predecessor: null,
  };
}

/** A checked pid: its record's row, or for a pid without one, a row of what the pid holds. */
export type CheckRow =
  & Omit<Row, "path">
  & { path: string | null; registered: boolean };

/** The row of a pid that has no record: what holds it now, judged by the probe alone. */
export function bareRow(
  pid: number,
  host: string,
  probe: Probe,
  bootId: string | null,
  verdict: Verdict,
): CheckRow {
  const info = probe.kind === "exists" ? probe.info : null;
  return {
    ...NULL_RECORD,
    session_pid: pid,
    start_token: info?.startToken ?? null,
    process_started_at: isoOrNull(info?.startedAtMs ?? null),
    boot_id: info ? bootId : null,
    host,
    ...verdict,
    path: null,
    malformed: false,
    detail: null,
    registered: false,
  };
}

/** Where a row came from: roster's own store, or a harness's session file. */
type Source = "roster" | "claude";
export type SourcedRow = Row & {
  source: Source;
  /** What the harness's own file says it is doing (Claude Code: "idle", "busy", ...). */
  status?: string | null;
};

/** A session as Claude Code records it (discover.ts reads these files). */
export interface ClaudeSession {
  pid: number;
  sessionId: string | null;
  cwd: string | null;
  startedAtMs: number;
  /** The process's start token as Claude Code read it (Linux starttime), or null. */
  procStart: string | null;
  /** `linux:<machine-id>:pid:[<pid namespace inode>]`: where procStart and pid mean something. */
  pidDomain: string | null;
  /** The tmux pane (`<session>:@<window>.%<pane>`), or null. */
  tmux: string | null;
  status: string | null;
}

/** Pure: the row for one session file, shaped like a record's row with `source: "claude"`. */
export function claudeRow(
  session: ClaudeSession,
  path: string,
  probe: Probe,
  verdict: Verdict,
  here: { host: string; bootId: string | null },
): SourcedRow {
  const info = probe.kind === "exists" ? probe.info : null;
  const running = verdict.reason === "running";
  return {
    ...NULL_RECORD,
    session_pid: session.pid,
    // The current token only where the process is judged the session's: a caller may keep
    // it and check it later with `roster token --verify`.
    start_token: running ? info?.startToken ?? null : null,
    process_started_at: isoOrNull(info?.startedAtMs ?? null),
    boot_id: running ? here.bootId : null,
    host: here.host,
    agent: "claude",
    session_id: session.sessionId,
    // The file is Claude Code's own: its session id is the harness's native one.
    native_session_id: session.sessionId,
    cwd: session.cwd,
    // The pane id alone (`%3`), as $TMUX_PANE names it in registered rows.
    tmux_pane: session.tmux === null ? null : (/%\d+$/.exec(session.tmux)?.[0] ?? session.tmux),
    registered_at: isoOrNull(session.startedAtMs),
    ...verdict,
    path,
    malformed: false,
    detail: null,
    predecessor: null,
    source: "claude",
    status: session.status,
  };
}

/** Newest first by registered_at compared as times; ties by path, so output is stable. */
export function sortRows<R extends Row>(rows: R[]): R[] {
  const key = new Map<Row, number>();
  for (const r of rows) {
    key.set(r, (r.registered_at === null ? null : parseTime(r.registered_at)) ?? -Infinity);
  }
  return rows.sort((a, b) =>
    key.get(b)! - key.get(a)! || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}
