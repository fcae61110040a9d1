/**
 * The registry's store: read every row with its liveness, write a record, and remove records
 * that are gone. Reads are careful (fs/read.ts); writes are atomic; every mutation holds the
 * host directory's lock, and every removal re-reads and re-judges its candidate right before
 * it acts.
 */
import { ioError } from "../errors.ts";
import { join, privateChild, trustedDir, UntrustedError } from "../fs/dir.ts";
import { withLock } from "../fs/flock.ts";
import { listNames, readSmallFile } from "../fs/read.ts";
import { removeQuietly, writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { pause } from "../pause.ts";
import type { Probe } from "../process/types.ts";
import { parseTime } from "../time.ts";
import { hostDirName, hostDirPath, RECORD_NAME, sessionsDir, TEMP_NAME } from "./layout.ts";
import { type SessionRecord, validateRecord } from "./record.ts";
import { malformedRow, recordRow, type Row, sortRows } from "./row.ts";

/** One file read from the store: a valid record, or why it is not one. */
type Entry =
  | { ok: true; path: string; record: SessionRecord; mtimeMs: number | null }
  | {
    ok: false;
    path: string;
    filePid: number;
    dirName: string;
    mtimeMs: number | null;
    problem: string;
  };

/**
 * Reads one record file safely. Returns null when the file vanished (a racing prune or
 * unregister): it is simply not there any more.
 */
function readEntry(dir: string, dirName: string, name: string): Entry | null {
  const m = RECORD_NAME.exec(name);
  if (!m) return null;
  const filePid = Number(m[1]);
  const path = join(dir, name);
  const file = readSmallFile(path);
  if (file === null) return null;
  const bad = (problem: string): Entry => ({
    ok: false,
    path,
    filePid,
    dirName,
    mtimeMs: file.mtimeMs,
    problem,
  });
  if (!file.ok) return bad(file.problem);
  let value: unknown;
  try {
    value = JSON.parse(file.value);
  } catch {
    return bad("not valid JSON");
  }
  const checked = validateRecord(value, filePid);
  if ("problem" in checked) return bad(checked.problem);
  // A record filed under another host's directory is not to be judged against this host.
  if (hostDirName(checked.record.host) !== dirName) {
    return bad(`host differs from its directory: ${dirName}`);
  }
  return { ok: true, path, record: checked.record, mtimeMs: file.mtimeMs };
}

function toRow(entry: Entry, judge: LivenessJudge, fresh = false): Row {
  if (!entry.ok) {
    return malformedRow(entry.path, entry.filePid, entry.dirName, entry.mtimeMs, entry.problem);
  }
  return recordRow(entry.record, judge.verdict(entry.record, fresh), entry.path);
}

/**
 * The store's home as a checked, canonical path whose `sessions/` is the caller's own: no other
 * user can rewrite any directory on the way (fs/dir.ts), so what is checked here is what every
 * later call reaches. Null when there is no store yet (and `create` is not set).
 */
function openStore(home: string, create: boolean): string | null {
  const root = trustedDir(home, "the store", { create });
  if (root === null) return null;
  return privateChild(root, "sessions", create) === null ? null : root;
}

/** This host's directory in a checked store; null when it does not exist. */
function hostDirIn(root: string, host: string, create: boolean): string | null {
  return privateChild(sessionsDir(root), hostDirName(host), create);
}

/**
 * The names of the host directories under the checked store's sessions/. Each must be the
 * caller's own real directory: a link or another user's directory there is refused.
 */
function listHostDirs(root: string): string[] {
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

/** Hands every row in the store to `fn`, one at a time, each file once, judged at read time. */
export function forEachRow(home: string, judge: LivenessJudge, fn: (row: Row) => void) {
  const root = openStore(home, false);
  if (root === null) return;
  for (const dirName of listHostDirs(root)) {
    const dir = hostDirPath(root, dirName);
    for (const name of listNames(dir, "Could not read the store")) {
      const entry = readEntry(dir, dirName, name);
      if (entry !== null) fn(toRow(entry, judge));
    }
  }
}

/** Every row in the store, newest first. */
export function readRows(home: string, judge: LivenessJudge): Row[] {
  const rows: Row[] = [];
  forEachRow(home, judge, (row) => rows.push(row));
  return sortRows(rows);
}

/** This host's record for `pid`, judged now with a fresh probe; null when there is none. */
export function readRecordRow(
  home: string,
  host: string,
  pid: number,
  judge: LivenessJudge,
): Row | null {
  const root = openStore(home, false);
  const dir = root === null ? null : hostDirIn(root, host, false);
  if (dir === null) return null;
  const entry = readEntry(dir, hostDirName(host), `${pid}.json`);
  return entry === null ? null : toRow(entry, judge, true);
}

/**
 * How many records one `register` examines for cleanup. Bounded so that a hook's cost does
 * not grow with the store; each call starts at a random place, so every dead record is
 * reached over a few registrations, and `prune` always examines all of them.
 */
const REGISTER_CLEANUP_LIMIT = 8;

/**
 * Writes (or refreshes) one record, then removes dead records of this host under the same
 * lock, best effort: a failure while cleaning never fails the registration.
 */
export async function writeRecord(
  home: string,
  record: SessionRecord,
  judge: LivenessJudge,
): Promise<string> {
  const root = openStore(home, true)!;
  const dir = hostDirIn(root, record.host, true)!;
  const path = join(dir, `${record.session_pid}.json`);
  return await withLock(dir, () => {
    pause("register:after-lock", home);
    // No fsync: only a power loss could tear this write, and a power loss ends the session
    // too, so the record would be dead anyway. It saves ~1.5 ms on every hook call.
    writeAtomic(
      path,
      JSON.stringify(record, null, 2) + "\n",
      false,
      () => pause("register:before-rename", home),
    );
    pause("register:before-cleanup", home);
    try {
      removeWhere(root, hostDirName(record.host), judge, (row) => row.liveness === "dead", {
        limit: REGISTER_CLEANUP_LIMIT,
        skip: `${record.session_pid}.json`,
      });
    } catch { /* best effort: a failed cleanup never fails the registration */ }
    return path;
  });
}

/**
 * Removes, under the caller's lock, the rows of one host directory that `shouldRemove`
 * picks. Each candidate is re-read and re-judged with a fresh probe right before removal,
 * and kept if it no longer qualifies (it turned alive, or was rewritten). With `limit`,
 * examines at most that many records, from a random starting point.
 */
function removeWhere(
  root: string,
  dirName: string,
  judge: LivenessJudge,
  shouldRemove: (row: Row) => boolean,
  { dryRun = false, limit = Infinity, beforeRemove, skip }: {
    dryRun?: boolean;
    limit?: number;
    beforeRemove?: () => void;
    /** A name not to examine (register's own, just written record). */
    skip?: string;
  } = {},
): { removed: Row[]; seen: number } {
  const dir = hostDirPath(root, dirName);
  const removed: Row[] = [];
  let seen = 0;
  let names: string[];
  try {
    names = [];
    for (const e of Deno.readDirSync(dir)) {
      if (RECORD_NAME.test(e.name)) {
        if (e.name !== skip) names.push(e.name);
      } else if (!dryRun && TEMP_NAME.test(e.name)) {
        // Under the lock no writer is mid-write, so any temp file is a crashed writer's.
        removeQuietly(join(dir, e.name));
      }
    }
  } catch {
    return { removed, seen };
  }
  if (names.length > limit) {
    const start = Math.floor(Math.random() * names.length);
    names = [...names.slice(start), ...names.slice(0, start)].slice(0, limit);
  }
  for (const name of names) {
    const first = readEntry(dir, dirName, name);
    if (first === null) continue;
    seen++;
    if (!shouldRemove(toRow(first, judge))) continue;
    const again = readEntry(dir, dirName, name);
    if (again === null) continue;
    const row = toRow(again, judge, true);
    if (!shouldRemove(row)) continue;
    if (!dryRun) {
      try {
        // Only a malformed row can be a directory (a valid record is a regular file).
        if (row.malformed && Deno.lstatSync(row.path).isDirectory) continue;
        beforeRemove?.();
        Deno.removeSync(row.path);
      } catch {
        continue;
      }
    }
    removed.push(row);
  }
  return { removed, seen };
}

interface PruneResult {
  removed: Row[];
  dead_removed: number;
  unknown_removed: number;
  kept: number;
}

/** Prunes every host directory: dead rows always, unknown ones older than `olderThanMs`. */
export async function prune(
  home: string,
  judge: LivenessJudge,
  olderThanMs: number | null,
  dryRun: boolean,
  now = Date.now(),
): Promise<PruneResult> {
  const removed: Row[] = [];
  let seen = 0;
  const root = openStore(home, false);
  for (const dirName of root === null ? [] : listHostDirs(root)) {
    const dir = hostDirPath(root!, dirName);
    const pick = (row: Row) => {
      if (row.liveness === "dead") return true;
      if (row.liveness !== "unknown" || olderThanMs === null) return false;
      const t = row.registered_at === null ? null : parseTime(row.registered_at);
      return t !== null && now - t > olderThanMs;
    };
    const run = () => {
      if (!dryRun) pause("prune:after-lock", home);
      const r = removeWhere(root!, dirName, judge, pick, {
        dryRun,
        beforeRemove: () => pause("prune:before-remove", home),
      });
      seen += r.seen;
      removed.push(...r.removed);
    };
    if (dryRun) run();
    else await withLock(dir, run);
  }
  sortRows(removed);
  const dead = removed.filter((r) => r.liveness === "dead").length;
  return {
    removed,
    dead_removed: dead,
    unknown_removed: removed.length - dead,
    kept: seen - removed.length,
  };
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
 * Removes the record of `pid` on `host` if `isTheirs` says so, holding the host directory's
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
): Promise<RemoveOutcome> {
  const root = openStore(home, false);
  const dir = root === null ? null : hostDirIn(root, host, false);
  if (dir === null || readRecordRow(root!, host, pid, judge) === null) {
    return { outcome: "no-record", row: null };
  }
  return await withLock(dir, (): RemoveOutcome => {
    const row = readRecordRow(root!, host, pid, judge);
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
}
