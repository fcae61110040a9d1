/**
 * Registry operations over the store: read every row with its liveness, write a record,
 * and remove records that are gone. Mutations hold the host directory's lock, and every
 * removal re-reads and re-judges its candidate right before it acts.
 */
import { ioError } from "../errors.ts";
import { pause } from "../pause.ts";
import type { Judge } from "./liveness.ts";
import {
  hostDirName as hostDirNameOf,
  parseTime,
  RECORD_NAME,
  type Row,
  type SessionRecord,
} from "./record.ts";
import {
  ensureHostDir,
  type Entry,
  hostDir,
  hostDirPath,
  join,
  listHostDirs,
  malformedFrom,
  readEntry,
  readHostDir,
  recordPath,
  removeQuietly,
  TEMP_NAME,
  withLock,
  writeAtomic,
} from "./store.ts";

export function toRow(entry: Entry, judge: Judge, fresh = false): Row {
  if (!entry.ok) return malformedFrom(entry);
  const v = judge.judge(entry.record, fresh);
  return { ...entry.record, ...v, path: entry.path, malformed: false, detail: null };
}

/** Newest first by registered_at compared as times; ties by path, so output is stable. */
export function sortRows(rows: Row[]): Row[] {
  const key = new Map<Row, number>();
  for (const r of rows) {
    key.set(r, (r.registered_at === null ? null : parseTime(r.registered_at)) ?? -Infinity);
  }
  return rows.sort((a, b) =>
    key.get(b)! - key.get(a)! || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

/** Every row in the store, each file once, each judged at read time. */
export function readRows(home: string, judge: Judge): Row[] {
  const rows: Row[] = [];
  for (const dir of listHostDirs(home)) {
    for (const entry of readHostDir(home, dir)) rows.push(toRow(entry, judge));
  }
  return sortRows(rows);
}

/**
 * Writes (or refreshes) one record, then removes dead records of this host under the same
 * lock, best effort: a failure while cleaning never fails the registration.
 */
export async function writeRecord(
  home: string,
  record: SessionRecord,
  judge: Judge,
): Promise<string> {
  const dir = ensureHostDir(home, record.host);
  const path = recordPath(home, record.host, record.session_pid);
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
      removeWhere(home, hostDirNameOf(record.host), judge, (row) => row.liveness === "dead", {
        limit: REGISTER_CLEANUP_LIMIT,
        skip: `${record.session_pid}.json`,
      });
    } catch { /* best effort: a failed cleanup never fails the registration */ }
    return path;
  });
}

/**
 * How many records one `register` examines for cleanup. Bounded so that a hook's cost does
 * not grow with the store; each call starts at a random place, so every dead record is
 * reached over a few registrations, and `prune` always examines all of them.
 */
export const REGISTER_CLEANUP_LIMIT = 8;

/**
 * Removes, under the caller's lock, the rows of one host directory that `shouldRemove`
 * picks. Each candidate is re-read and re-judged with a fresh probe right before removal,
 * and kept if it no longer qualifies (it turned alive, or was rewritten). With `limit`,
 * examines at most that many records, from a random starting point.
 */
export function removeWhere(
  home: string,
  hostDirName: string,
  judge: Judge,
  shouldRemove: (row: Row) => boolean,
  { dryRun = false, limit = Infinity, beforeRemove, skip }: {
    dryRun?: boolean;
    limit?: number;
    beforeRemove?: () => void;
    /** A name not to examine (register's own, just written record). */
    skip?: string;
  } = {},
): { removed: Row[]; seen: number } {
  const dir = hostDirPath(home, hostDirName);
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
    const first = readEntry(dir, hostDirName, name);
    if (first === null) continue;
    seen++;
    if (!shouldRemove(toRow(first, judge))) continue;
    const again = readEntry(dir, hostDirName, name);
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

export interface PruneResult {
  removed: Row[];
  dead_removed: number;
  unknown_removed: number;
  kept: number;
}

/** Prunes every host directory: dead rows always, unknown ones older than `olderThanMs`. */
export async function prune(
  home: string,
  judge: Judge,
  olderThanMs: number | null,
  dryRun: boolean,
  now = Date.now(),
): Promise<PruneResult> {
  const removed: Row[] = [];
  let seen = 0;
  for (const name of listHostDirs(home)) {
    const dir = hostDirPath(home, name);
    const pick = (row: Row) => {
      if (row.liveness === "dead") return true;
      if (row.liveness !== "unknown" || olderThanMs === null) return false;
      const t = row.registered_at === null ? null : parseTime(row.registered_at);
      return t !== null && now - t > olderThanMs;
    };
    const run = () => {
      if (!dryRun) pause("prune:after-lock", home);
      const r = removeWhere(home, name, judge, pick, {
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

/** This host's record for `pid`, judged now with a fresh probe; null when there is none. */
export function readRecordRow(home: string, host: string, pid: number, judge: Judge): Row | null {
  const dirName = hostDirNameOf(host);
  const entry = readEntry(hostDirPath(home, dirName), dirName, `${pid}.json`);
  return entry === null ? null : toRow(entry, judge, true);
}

/** What `removeRecordIf` did with the record of one pid. */
export type RemoveOutcome =
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
  judge: Judge,
  isTheirs: (row: Row) => boolean,
): Promise<RemoveOutcome> {
  if (readRecordRow(home, host, pid, judge) === null) return { outcome: "no-record", row: null };
  return await withLock(hostDir(home, host), (): RemoveOutcome => {
    const row = readRecordRow(home, host, pid, judge);
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
