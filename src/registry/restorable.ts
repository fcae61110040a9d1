/**
 * Whether a row is the record of a crashed session that a restore can bring back, judged by
 * the row alone, pure: `roster restore` selects from these rows, and `prune` keeps them.
 */
import { parseTime } from "../time.ts";
import { resumeCommand } from "./owner.ts";
import type { Row } from "./row.ts";

/** The ended_reason of a crashed run whose session a later run resumed and ended on its own. */
export const LATER_RUN_ENDED = "later-run-ended";

/**
 * Pure: why `row` is not a crashed session a restore could relaunch, as of `now` with the
 * retention `retentionMs`; null when it is one: dead without its end hook, neither parked nor
 * resumed nor ended on its own (`roster exec`'s `exit:N`), within retention (an ended row not
 * yet stamped is), with a resume command its harness takes. What only the whole store tells
 * (the session running again, a newer record of it) is the restore's to add.
 */
export function whyNotRestorable(row: Row, now: number, retentionMs: number): string | null {
  if (row.malformed) return "malformed";
  if (row.reason === "parked") return "parked: set aside on purpose";
  if (row.successor) return `resumed: continued by pid ${row.successor.pid}`;
  if (row.reason === "resumed") return "resumed";
  if (row.liveness !== "dead") {
    return row.reason === "hosted"
      ? "hosted: its server still runs"
      : `${row.liveness} (${row.reason})`;
  }
  if (row.ended_reason?.startsWith("exit:")) return `ended on its own (${row.ended_reason})`;
  if (row.ended_reason === LATER_RUN_ENDED) return "a later run of it ended on its own";
  const ended = parseTime(row.ended_at ?? "");
  if (ended !== null && now - ended > retentionMs) return "past retention";
  const resume = resumeCommand(row.agent, row.session_id, row.hosted === true);
  return "problem" in resume ? resume.problem : null;
}
