/**
 * The store read whole, for `list`, `prune` and the other readers: host directories streamed
 * entry by entry (src/fs/dirstream.ts), so memory is bounded by a row, never by the store.
 * Kept apart from store.ts, which the hook commands load: they read only the records they name.
 */
import { ioError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { type DirStream, openDirStream } from "../fs/dirstream.ts";
import { withLock } from "../fs/flock.ts";
import { removeQuietly, writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { pause } from "../pause.ts";
import { dirHost, placeDirPath, storedPid, TEMP_NAME } from "./layout.ts";
import { pruneAction, type PruneBounds } from "./lifecycle.ts";
import { MAX_RECORD_BYTES, type SessionLink } from "./record.ts";
import type { Row } from "./row.ts";
import {
  type Entry,
  entryOf,
  listPlaceDirs,
  openStore,
  readEntry,
  recordJson,
  stamped,
  toRow,
} from "./store.ts";
import { rewriteSweep } from "./sweep.ts";

/** What join() puts between a directory and its entry (a record's path is built per row). */
const SEP = Deno.build.os === "windows" ? "\\" : "/";

/** The entry for a file of a host directory being streamed (one open, no lookup by path). */
function readEntryAt(dir: DirStream, dirName: string, name: string): Entry | null {
  const pid = storedPid(name);
  if (pid === 0) return null;
  const file = dir.readSmall(name, MAX_RECORD_BYTES);
  // Joined, not concatenated: a concatenation is a rope, and a row holding one misses
  // JSON.stringify's fast path (about 1.5 us a row for list --json, src/cli/json_element.ts).
  return file === null ? null : entryOf([dir.path, name].join(SEP), pid, dirName, file);
}

/** A checked place directory opened for streaming; null when it is not there (any more). */
function openPlaceDir(root: string, dirName: string): DirStream | null {
  const path = placeDirPath(root, dirName);
  try {
    return openDirStream(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw ioError("Could not read the store", path, err);
  }
}

/** What a `keep` filter sees of a file before its row is judged. */
export interface Fields {
  agent: string | null;
  cwd: string | null;
  session_id: string | null;
  host: string | null;
  successor: SessionLink | null;
}
const NO_FIELDS: Fields = { agent: null, cwd: null, session_id: null, host: null, successor: null };

/**
 * Every row in the store, one at a time and in no particular order, each judged as it is
 * read. `keep` sees each file's fields first: a row it refuses is never judged (no probe).
 */
export function* streamRows(
  home: string,
  judge: LivenessJudge,
  keep?: (fields: Fields) => boolean,
): Generator<Row, void, undefined> {
  const root = openStore(home, false);
  if (root === null) return;
  for (const dirName of listPlaceDirs(root)) {
    const dir = openPlaceDir(root, dirName);
    if (dir === null) continue;
    try {
      for (let e = dir.next(); e !== null; e = dir.next()) {
        const entry = readEntryAt(dir, dirName, e.name);
        if (entry === null) continue;
        if (keep && !keep(entry.ok ? entry.record : { ...NO_FIELDS, host: dirHost(dirName) })) {
          continue;
        }
        yield toRow(entry, judge);
      }
    } finally {
      dir.close();
    }
  }
}

/** Hands every row in the store to `fn`, one at a time, each file once, judged at read time. */
export function forEachRow(home: string, judge: LivenessJudge, fn: (row: Row) => void) {
  for (const row of streamRows(home, judge)) fn(row);
}

/**
 * Records examined per hold of the lock, and the longest a hold lasts: a register waits at most
 * one batch behind prune, on a loaded machine too (1,000 records took over 10 s at load 30).
 */
const PRUNE_BATCH = 1000;
const PRUNE_BATCH_MS = 100;

/** What prune did; the removed rows themselves went to its caller one by one. */
export interface PruneCounts {
  dead_removed: number;
  unknown_removed: number;
  kept: number;
  /** Ended rows kept because a continuation still holds them. */
  held: number;
  /** Parked rows kept (removed only past --older-than). */
  parked: number;
  /** Crashed rows kept for a restore (removed past retention, or with --include-crashed). */
  retained: number;
}

/**
 * Prunes every host directory: ended rows no restore needs always, unless a continuation holds
 * them; crashed rows a restore could bring back (`restorable`, none with `--include-crashed`)
 * only past retention, each stamped ended the first time prune keeps it, so its retention
 * runs; parked and unknown ones only older than `bounds.olderThanMs`. Each removed row goes to
 * `onRemoved` as it is removed. Works in batches of PRUNE_BATCH records, each under the host
 * lock, released in between: a concurrent register never waits for a whole pass. Under the
 * lock no roster writer can change a record between its read and its removal, so each is read
 * once, and judged with a probe taken under that lock.
 */
export async function prune(
  home: string,
  judge: LivenessJudge,
  bounds: PruneBounds,
  dryRun: boolean,
  held: (row: Row) => boolean,
  restorable: (row: Row) => boolean,
  onRemoved: (row: Row) => void,
  now = Date.now(),
): Promise<PruneCounts> {
  const counts: PruneCounts = {
    dead_removed: 0,
    unknown_removed: 0,
    kept: 0,
    held: 0,
    parked: 0,
    retained: 0,
  };
  const root = openStore(home, false);
  let paused = false;
  for (const dirName of root === null ? [] : listPlaceDirs(root)) {
    const dir = openPlaceDir(root!, dirName);
    if (dir === null) continue;
    // Every record kept, for the sweep queue: its name, not its row.
    const kept: string[] = [];
    // Retained rows not yet stamped ended: stamped once the directory is read (a file renamed
    // into it while it is streamed could be read twice).
    const unstamped: { name: string; token: string | null; row: Row }[] = [];
    let done = false;
    const batch = () => {
      if (!dryRun && !paused) {
        paused = true;
        pause("prune:after-lock", home);
      }
      const until = performance.now() + PRUNE_BATCH_MS;
      for (let i = 0; i < PRUNE_BATCH && (i % 16 !== 15 || performance.now() < until); i++) {
        const e = dir.next();
        if (e === null) {
          done = true;
          return;
        }
        if (storedPid(e.name) === 0) {
          // Under the lock no writer is mid-write, so any temp file is a crashed writer's.
          if (!dryRun && TEMP_NAME.test(e.name)) removeQuietly(join(dir.path, e.name));
          continue;
        }
        const entry = readEntryAt(dir, dirName, e.name);
        if (entry === null) continue;
        const row = toRow(entry, judge, true);
        const action = pruneAction(row, now, bounds, held, restorable);
        if (action !== "remove" || (!dryRun && !removeEntry(dir, e.name, home))) {
          counts.kept++;
          if (action === "held") counts.held++;
          if (action === "parked") counts.parked++;
          if (action === "retained") {
            counts.retained++;
            if (entry.ok && entry.record.ended_at === null) {
              unstamped.push({ name: e.name, token: entry.record.start_token, row });
            }
          }
          kept.push(e.name.slice(0, -".json".length));
          continue;
        }
        if (row.liveness === "dead") counts.dead_removed++;
        else counts.unknown_removed++;
        onRemoved(row);
      }
    };
    try {
      while (!done) {
        if (dryRun) batch();
        else {
          const held = performance.now();
          await withLock(dir.path, batch);
          // A moment for a waiting register to take the lock before the next batch: a tenth of
          // the hold (1 to 10 ms), so a waiter that a loaded machine is slow to wake still can.
          if (!done) {
            breathe(Math.min(10, Math.max(1, Math.round((performance.now() - held) / 10))));
          }
        }
      }
      if (!dryRun) {
        await withLock(dir.path, () => {
          stampEnded(dir.path, dirName, unstamped, now);
          rewriteSweep(dir.path, kept);
        });
      }
    } finally {
      dir.close();
    }
  }
  return counts;
}

/**
 * Stamps each retained row ended now (the caller holds the directory's lock), while its file
 * still holds that process's unstamped record: a crashed row's retention counts from when
 * roster first saw it ended, as register's cleanup stamps it; unstamped it would be kept for
 * ever. Best effort: one that fails is stamped next time.
 */
function stampEnded(
  dir: string,
  dirName: string,
  rows: { name: string; token: string | null; row: Row }[],
  now: number,
) {
  for (const { name, token, row } of rows) {
    const entry = readEntry(dir, dirName, name);
    if (entry === null || !entry.ok) continue;
    const r = entry.record;
    if (r.ended_at !== null || r.session_pid !== row.session_pid || r.start_token !== token) {
      continue;
    }
    try {
      writeAtomic(entry.path, recordJson(stamped(r, row, now)), false);
    } catch { /* best effort */ }
  }
}

/**
 * Removes a picked record's file, relative to the directory being read; false when it could
 * not or must not (a directory is never removed, a link is removed itself).
 */
function removeEntry(dir: DirStream, name: string, home: string): boolean {
  pause("prune:before-remove", home);
  return dir.remove(name);
}

let sleepCell: Int32Array | undefined;

/**
 * Sleeps `ms` with the lock released, so that a register waiting for it takes it before the
 * next batch. The thread sleeps (nothing else of this call needs to run): a timer would load
 * Deno's timer machinery, about 30 ms of CPU, for this alone.
 */
function breathe(ms: number) {
  Atomics.wait(sleepCell ??= new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
