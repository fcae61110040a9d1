/**
 * The store's changes to one existing record, each under the host directory's lock with the
 * record re-read and re-judged: `park`, `resume`, and a continuation's hold on the session it
 * plans for. Loaded only by those (store.ts).
 */
import { UsageError } from "../errors.ts";
import { baseName, join, parentOf } from "../fs/path.ts";
import { withLock } from "../fs/flock.ts";
import { listNames } from "../fs/read.ts";
import { writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { parseTime } from "../time.ts";
import { dirHost, hostDirName, placeDirNames, placeDirPath, placeKey } from "./layout.ts";
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

/**
 * A session named on the command line: by pid, or by its (or its harness's) session id; or a
 * record by its path (a row's, as read: a restore links the exact record it relaunched).
 */
export type SessionTarget = { pid: number } | { sessionId: string } | { path: string };

/**
 * How `resume` ranks the records a session id names: `claude --resume <id>` and `codex resume
 * <id>` keep the id, so the live successor shares it with the ended session it continues.
 * Only a record that may be resumed is wanted: never the successor's own, and an ended or
 * parked one before one that runs.
 */
export interface ResumeRank {
  successor: SessionLink;
  judge: LivenessJudge;
}

/**
 * How `park` and `park --undo` rank them: the newest record not yet resumed that is not yet
 * parked (`parked: false`), or that is (`parked: true`): un-parking a session id whose newer
 * run registered since must un-park the parked record, not the newer one.
 */
export interface ParkRank {
  parked: boolean;
}

/** The order a session id's records are ranked in: one ResumeRank or ParkRank, else newest. */
type Rank = ResumeRank | ParkRank;

/** Pure: whether rank `a` is before rank `b`, compared place by place. */
const before = (a: number[], b: number[]) => {
  const i = a.findIndex((v, k) => v !== b[k]);
  return i !== -1 && a[i] > b[i];
};

/**
 * This host's record that `target` names. For a session id: the newest not yet resumed (for
 * `park`, ParkRank: of those, one parked or not as wanted first); for `resume` (rank), the
 * newest that can be resumed by `rank.successor`: the one already linked to it (an identical
 * retry) first, then an ended or parked one, never the successor itself.
 */
function findTarget(
  dir: string,
  dirName: string,
  target: SessionTarget,
  ranked: Rank | null = null,
): Extract<Entry, { ok: true }> {
  const resume = ranked !== null && "successor" in ranked ? ranked : null;
  if ("path" in target) {
    const at = target.path.lastIndexOf("/");
    const entry = target.path.slice(0, at) === dir
      ? readEntry(dir, dirName, target.path.slice(at + 1))
      : null;
    if (entry === null || !entry.ok) {
      throw new UsageError(
        `Invalid session: ${entry === null ? "no record" : "a malformed record"}: ${target.path}`,
      );
    }
    return entry;
  }
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
  let bestRank: number[] = [];
  const rank = (e: Extract<Entry, { ok: true }>): number[] => {
    const r = e.record;
    const newest = parseTime(r.registered_at) ?? 0;
    if (ranked !== null && "parked" in ranked) {
      const wanted = (r.parked_at !== null) === ranked.parked ? 1 : 0;
      return [r.successor === null ? 1 : 0, wanted, newest];
    }
    if (resume === null) return [r.successor === null ? 1 : 0, newest];
    const linked = r.successor !== null && sameProcess(r.successor, resume.successor);
    const liveness = toRow(e, resume.judge).liveness;
    const resumable = r.successor === null && liveness === "dead";
    return [linked ? 2 : resumable ? 1 : 0, newest];
  };
  for (const name of listNames(dir, "Could not read the store")) {
    const e = readEntry(dir, dirName, name);
    if (e === null || !e.ok) continue;
    const r = e.record;
    if (r.session_id !== target.sessionId && r.native_session_id !== target.sessionId) continue;
    // The successor's own record shares the id; it never continues itself.
    if (
      resume !== null &&
      sameProcess({ pid: r.session_pid, start_token: r.start_token }, resume.successor)
    ) continue;
    const k = rank(e);
    if (best === null || before(k, bestRank)) {
      best = e;
      bestRank = k;
    }
  }
  if (best === null) {
    throw new UsageError(
      `Invalid --session-id: no session ${target.sessionId} on this host: ${dir}`,
    );
  }
  return best;
}

/** The same process: the same pid and start token. */
const sameProcess = (
  a: { pid: number; start_token: string | null },
  b: { pid: number; start_token: string | null },
) => a.pid === b.pid && a.start_token === b.start_token;

/**
 * The directory of this host (this place's first, then the host's of the older layout) that
 * holds `target`. Throws findTarget's error, naming this place's directory, when none does.
 */
function targetDir(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
  rank: Rank | null,
) {
  for (const d of placeDirsIn(openStore(home, false), host, judge)) {
    try {
      findTarget(d.dir, d.dirName, target, rank);
      return d;
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
    }
  }
  const dirName = placeDirNames({ ...judge.here, host })[0];
  const dir = placeDirPath(home, dirName);
  findTarget(dir, dirName, target, rank); // says what is missing
  return { dir, dirName };
}

/** Changes one record of this host under the lock (re-read, re-judged); returns its new row. */
async function updateSession(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
  change: (row: Row, record: SessionRecord) => SessionRecord,
  rank: Rank | null = null,
): Promise<Row> {
  const { dir, dirName } = targetDir(home, host, judge, target, rank);
  return await withLock(dir, () => {
    const entry = findTarget(dir, dirName, target, rank);
    const next = change(toRow(entry, judge, true), entry.record);
    // Nothing changed (an identical retry): nothing written.
    if (next !== entry.record) writeAtomic(entry.path, recordJson(next), false);
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
  }), { parked: false });
}

/** Un-parks a session (`park --undo`): judged by its process again; a no-op when not parked. */
export function unparkSession(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
): Promise<Row> {
  return updateSession(
    home,
    host,
    judge,
    target,
    (_, record) => record.parked_at === null ? record : { ...record, parked_at: null },
    { parked: true },
  );
}

/**
 * Records the successor of an ended or parked session; a running one is refused. A link is
 * never replaced (append-only): the same successor again is an identical retry, accepted
 * without a write; another is refused, naming the link there is.
 */
export function resumeSession(
  home: string,
  host: string,
  judge: LivenessJudge,
  target: SessionTarget,
  successor: SessionLink,
  now = Date.now(),
): Promise<Row> {
  return updateSession(home, host, judge, target, (row, record) => {
    const linked = record.successor;
    if (linked !== null) {
      if (
        sameProcess(linked, successor) &&
        (successor.session_id === null || linked.session_id === null ||
          successor.session_id === linked.session_id)
      ) return record;
      throw new UsageError(
        `Invalid --successor-pid: session ${record.session_pid}` +
          (record.session_id === null ? "" : ` (${record.session_id})`) +
          ` is already resumed by pid ${linked.pid}` +
          (linked.session_id === null ? "" : ` (${linked.session_id})`) +
          `; a link is never replaced: ${row.path}`,
      );
    }
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
  }, { successor, judge });
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
  const name = baseName(row.path);
  const parent = parentOf(row.path);
  const dirName = placeKey(baseName(parentOf(parent)), baseName(parent));
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
