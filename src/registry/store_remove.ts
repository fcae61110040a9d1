/**
 * The store's removal of one session's record, for `unregister` (a session-end hook): under the
 * host directory's lock, the record re-read and re-judged right before it goes. Loaded only by
 * unregister (store.ts).
 */
import { ioError } from "../errors.ts";
import { withLock } from "../fs/flock.ts";
import { join } from "../fs/path.ts";
import { exists } from "../fs/read.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import type { Probe } from "../process/types.ts";
import { listNames } from "../fs/read.ts";
import { recordName, storedPid } from "./layout.ts";
import type { Row } from "./row.ts";
import { openStore, placeDirsIn, readEntry, toRow } from "./store.ts";
import { retireEarlierRuns } from "./store_retire.ts";

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
    // Read and judged under the lock only: before it, whether the record is there is enough.
    if (!exists(join(dir, name))) continue;
    const one = await withLock(dir, (): RemoveOutcome => {
      const remove = (row: Row): RemoveOutcome => {
        try {
          Deno.removeSync(row.path);
        } catch (err) {
          if (err instanceof Deno.errors.NotFound) return { outcome: "no-record", row: null };
          throw ioError("Could not remove the record", row.path, err);
        }
        // Its session ended on its own: an earlier run of it that crashed is not brought back.
        if (!row.malformed) retireEarlierRuns(dir, dirName, row, judge);
        return { outcome: "removed", row };
      };
      const row = read(dir, dirName);
      if (row !== null && isTheirs(row)) return remove(row);
      // Another machine's session under this pid took the usual name (register moves a record
      // it cannot judge aside, as the clone's did with this one): this process's own record,
      // running, under a name of its own.
      const moved = hostedSession === null ? movedAside(dir, dirName, pid, judge) : null;
      if (moved !== null && isTheirs(moved)) return remove(moved);
      return row === null ? { outcome: "no-record", row: null } : { outcome: "kept", row };
    });
    if (result.outcome !== "removed" && one.outcome !== "no-record") result = one;
  }
  return result;
}

/**
 * The record of `pid` under a name of its own (`<pid>.<suffix>.json`, where register moves a
 * record it cannot judge) that is the calling process's: judged `running`, its token this
 * process's. An earlier, ended run moved aside the same way is never taken for it.
 */
function movedAside(dir: string, dirName: string, pid: number, judge: LivenessJudge): Row | null {
  const usual = recordName(pid);
  for (const name of listNames(dir, "Could not read the place directory")) {
    if (name === usual || storedPid(name) !== pid) continue;
    const entry = readEntry(dir, dirName, name);
    const row = entry === null ? null : toRow(entry, judge, true);
    if (row !== null && !row.malformed && row.reason === "running") return row;
  }
  return null;
}
