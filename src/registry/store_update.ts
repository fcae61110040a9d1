/**
 * The store's changes to one existing record, each under the host directory's lock with the
 * record re-read and re-judged: `park`, `resume`, and a continuation's hold on the session it
 * plans for. Loaded only by those (store.ts).
 */
import { UsageError } from "../errors.ts";
import { join } from "../fs/dir.ts";
import { withLock } from "../fs/flock.ts";
import { listNames } from "../fs/read.ts";
import { writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { parseTime } from "../time.ts";
import { dirHost, hostDirName, placeDirName, sessionsDir } from "./layout.ts";
import type { ContinuationHold, SessionLink, SessionRecord } from "./record.ts";
import type { Row } from "./row.ts";
import {
  type Entry,
  openStore,
  placeDirIn,
  placeDirsIn,
  readEntry,
  recordJson,
  stamped,
  toRow,
} from "./store.ts";

/** A session named on the command line: by pid, or by its (or its harness's) session id. */
export type SessionTarget = { pid: number } | { sessionId: string };

/** This host's record that `target` names; for a session id, the newest not yet resumed. */
function findTarget(
  dir: string,
  dirName: string,
  target: SessionTarget,
): Extract<Entry, { ok: true }> {
  if ("pid" in target) {
    const entry = readEntry(dir, dirName, `${target.pid}.json`);
    if (entry === null || !entry.ok) {
      throw new UsageError(
        `Invalid --pid: ${
          entry === null ? "no record" : "a malformed record"
        } for pid ${target.pid}: ${dir}`,
      );
    }
    return entry;
  }
  let best: Extract<Entry, { ok: true }> | null = null;
  const rank = (
    e: Extract<Entry, { ok: true }>,
  ) => [e.record.successor === null ? 1 : 0, parseTime(e.record.registered_at) ?? 0];
  for (const name of listNames(dir, "Could not read the store")) {
    const e = readEntry(dir, dirName, name);
    if (e === null || !e.ok) continue;
    const r = e.record;
    if (r.session_id !== target.sessionId && r.native_session_id !== target.sessionId) continue;
    if (best === null) best = e;
    else {
      const [a, b] = [rank(e), rank(best)];
      if (a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])) best = e;
    }
  }
  if (best === null) {
    throw new UsageError(
      `Invalid --session-id: no session ${target.sessionId} on this host: ${dir}`,
    );
  }
  return best;
}

/**
 * The directory of this host (this place's first, then the host's of the older layout) that
 * holds `target`. Throws findTarget's error, naming this place's directory, when none does.
 */
function targetDir(home: string, host: string, judge: LivenessJudge, target: SessionTarget) {
  for (const d of placeDirsIn(openStore(home, false), host, judge)) {
    try {
      findTarget(d.dir, d.dirName, target);
      return d;
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
    }
  }
  const dirName = placeDirName({ ...judge.here, host });
  const dir = join(sessionsDir(home), dirName);
  findTarget(dir, dirName, target); // says what is missing
  return { dir, dirName };
}

/** Changes one record of this host under the lock (re-read, re-judged); returns its new row. */
async function updateSession(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
  change: (row: Row, record: SessionRecord) => SessionRecord,
): Promise<Row> {
  const { dir, dirName } = targetDir(home, host, judge, target);
  return await withLock(dir, () => {
    const entry = findTarget(dir, dirName, target);
    const next = change(toRow(entry, judge, true), entry.record);
    writeAtomic(entry.path, recordJson(next), false);
    return toRow({ ...entry, record: next }, judge, true);
  });
}

/** Marks a session parked: never live, never continued, kept by register's cleanup. */
export function parkSession(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
  now = Date.now(),
): Promise<Row> {
  return updateSession(home, host, judge, target, (_, record) => ({
    ...record,
    parked_at: record.parked_at ?? new Date(now).toISOString(),
  }));
}

/** Records the successor of an ended or parked session; a running one is refused. */
export function resumeSession(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
  successor: SessionLink,
  now = Date.now(),
): Promise<Row> {
  return updateSession(home, host, judge, target, (row, record) => {
    if (row.liveness === "alive" || row.liveness === "unknown") {
      throw new UsageError(
        `Invalid session: pid ${record.session_pid} is ${row.liveness} (${row.reason}); ` +
          "only an ended or parked session can be resumed",
      );
    }
    if (successor.pid === record.session_pid && successor.start_token === record.start_token) {
      throw new UsageError("Invalid --successor-pid: a session cannot succeed itself");
    }
    return { ...stamped(record, row, now), successor };
  });
}

/**
 * Marks the record at `path` (a row's path, on this host) as held by a continuation key, so
 * that neither register nor prune removes it until that key is finished. Only while it is
 * still the record of the session planned for (same pid and start token); best effort.
 */
export async function holdSession(
  home: string,
  host: string,
  row: Pick<Row, "path" | "session_pid" | "start_token">,
  hold: ContinuationHold,
): Promise<boolean> {
  const root = openStore(home, false);
  // The row's directory, when it is one of this host's (either layout).
  const name = row.path.slice(row.path.lastIndexOf("/") + 1);
  const parent = row.path.slice(0, row.path.lastIndexOf("/"));
  const dirName = parent.slice(parent.lastIndexOf("/") + 1);
  if (dirHost(dirName) !== hostDirName(host)) return false;
  const dir = root === null ? null : placeDirIn(root, dirName, false);
  if (dir === null || row.path !== join(dir, name)) return false;
  try {
    return await withLock(dir, () => {
      const entry = readEntry(dir, dirName, name);
      if (entry === null || !entry.ok) return false;
      const r = entry.record;
      if (r.session_pid !== row.session_pid || r.start_token !== row.start_token) return false;
      writeAtomic(entry.path, recordJson({ ...r, continuation: hold }), false);
      return true;
    });
  } catch {
    return false;
  }
}
