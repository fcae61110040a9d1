/**
 * When a run of a session ends on its own (`unregister` from its end hook, `roster exec`'s
 * exit), the earlier runs of that session that crashed are no longer to be brought back: a
 * person resumed it by hand and closed it. Marked here, under the lock the caller holds.
 */
import { listNames } from "../fs/read.ts";
import { writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { parseTime } from "../time.ts";
import { storedPid } from "./layout.ts";
import { LATER_RUN_ENDED, whyNotRestorable } from "./restorable.ts";
import { readEntry, recordJson, stamped, toRow } from "./store.ts";

/**
 * Marks `ended_reason: later-run-ended` on each record in `dir` of `ended`'s session that was
 * registered before it and that a restore would relaunch (dead, not parked, not resumed, of any
 * age): the restore, and prune after it, then leave it (registry/restorable.ts). Best effort:
 * one that cannot be read or written is left as it was. Nothing is read for a session without
 * an id.
 */
export function retireEarlierRuns(
  dir: string,
  dirName: string,
  ended: { session_id: string | null; registered_at: string | null },
  judge: LivenessJudge,
  now = Date.now(),
): void {
  const sessionId = ended.session_id;
  const endedRun = parseTime(ended.registered_at ?? "");
  if (sessionId === null || endedRun === null) return;
  let names: string[];
  try {
    names = listNames(dir, "Could not read the place directory");
  } catch {
    return;
  }
  for (const name of names) {
    if (storedPid(name) === 0) continue;
    try {
      const entry = readEntry(dir, dirName, name);
      if (entry === null || !entry.ok || entry.record.session_id !== sessionId) continue;
      const run = parseTime(entry.record.registered_at);
      if (run === null || run >= endedRun) continue;
      const row = toRow(entry, judge, true);
      if (whyNotRestorable(row, now, Infinity) !== null) continue;
      const marked = { ...stamped(entry.record, row, now), ended_reason: LATER_RUN_ENDED };
      writeAtomic(entry.path, recordJson(marked), false);
    } catch { /* best effort: the next end of a run tries again */ }
  }
}
