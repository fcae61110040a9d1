/**
 * The registry's store, its reading side: a record read carefully (fs/read.ts) and judged, the
 * store's checked directories, and what every writer shares. The writers are modules of their
 * own, each loaded only by the commands that write that way: register's (store_write.ts),
 * unregister's removal (store_remove.ts), and park, resume and a continuation's hold
 * (store_update.ts); `check` and `whoami` only read. A hook's start-up grows with the code it
 * loads, not only with the code it runs (docs/performance.md, fix 14). Writes are atomic; every
 * mutation holds the host directory's lock, and every removal re-reads and re-judges its
 * candidate right before it acts.
 */
import { ioError } from "../errors.ts";
import { privateChild, trustedDir, UntrustedError } from "../fs/dir.ts";
import { baseName, join, parentOf } from "../fs/path.ts";
import { listNames, readSmallFile } from "../fs/read.ts";
import type { FileResult } from "../fs/result.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import {
  dirHost,
  isPlaceDir,
  keyArea,
  keyName,
  type Place,
  PLACE_NAME,
  placeDirNames,
  placeDirPath,
  placeKey,
  placeOf,
  PLACES,
  recordName,
  SESSIONS,
  storedPid,
} from "./layout.ts";
import { ownSessionOf } from "./lifecycle.ts";
import { MAX_RECORD_BYTES, type SessionRecord, validateRecord } from "./record.ts";
import { parseTime } from "../time.ts";
import { malformedRow, recordRow, type Row } from "./row.ts";

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
  // first layout (one directory per host) held every namespace's records.
  const record = checked.record;
  if (!isPlaceDir(dirName, placeOf(record))) {
    return badEntry(
      path,
      filePid,
      dirName,
      file.mtimeMs,
      `host differs from its directory: ${keyName(dirName)}`,
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
export function readEntry(dir: string, dirName: string, name: string): Entry | null {
  const filePid = storedPid(name);
  if (filePid === 0) return null;
  const path = join(dir, name);
  const file = readSmallFile(path, MAX_RECORD_BYTES);
  return file === null ? null : entryOf(path, filePid, dirName, file);
}

export function toRow(entry: Entry, judge: LivenessJudge, fresh = false): Row {
  if (!entry.ok) {
    const host = dirHost(entry.dirName);
    return malformedRow(entry.path, entry.filePid, host, entry.mtimeMs, entry.problem);
  }
  const { record, path } = entry;
  const judged = ownSessionOf(
    record,
    judge.verdict(record, fresh),
    judge.declared,
    () => isNewestOfItsId(judge, path, record),
  );
  return recordRow(record, judged, path);
}

/**
 * Per judge (one call) and store: for each session id the caller declares, the record of that
 * id (by `<directory>/<file>`) registered last on each host. Read once, and only when a record
 * of a declared id is seen from another pid namespace: a sandboxed tool's `list` or `whoami`.
 */
const newestDeclared = new WeakMap<LivenessJudge, Map<string, Map<string, string>>>();

/** Whether the record at `path` is the newest of its session id on its host in its store. */
function isNewestOfItsId(judge: LivenessJudge, path: string, record: SessionRecord): boolean {
  const root = parentOf(parentOf(parentOf(path)));
  let byStore = newestDeclared.get(judge);
  if (byStore === undefined) newestDeclared.set(judge, byStore = new Map());
  let newest = byStore.get(root);
  if (newest === undefined) byStore.set(root, newest = newestOf(root, judge.declared));
  return newest.get(`${record.host}\n${record.session_id}`) === fileKey(path);
}

const fileKey = (path: string) =>
  `${baseName(parentOf(parentOf(path)))}/${baseName(parentOf(path))}/${baseName(path)}`;

/**
 * The newest record of each of `ids` on each host of the store at `root` (keyed by host and
 * id); ties by file key, so every reader picks the same. A store that cannot be read answers
 * none: the records then stay `unknown`.
 */
function newestOf(root: string, ids: ReadonlySet<string>): Map<string, string> {
  const best = new Map<string, { at: number; key: string }>();
  try {
    for (const dirName of listPlaceDirs(root)) {
      const dir = placeDirPath(root, dirName);
      for (const name of listNames(dir, "Could not read the store")) {
        const e = readEntry(dir, dirName, name);
        if (e === null || !e.ok || e.record.session_id === null) continue;
        if (!ids.has(e.record.session_id)) continue;
        const id = `${e.record.host}\n${e.record.session_id}`;
        const at = parseTime(e.record.registered_at) ?? -Infinity;
        const key = fileKey(e.path);
        const was = best.get(id);
        if (was === undefined || at > was.at || (at === was.at && key > was.key)) {
          best.set(id, { at, key });
        }
      }
    }
  } catch {
    return new Map();
  }
  return new Map([...best].map(([id, { key }]) => [id, key]));
}

/**
 * The store's home as a checked, canonical path whose `places/` (and the older layouts'
 * `sessions/`, where there is one) is the caller's own: no other user can rewrite any directory
 * on the way (fs/dir.ts), so what is checked here is what every later call reaches. `create`
 * makes `places/`. Null when there is no store yet (and `create` is not set).
 */
export function openStore(home: string, create: boolean): string | null {
  const root = trustedDir(home, "the store", { create });
  if (root === null) return null;
  // sessions/ only where places/ is missing: each use of it checks it again (placeDirIn,
  // listArea), and a hook must not pay a failed lookup of a directory most homes lack.
  if (privateChild(root, PLACES, create) !== null) return root;
  return privateChild(root, SESSIONS, false) === null ? null : root;
}

/** A place's directory (by its key) in a checked store; null when it does not exist. */
export function placeDirIn(root: string, key: string, create: boolean): string | null {
  const area = keyArea(key);
  // The area's own directory is checked on the way (openStore made places/ for a create).
  const parent = privateChild(root, area, false);
  return parent === null ? null : privateChild(parent, keyName(key), create);
}

/**
 * The directories of `host` as this process sees it (its machine and pid namespace, from the
 * judge) that exist, newest layout first, each with its name.
 */
export function placeDirsIn(root: string | null, host: string, judge: LivenessJudge) {
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
 * The keys (layout.ts placeKey) of the place directories of the checked store: under places/,
 * those named as places are (PLACE_NAME), then every directory under the older layouts'
 * sessions/. Each must be the caller's own real directory: a link or another user's directory
 * there is refused.
 */
export function listPlaceDirs(root: string): string[] {
  return [...listArea(root, PLACES, PLACE_NAME), ...listArea(root, SESSIONS, null)];
}

function listArea(root: string, area: string, named: RegExp | null): string[] {
  const parent = privateChild(root, area, false);
  if (parent === null) return [];
  const keys: string[] = [];
  try {
    for (const e of Deno.readDirSync(parent)) {
      if (named !== null && !named.test(e.name)) continue;
      if (e.isSymlink) {
        throw new UntrustedError(`Store directory is a symbolic link: ${join(parent, e.name)}`);
      }
      if (e.isDirectory && privateChild(parent, e.name, false) !== null) {
        keys.push(placeKey(area, e.name));
      }
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw ioError("Could not read the store", parent, err);
  }
  return keys.sort();
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
  const root = openStore(home, false);
  if (root === null) return null;
  // One directory at a time, not placeDirsIn's list: the older layout's directory is looked
  // for only when this place's holds no record for pid. It is missing on most hosts, and a
  // process's first failed Deno call (the NotFound thrown) costs a hook about half a
  // millisecond of start-up.
  for (const dirName of placeDirNames({ ...judge.here, host })) {
    const dir = placeDirIn(root, dirName, false);
    const entry = dir === null ? null : readEntry(dir, dirName, recordName(pid, hostedSession));
    if (entry !== null) return toRow(entry, judge, true);
  }
  return null;
}

/** A record as the store's files hold it. */
export const recordJson = (record: SessionRecord) => JSON.stringify(record, null, 2) + "\n";

/** The record with when roster first saw it ended, and how (kept when already stamped). */
export function stamped(record: SessionRecord, row: Row, now: number): SessionRecord {
  return record.ended_at !== null ? record : {
    ...record,
    ended_at: new Date(now).toISOString(),
    ended_reason: row.reason,
  };
}
