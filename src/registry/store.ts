/**
 * The registry's store: read every row with its liveness, write a record, and remove records
 * that are gone. Reads are careful (fs/read.ts); writes are atomic; every mutation holds the
 * host directory's lock, and every removal re-reads and re-judges its candidate right before
 * it acts.
 */
import { ioError, UsageError } from "../errors.ts";
import { join, privateChild, trustedDir, UntrustedError } from "../fs/dir.ts";
import { withLock, withLockIfFree } from "../fs/flock.ts";
import { listNames, readSmallFile } from "../fs/read.ts";
import type { FileResult } from "../fs/result.ts";
import { removeQuietly, writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { pause } from "../pause.ts";
import type { Probe } from "../process/types.ts";
import { parseTime } from "../time.ts";
import {
  dirHost,
  hostDirName,
  type Place,
  placeDirName,
  placeDirNames,
  placeOf,
  recordDirName,
  recordName,
  sessionsDir,
  STORED_NAME,
} from "./layout.ts";
import { cleanupAction, DEFAULT_RETENTION_MS, endedName } from "./lifecycle.ts";
import {
  type ContinuationHold,
  type SessionLink,
  type SessionRecord,
  validateRecord,
} from "./record.ts";
import { malformedRow, recordRow, type Row } from "./row.ts";
import type { Examined } from "./sweep.ts";

/**
 * The sweep queue's module, loaded by `writeRecord` alone: unregister, check and whoami use
 * this module too, and never the queue. A variable, not a literal, so `deno run` does not
 * read it before main.ts starts (src/cli/spec.ts lazy()).
 */
const SWEEP_MODULE = "./sweep.ts";

/** One file read from the store: a valid record, or why it is not one. */
export type Entry =
  | { ok: true; path: string; record: SessionRecord; mtimeMs: number | null }
  | {
    ok: false;
    path: string;
    filePid: number;
    dirName: string;
    mtimeMs: number | null;
    problem: string;
  };

/** The entry for what a careful read of the record file `path` (named for `filePid`) returned. */
export function entryOf(
  path: string,
  filePid: number,
  dirName: string,
  file: FileResult<string>,
): Entry {
  if (!file.ok) return badEntry(path, filePid, dirName, file.mtimeMs, file.problem);
  let value: unknown;
  try {
    value = JSON.parse(file.value);
  } catch {
    return badEntry(path, filePid, dirName, file.mtimeMs, "not valid JSON");
  }
  const checked = validateRecord(value, filePid);
  if ("problem" in checked) {
    return badEntry(path, filePid, dirName, file.mtimeMs, checked.problem);
  }
  // A record filed under another place's directory is not to be judged as that place's. The
  // layout before places (one directory per host) held every namespace's records.
  const record = checked.record;
  if (recordDirName(record) !== dirName && hostDirName(record.host) !== dirName) {
    return badEntry(
      path,
      filePid,
      dirName,
      file.mtimeMs,
      `host differs from its directory: ${dirName}`,
    );
  }
  return { ok: true, path, record, mtimeMs: file.mtimeMs };
}

function badEntry(
  path: string,
  filePid: number,
  dirName: string,
  mtimeMs: number | null,
  problem: string,
): Entry {
  return { ok: false, path, filePid, dirName, mtimeMs, problem };
}

/**
 * Reads one record file safely. Returns null when the file vanished (a racing prune or
 * unregister): it is simply not there any more.
 */
function readEntry(dir: string, dirName: string, name: string): Entry | null {
  const m = STORED_NAME.exec(name);
  if (!m) return null;
  const path = join(dir, name);
  const file = readSmallFile(path);
  return file === null ? null : entryOf(path, Number(m[1]), dirName, file);
}

export function toRow(entry: Entry, judge: LivenessJudge, fresh = false): Row {
  if (!entry.ok) {
    const host = dirHost(entry.dirName);
    return malformedRow(entry.path, entry.filePid, host, entry.mtimeMs, entry.problem);
  }
  return recordRow(entry.record, judge.verdict(entry.record, fresh), entry.path);
}

/**
 * The store's home as a checked, canonical path whose `sessions/` is the caller's own: no other
 * user can rewrite any directory on the way (fs/dir.ts), so what is checked here is what every
 * later call reaches. Null when there is no store yet (and `create` is not set).
 */
export function openStore(home: string, create: boolean): string | null {
  const root = trustedDir(home, "the store", { create });
  if (root === null) return null;
  return privateChild(root, "sessions", create) === null ? null : root;
}

/** A place's directory (by its name) in a checked store; null when it does not exist. */
function placeDirIn(root: string, dirName: string, create: boolean): string | null {
  return privateChild(sessionsDir(root), dirName, create);
}

/**
 * The directories of `host` as this process sees it (its machine and pid namespace, from the
 * judge) that exist, newest layout first, each with its name.
 */
function placeDirsIn(root: string | null, host: string, judge: LivenessJudge) {
  const place: Place = { ...judge.here, host };
  const dirs: { dir: string; dirName: string }[] = [];
  if (root === null) return dirs;
  for (const dirName of placeDirNames(place)) {
    const dir = placeDirIn(root, dirName, false);
    if (dir !== null) dirs.push({ dir, dirName });
  }
  return dirs;
}

/**
 * The names of the host directories under the checked store's sessions/. Each must be the
 * caller's own real directory: a link or another user's directory there is refused.
 */
export function listHostDirs(root: string): string[] {
  const sessions = sessionsDir(root);
  const names: string[] = [];
  try {
    for (const e of Deno.readDirSync(sessions)) {
      if (e.isSymlink) {
        throw new UntrustedError(`Store directory is a symbolic link: ${join(sessions, e.name)}`);
      }
      if (e.isDirectory && privateChild(sessions, e.name, false) !== null) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw ioError("Could not read the store", sessions, err);
  }
  return names.sort();
}

/**
 * This host's record for `pid` (with `hostedSession`, the record of that session hosted by the
 * shared server `pid`), judged now with a fresh probe; null when there is none.
 */
export function readRecordRow(
  home: string,
  host: string,
  pid: number,
  judge: LivenessJudge,
  hostedSession: string | null = null,
): Row | null {
  for (const { dir, dirName } of placeDirsIn(openStore(home, false), host, judge)) {
    const entry = readEntry(dir, dirName, recordName(pid, hostedSession));
    if (entry !== null) return toRow(entry, judge, true);
  }
  return null;
}

/**
 * How many records one `register` examines for cleanup: bounded so that a hook's cost does
 * not grow with the store. The candidates come from the sweep queue (./sweep.ts), never from
 * a listing of the directory; `prune` examines every record.
 */
const REGISTER_CLEANUP_LIMIT = 8;

/** What the lifecycle needs from the caller: the retention window and open continuations. */
export interface Keeping {
  retentionMs: number;
  /**
   * Whether a continuation still holds this row (its key is not finished); null when that
   * cannot be told before `load` has run.
   */
  held: (row: Row) => boolean | null;
  /** Loads what `held` needs to answer for every row (the continuation ledger). */
  load?: () => Promise<void>;
}

export const recordJson = (record: SessionRecord) => JSON.stringify(record, null, 2) + "\n";

/** The file name a record is written under (layout.ts recordName). */
const fileOf = (record: SessionRecord) =>
  recordName(record.session_pid, record.hosted ? record.session_id : null);

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
  keeping: Keeping = { retentionMs: DEFAULT_RETENTION_MS, held: () => false },
  now = Date.now(),
): Promise<string> {
  const root = openStore(home, true)!;
  const dirName = placeDirName(placeOf(record));
  const dir = placeDirIn(root, dirName, true)!;
  const name = fileOf(record);
  const path = join(dir, name);
  const { enqueue, sweep }: typeof import("./sweep.ts") = await import(SWEEP_MODULE);
  await withLock(dir, () => {
    pause("register:after-lock", home);
    const before = moveAsideEnded(dir, dirName, name, record, judge, now);
    // No fsync: only a power loss could tear this write, and a power loss ends the session
    // too, so the record would be dead anyway. It saves ~1.5 ms on every hook call.
    writeAtomic(path, recordJson(record), false, () => pause("register:before-rename", home));
    // New names join the queue: this record when it is new, and an ended one moved aside.
    const added = before === "refreshed" ? [] : [name.slice(0, -".json".length)];
    if (typeof before === "object") added.push(before.movedTo);
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
      sweep(
        dir,
        REGISTER_CLEANUP_LIMIT,
        (stem) => cleanUp(dir, dirName, stem, judge, keeping, now, later),
      );
      if (later.length > 0 && keeping.load) {
        await keeping.load();
        for (const stem of later) cleanUp(dir, dirName, stem, judge, keeping, now, []);
      }
    });
  } catch { /* best effort: a failed cleanup never fails the registration */ }
  // Only once the new record is written: a register that failed (a lock it gave up on) must
  // not remove the copy that is then the session's only record.
  await retireOldCopy(root, record, name);
  return path;
}

/**
 * Register's cleanup of one queued record (`<stem>.json`), under the lock: re-read and judged
 * with a fresh probe, then stamped, removed or kept as the lifecycle says. A record whose
 * continuation cannot be judged yet is kept and its name added to `later`.
 */
function cleanUp(
  dir: string,
  dirName: string,
  stem: string,
  judge: LivenessJudge,
  keeping: Keeping,
  now: number,
  later: string[],
): Examined {
  const entry = readEntry(dir, dirName, `${stem}.json`);
  if (entry === null) return "missing";
  const row = toRow(entry, judge, true);
  let unknown = false;
  const held = (r: Row) => {
    const h = keeping.held(r);
    if (h === null) unknown = true;
    return h ?? true;
  };
  const action = cleanupAction(row, now, keeping.retentionMs, held);
  if (unknown) later.push(stem);
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

/**
 * The migration from one directory per host: once a session's record is written in its
 * place's directory, the copy an older roster wrote of the same process (same pid, start token,
 * boot, machine and pid namespace) in the host's directory is superseded, and removed under
 * that directory's lock. Any other record there (another namespace's, an ended session's) stays
 * where it is, read and pruned as before. Best effort.
 */
async function retireOldCopy(root: string, record: SessionRecord, name: string) {
  const oldName = hostDirName(record.host);
  if (oldName === placeDirName(placeOf(record))) return;
  const dir = placeDirIn(root, oldName, false);
  if (dir === null) return;
  const same = (e: Entry | null) =>
    e !== null && e.ok && e.record.session_pid === record.session_pid &&
    e.record.start_token === record.start_token && e.record.boot_id === record.boot_id &&
    e.record.machine_id === record.machine_id && e.record.pid_ns === record.pid_ns;
  try {
    if (!same(readEntry(dir, oldName, name))) return;
    await withLock(dir, () => {
      const entry = readEntry(dir, oldName, name);
      if (same(entry)) removeQuietly(entry!.path);
    });
  } catch { /* best effort: the old copy reads as the same session until pruned */ }
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
): Promise<boolean> {
  const dirName = placeDirName(placeOf(record));
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
    return true;
  });
}

/**
 * The caller holds the lock. When `name` (the file `record` goes to) is the record of another
 * process (another start token or boot) that has ended, it is kept under a name of its own,
 * stamped as ended, so that registering a new session under a reused pid never erases what a
 * restore needs. Says what `name` was: a refresh of this session's record, new (or replaced),
 * or moved aside to `movedTo` (a name without `.json`, for the cleanup queue).
 */
function moveAsideEnded(
  dir: string,
  dirName: string,
  name: string,
  record: SessionRecord,
  judge: LivenessJudge,
  now: number,
): "refreshed" | "new" | { movedTo: string } {
  const old = readEntry(dir, dirName, name);
  if (old === null || !old.ok) return "new";
  const same = old.record.start_token === record.start_token &&
    old.record.boot_id === record.boot_id;
  if (same) return "refreshed";
  const row = toRow(old, judge, true);
  if (row.liveness !== "dead") return "new";
  const ended = stamped(old.record, row, now);
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

/** The record with when roster first saw it ended, and how (kept when already stamped). */
export function stamped(record: SessionRecord, row: Row, now: number): SessionRecord {
  return record.ended_at !== null ? record : {
    ...record,
    ended_at: new Date(now).toISOString(),
    ended_reason: row.reason,
  };
}

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
 * Whether a session-end hook may remove this record: it is still the calling process's
 * (same pid and start token; or, for a record without a token, a process whose token cannot
 * be read either), or no process holds its pid any more, so it is nobody's. A record another
 * process with the same pid wrote, or one that cannot be judged, is left alone.
 */
export function mayUnregister(row: Row, probe: Probe): boolean {
  if (row.malformed) return false;
  switch (row.reason) {
    case "running":
    case "hosted": // the same server process still holds the pid: the named session's record
    case "exited":
    case "zombie":
      return true;
    case "pid-only":
      return probe.kind === "exists" && probe.info.startToken === null;
    default:
      return false;
  }
}

/** What `removeRecordIf` did with the record of one pid. */
type RemoveOutcome =
  | { outcome: "no-record"; row: null }
  | { outcome: "removed" | "kept"; row: Row };

/**
 * Removes the record of `pid` on `host` (with `hostedSession`, that session's record on the
 * shared server `pid`) if `isTheirs` says so, holding the host directory's
 * lock, with the record re-read and re-judged (fresh probe) right before removal: a record a
 * newer session has just rewritten is judged as it is now. Never creates the store: with no
 * record there is nothing to lock.
 */
export async function removeRecordIf(
  home: string,
  host: string,
  pid: number,
  judge: LivenessJudge,
  isTheirs: (row: Row) => boolean,
  hostedSession: string | null = null,
): Promise<RemoveOutcome> {
  const name = recordName(pid, hostedSession);
  const read = (dir: string, dirName: string) => {
    const entry = readEntry(dir, dirName, name);
    return entry === null ? null : toRow(entry, judge, true);
  };
  // This place's directory, then the host's of the older layout: a session registered before
  // the upgrade ends after it.
  let result: RemoveOutcome = { outcome: "no-record", row: null };
  for (const { dir, dirName } of placeDirsIn(openStore(home, false), host, judge)) {
    if (read(dir, dirName) === null) continue;
    const one = await withLock(dir, (): RemoveOutcome => {
      const row = read(dir, dirName);
      if (row === null) return { outcome: "no-record", row: null };
      if (!isTheirs(row)) return { outcome: "kept", row };
      try {
        Deno.removeSync(row.path);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return { outcome: "no-record", row: null };
        throw ioError("Could not remove the record", row.path, err);
      }
      return { outcome: "removed", row };
    });
    if (result.outcome !== "removed" && one.outcome !== "no-record") result = one;
  }
  return result;
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
