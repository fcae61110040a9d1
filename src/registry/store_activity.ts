/**
 * The store's side of `roster activity`: what a session's hooks say it is doing, written into
 * its own record (re-read under the place directory's lock, replaced atomically). Loaded only
 * by that command, which runs on every prompt and tool call (store.ts).
 */
import { withLock } from "../fs/flock.ts";
import { join } from "../fs/path.ts";
import { exists } from "../fs/read.ts";
import { writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { placeDirNames, recordName } from "./layout.ts";
import { RosterError } from "../errors.ts";
import { encodeUtf8 } from "../utf8.ts";
import {
  type ActivityChange,
  MAX_RECORD_BYTES,
  type SessionRecord,
  withActivity,
} from "./record.ts";
import { recordRow, type Row } from "./row.ts";
import { openStore, placeDirIn, readEntry, recordJson } from "./store.ts";

/** What an activity hook found: its record changed, or why nothing was written. */
export type ActivityOutcome =
  | { outcome: "recorded"; row: Row }
  | { outcome: "no-record"; row: null }
  /** The pid's record is another process's, or not valid: it is left as it is. */
  | { outcome: "not-this-process"; row: Row | null };

/**
 * What the lifecycle may add to a record after its activity is written (an ended stamp,
 * `parked_at`, a successor, a continuation naming its ledger's path): activity leaves room
 * for it, or the next writer would push the record past what the store reads.
 */
const LIFECYCLE_RESERVE = 6 * 1024;
/** The most an activity writes: what the store reads, less that reserve. */
const ACTIVITY_ROOM = MAX_RECORD_BYTES - LIFECYCLE_RESERVE;

/**
 * The record's text, with its oldest open tool calls dropped until it fits what the store
 * reads (MAX_RECORD_BYTES) with LIFECYCLE_RESERVE to spare: ids and names of 256 characters,
 * escaped or not ASCII, can make 64 calls larger than that, and a record the store cannot read
 * is lost to every later look. Without calls, a record that fits the cap alone (a register
 * near it) is still written; null when even that does not fit.
 */
function fittingJson(record: SessionRecord): { json: string; record: SessionRecord } | null {
  for (let r = record;; r = { ...r, open_tool_calls: r.open_tool_calls.slice(1) }) {
    const json = recordJson(r);
    // At most this many bytes: a UTF-16 unit is at most 3 bytes of UTF-8, so most records
    // need no encoding to know they fit.
    const bound = json.length * 3;
    const size = bound <= ACTIVITY_ROOM ? bound : encodeUtf8(json).length;
    if (size <= ACTIVITY_ROOM) return { json, record: r };
    if (r.open_tool_calls.length === 0) {
      return size <= MAX_RECORD_BYTES ? { json, record: r } : null;
    }
  }
}

/**
 * Records `change` in the record of the live session `pid` (with `hostedSession`, that session
 * of the shared server `pid`). Only while the record is still that process's (its start token
 * matches the process now): the late hook of a session that has gone never writes into the
 * record of a newer one that got its pid. The lock is held alone, so the read-change-write
 * never interleaves with another activity hook (parallel tool calls) or a register (which
 * holds it shared and carries these fields over on a refresh). `own` says which verdicts make
 * the record this process's (default: its start token matches, or it has none to compare).
 */
export async function recordActivity(
  home: string,
  host: string,
  judge: LivenessJudge,
  pid: number,
  hostedSession: string | null,
  change: ActivityChange,
  own: (reason: string) => boolean = (r) => r === "running" || r === "pid-only",
): Promise<ActivityOutcome> {
  const now = Date.now();
  const root = openStore(home, false);
  if (root === null) return { outcome: "no-record", row: null };
  const name = recordName(pid, hostedSession);
  for (const dirName of placeDirNames({ ...judge.here, host })) {
    const dir = placeDirIn(root, dirName, false);
    // Read under the lock only: before it, whether the record is there picks the directory.
    if (dir === null || !exists(join(dir, name))) continue;
    return await withLock(dir, (): ActivityOutcome => {
      const entry = readEntry(dir, dirName, name);
      if (entry === null) return { outcome: "no-record", row: null };
      if (!entry.ok) return { outcome: "not-this-process", row: null };
      const verdict = judge.verdict(entry.record, true);
      if (!own(verdict.reason)) {
        return {
          outcome: "not-this-process",
          row: recordRow(entry.record, verdict, entry.path),
        };
      }
      const fit = fittingJson(withActivity(entry.record, change, now));
      if (fit === null) {
        throw new RosterError(
          `Cannot record the activity: the record would be larger than ${MAX_RECORD_BYTES} ` +
            `bytes: ${entry.path}`,
        );
      }
      writeAtomic(entry.path, fit.json, false);
      return { outcome: "recorded", row: recordRow(fit.record, verdict, entry.path) };
    });
  }
  return { outcome: "no-record", row: null };
}
