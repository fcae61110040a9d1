/**
 * The store's writing side for `register` (and `exec`, which registers the command it runs):
 * a record written under the host directory's lock, then the bounded cleanup of ended records
 * that every register does on the way, and the note `exec` adds when its session ends. Only
 * these commands load this module, the lock's and the sweep queue's (store.ts).
 */
import { privateChild } from "../fs/dir.ts";
import { join } from "../fs/path.ts";
import { withLock, withLockIfFree } from "../fs/flock.ts";
import { removeQuietly, writeAtomic } from "../fs/write.ts";
import { type LivenessJudge, requireOwnProc } from "../identity/liveness.ts";
import { RosterError } from "../errors.ts";
import { pause } from "../pause.ts";
import { placeDirNames, placeOf, recordName, SESSIONS } from "./layout.ts";
import { cleanupAction, DEFAULT_RETENTION_MS, endedName } from "./lifecycle.ts";
import type { SessionRecord } from "./record.ts";
import type { Row } from "./row.ts";
import {
  type Entry,
  openStore,
  placeDirIn,
  readEntry,
  recordJson,
  stamped,
  toRow,
} from "./store.ts";
import { enqueue, type Examined, sweep } from "./sweep.ts";
import { retireEarlierRuns } from "./store_retire.ts";
import { bootHistoryPath, noteBoot } from "./boots.ts";

/** The file name a record is written under (layout.ts recordName). */
const fileOf = (record: SessionRecord) =>
  recordName(record.session_pid, record.hosted ? record.session_id : null);

/**
 * How many records one `register` examines for cleanup: bounded so that a hook's cost does
 * not grow with the store. The candidates come from the sweep queue (./sweep.ts), never from
 * a listing of the directory; `prune` examines every record.
 */
const REGISTER_CLEANUP_LIMIT = 8;

/** What the lifecycle needs from the caller: the retention window and open continuations. */
export interface Retention {
  retentionMs: number;
  /**
   * Whether a continuation still holds this row (its key is not finished). Asked only of a row
   * that names a continuation, and only once `load` (if any) has run.
   */
  held: (row: Row) => boolean;
  /**
   * Loads what `held` needs (the continuation ledger): run only when a record to clean up names
   * a continuation, so a register whose cleanup meets none never pays for it.
   */
  load?: () => Promise<void>;
}

/**
 * Writes (or refreshes) one record under the host lock, then looks after ended records of this
 * host, best effort: a failure while cleaning never fails the registration. When the pid's
 * file holds an ended session of another process, that record is first moved aside.
 *
 * The write and the queueing of new names hold the lock shared: registers of different pids
 * never touch each other's files, so a burst of sessions starting at once does not queue
 * behind one lock (200 at once on 2 cores used to wait past the time limit), while prune, the
 * cleanup and unregister, which judge a record and then remove it, hold it alone and so never
 * remove a record across a register's write. The cleanup takes the lock again, alone, only if
 * it is free right then: housekeeping must never cost a session its registration, and whoever
 * finds the lock free next cleans up instead.
 */
export async function writeRecord(
  home: string,
  record: SessionRecord,
  judge: LivenessJudge,
  retention: Retention = { retentionMs: DEFAULT_RETENTION_MS, held: () => false },
  now = Date.now(),
): Promise<{ path: string; record: SessionRecord }> {
  requireOwnProc(judge.backend, `register pid ${record.session_pid}`);
  const root = openStore(home, true)!;
  const dirName = placeDirNames(placeOf(record))[0];
  const dir = placeDirIn(root, dirName, true)!;
  const name = fileOf(record);
  const path = join(dir, name);
  let written = record;
  let oldCopy: OldCopy | null = null;
  await withLock(dir, () => {
    pause("register:after-lock", home);
    const before = moveAsideEnded(dir, dirName, name, record, judge, now);
    oldCopy = findOldCopy(root, record, name);
    // Before the record: every record's boot is then one this machine's history holds. A
    // refresh has the same boot (moveAsideEnded compares it), noted when it was first written.
    if (!(typeof before === "object" && "refreshed" in before)) {
      noteBoot(bootHistoryPath(), record.boot_id);
    }
    // A refresh (hooks register again on resume, /clear, compaction) keeps what the lifecycle
    // decided of this process: parked stays parked until `park --undo` or `resume`.
    if (typeof before === "object" && "refreshed" in before) {
      written = keptOnRefresh(before.refreshed, record);
    } else if (before === "new" && oldCopy !== null) {
      // The first write under places/ of a session an older layout holds: what was decided of
      // it there (parked, its successor, a continuation, its activity) moves with it, before
      // retireOldCopy removes the old copy.
      written = keptOnRefresh(oldCopy.record, record);
    }
    // No fsync: only a power loss could tear this write, and a power loss ends the session
    // too, so the record would be dead anyway. It saves ~1.5 ms on every hook call.
    writeAtomic(path, recordJson(written), false, () => pause("register:before-rename", home));
    // New names join the queue: this record when it is new, and an ended one moved aside.
    const added = typeof before === "object" && "refreshed" in before
      ? []
      : [name.slice(0, -".json".length)];
    if (typeof before === "object" && "movedTo" in before) added.push(before.movedTo);
    try {
      enqueue(dir, added);
    } catch { /* best effort: prune queues every record it keeps */ }
  }, { shared: true });
  pause("register:before-cleanup", home);
  try {
    await withLockIfFree(dir, async () => {
      // Records whose continuation could not be judged yet: kept (and queued again) by the
      // sweep, then looked at once more with the ledger loaded.
      const later: string[] = [];
      const unloaded = retention.load === undefined ? null : later;
      sweep(
        dir,
        REGISTER_CLEANUP_LIMIT,
        (stem) => cleanUp(dir, dirName, stem, judge, retention, now, unloaded),
      );
      if (later.length > 0 && retention.load) {
        await retention.load();
        for (const stem of later) cleanUp(dir, dirName, stem, judge, retention, now, null);
      }
    });
  } catch { /* best effort: a failed cleanup never fails the registration */ }
  // Only once the new record is written: a register that failed (a lock it gave up on) must
  // not remove the copy that is then the session's only record.
  if (oldCopy !== null) await retireOldCopy(oldCopy, record, name);
  return { path, record: written };
}

/**
 * Pure: the record a refresh of the same process writes: the new registration, with the
 * lifecycle's decisions about the process kept (parked, its successor, a continuation's hold).
 */
export function keptOnRefresh(old: SessionRecord, fresh: SessionRecord): SessionRecord {
  // What the activity hooks recorded stays too (they hold the lock alone, so none writes now).
  const activity = old.activity_at === null ? fresh : {
    ...fresh,
    activity: old.activity,
    activity_at: old.activity_at,
    open_tool_calls: old.open_tool_calls,
  };
  if (old.parked_at === null && old.successor === null && old.continuation === null) {
    return activity;
  }
  return {
    ...activity,
    parked_at: old.parked_at,
    successor: old.successor,
    continuation: old.continuation,
  };
}

/**
 * Register's cleanup of one queued record (`<stem>.json`), under the lock: re-read and judged
 * with a fresh probe, then stamped, removed or kept as the lifecycle says. Until `retention.load`
 * has run (`later` given), a record that names a continuation cannot be judged: it is kept, as
 * if held, and its name added to `later`.
 */
function cleanUp(
  dir: string,
  dirName: string,
  stem: string,
  judge: LivenessJudge,
  retention: Retention,
  now: number,
  later: string[] | null,
): Examined {
  const entry = readEntry(dir, dirName, `${stem}.json`);
  if (entry === null) return "missing";
  const row = toRow(entry, judge, true);
  let unknown = false;
  const held = (r: Row) => {
    if (r.continuation == null) return false;
    if (later === null) return retention.held(r);
    unknown = true;
    return true;
  };
  const action = cleanupAction(row, now, retention.retentionMs, held);
  if (unknown) later!.push(stem);
  if (action === "stamp" && entry.ok) {
    try {
      writeAtomic(row.path, recordJson(stamped(entry.record, row, now)), false);
    } catch { /* best effort: stamped next time */ }
  } else if (action === "remove") {
    try {
      Deno.removeSync(row.path);
      return "removed";
    } catch { /* kept: looked at again next round */ }
  }
  return "kept";
}

/** The copy an older layout holds of a process a register writes, and where it is. */
interface OldCopy {
  dir: string;
  dirName: string;
  record: SessionRecord;
}

/**
 * The copy an older roster wrote of the process `record` registers (same pid, start token,
 * boot, machine and pid namespace) in either of its older directories under sessions/, newest
 * layout first; null when there is none, and at once when there is no sessions/ (one failed
 * lookup on a hook's path, not one per older directory).
 */
function findOldCopy(root: string, record: SessionRecord, name: string): OldCopy | null {
  try {
    if (privateChild(root, SESSIONS, false) === null) return null;
  } catch {
    return null;
  }
  for (const dirName of placeDirNames(placeOf(record)).slice(1)) {
    try {
      const dir = placeDirIn(root, dirName, false);
      const entry = dir === null ? null : readEntry(dir, dirName, name);
      if (isOldCopyOf(entry, record)) return { dir: dir!, dirName, record: entry.record };
    } catch { /* unreadable: registered as new, as before */ }
  }
  return null;
}

/**
 * The migration from the older layouts under sessions/ (one directory per host, then per
 * place): once a session's record is written in its place's directory under places/, the copy
 * an older roster wrote of the same process is superseded, and removed under that directory's
 * lock. Any other record there (another namespace's, an ended session's) stays where it is,
 * read and pruned as before. Best effort.
 */
async function retireOldCopy(old: OldCopy, record: SessionRecord, name: string) {
  try {
    await withLock(old.dir, () => {
      const entry = readEntry(old.dir, old.dirName, name);
      if (isOldCopyOf(entry, record)) removeQuietly(entry.path);
    });
  } catch { /* best effort: the old copy reads as the same session until pruned */ }
}

/** Whether `e` is a copy of the record `record` (same pid, start token, boot and place). */
function isOldCopyOf(e: Entry | null, record: SessionRecord): e is Entry & { ok: true } {
  return e !== null && e.ok && e.record.session_pid === record.session_pid &&
    e.record.start_token === record.start_token && e.record.boot_id === record.boot_id &&
    e.record.machine_id === record.machine_id && e.record.pid_ns === record.pid_ns;
}

/**
 * Notes on a record how its session ended (for `roster exec`, which saw its child's status),
 * under the lock, only while the file is still that process's record (same start token): a
 * newer session that took over the pid keeps its record as it is. False when it was not.
 */
export async function markEnded(
  home: string,
  record: SessionRecord,
  endedAt: string,
  reason: string,
  judge: LivenessJudge,
): Promise<boolean> {
  const dirName = placeDirNames(placeOf(record))[0];
  // The same checked walk as every other write: no link or foreign directory on the way.
  const root = openStore(home, false);
  const dir = root === null ? null : placeDirIn(root, dirName, false);
  if (dir === null) return false;
  return await withLock(dir, () => {
    const entry = readEntry(dir, dirName, fileOf(record));
    if (entry === null || !entry.ok || entry.record.start_token !== record.start_token) {
      return false;
    }
    const ended = { ...entry.record, ended_at: endedAt, ended_reason: reason };
    writeAtomic(
      entry.path,
      JSON.stringify(ended, null, 2) + "\n",
      false,
    );
    if (reason.startsWith("exit:")) retireEarlierRuns(dir, dirName, ended, judge);
    return true;
  });
}

/**
 * The caller holds the lock. When `name` (the file `record` goes to) is the record of another
 * process (another start token or boot), it is kept under a name of its own: one that has
 * ended stamped as ended, so that registering a new session under a reused pid never erases
 * what a restore needs; one roster cannot judge (`unknown`: a clone's live session sharing the
 * place, a boot the history cannot vouch for) as it is, never taken for dead. Says what `name`
 * was: a refresh of this session's record, new, or moved aside to `movedTo` (a name without
 * `.json`, for the cleanup queue).
 */
function moveAsideEnded(
  dir: string,
  dirName: string,
  name: string,
  record: SessionRecord,
  judge: LivenessJudge,
  now: number,
): "new" | { refreshed: SessionRecord } | { movedTo: string } {
  const old = readEntry(dir, dirName, name);
  if (old === null || !old.ok) return "new";
  const same = old.record.start_token === record.start_token &&
    old.record.boot_id === record.boot_id;
  if (same) return { refreshed: old.record };
  const row = toRow(old, judge, true);
  if (row.liveness !== "dead") {
    // A record that proves its process is never traded for one that cannot: a registration
    // that read no start token says nothing of which process holds the pid.
    if (old.record.start_token !== null && record.start_token === null) {
      throw new RosterError(
        `Could not register pid ${record.session_pid}: its start token could not be read, and ` +
          `the record there has one (${row.liveness}: ${row.reason}), which is kept: ${old.path}`,
      );
    }
    // The process this pid holds now is the one registering: a record that says it is alive
    // here is of no other process, and is replaced.
    if (row.liveness === "alive") return "new";
  }
  const ended = row.liveness === "dead" ? stamped(old.record, row, now) : old.record;
  for (let i = 0; i < 5; i++) {
    // First a name of the ended session's own: two registers of one new session at once (two
    // hooks firing together, each holding the lock shared) move it to the same file, not two.
    const salt = i === 0 ? sessionSalt(old.record) : randomSuffix();
    const moved = endedName(record.session_pid, old.record.registered_at, salt);
    const there = readEntry(dir, dirName, moved);
    if (there !== null) {
      const same = i === 0 && there.ok && there.record.start_token === old.record.start_token &&
        there.record.boot_id === old.record.boot_id;
      if (same) return { movedTo: moved.slice(0, -".json".length) };
      continue;
    }
    writeAtomic(join(dir, moved), recordJson(ended), false);
    return { movedTo: moved.slice(0, -".json".length) };
  }
  return "new";
}

/** Four base-36 characters from an ended session's start token and boot (FNV-1a). */
function sessionSalt(record: SessionRecord): string {
  let h = 0x811c9dc5;
  for (const c of `${record.start_token}|${record.boot_id}`) {
    h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  }
  return (h % 36 ** 4).toString(36).padStart(4, "0");
}

const randomSuffix = () => Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, "0");
