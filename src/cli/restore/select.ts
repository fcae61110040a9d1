/**
 * Which sessions `roster restore` brings back, pure: every row of the store goes in, one
 * decision per interrupted session comes out (relaunch, or skip and why). A session is
 * restorable when its row is (registry/restorable.ts: died without its end hook, neither
 * parked nor resumed nor ended on its own, within retention, its harness can be told its id),
 * it runs nowhere again, and it has no newer record.
 */
import { isNameChar, replaceOthers } from "../../chars.ts";
import { isValidKey } from "../../continuation/schema.ts";
import { isAbsolute } from "../../fs/path.ts";
import { sessionKey } from "../../registry/layout.ts";
import { resumeCommand } from "../../registry/owner.ts";
import { whyNotRestorable } from "../../registry/restorable.ts";
import type { Row } from "../../registry/row.ts";
import { parseTime } from "../../time.ts";

export type Action = "relaunch" | "skip";

/** What the restore's own records say of earlier relaunches of one interruption. */
export interface Attempts {
  failures: number;
  last_reason: string | null;
  gave_up_at: string | null;
}

export interface Candidate {
  row: Row;
  /** One key per interruption: the continuation's and the attempts' file name. */
  key: string;
  /** The harness's resume command, or null when there is none. */
  command: string[] | null;
  /** Variables of the caller's environment this harness's relaunch passes on. */
  envNames: readonly string[];
  /** Its start hook runs only at the first prompt: the relaunch cannot be seen registering. */
  registersAtFirstPrompt: boolean;
  action: Action;
  reason: string;
  failures: number;
}

export interface Selection {
  agents: string[];
  sessionIds: string[];
  now: number;
  retentionMs: number;
  maxFailures: number;
  attempts: (key: string) => Attempts | null;
  /** Whether an executable of this name is on the relaunch's PATH. */
  onPath: (bin: string) => boolean;
  /** Whether this absolute path is a directory (links followed): where tmux starts the relaunch. */
  isDirectory: (path: string) => boolean;
}

/** The most characters a ledger key holds (continuation/schema.ts KEY_RULE). */
const MAX_KEY = 128;

/**
 * The key of one interruption: the session and the process run that died, each character a
 * file name cannot hold made `_` (a start token's `darwin:`). Where that is longer than a key
 * holds, a prefix of it and the hash of the whole (layout.ts sessionKey): two long ids alike in
 * their first 128 characters never share a key, a plan or a count of failures. Every key that
 * fits is the one earlier releases made, so a continue claimed under one is still decided.
 */
export function restoreKey(row: Pick<Row, "session_id" | "start_token" | "session_pid">): string {
  const raw = `r-${row.session_id ?? "none"}-${row.start_token ?? row.session_pid ?? "none"}`;
  const named = replaceOthers(raw, isNameChar, "_");
  if (isValidKey(named)) return named;
  const hash = sessionKey(raw);
  return `${named.slice(0, MAX_KEY - hash.length - 1)}-${hash}`;
}

const newest = (a: Row, b: Row) =>
  (parseTime(b.registered_at ?? "") ?? 0) - (parseTime(a.registered_at ?? "") ?? 0);

/** Whether a row may be the record of an interrupted session at all (else it is not listed). */
function interrupted(row: Row): boolean {
  if (row.malformed) return false;
  if (row.liveness === "dead") return true;
  // A hosted session while its server runs: listed, so that a person sees why it is left.
  return row.liveness === "unknown" && row.reason === "hosted";
}

/** Pure: one decision per interrupted session the filters name, newest first. */
export function selectSessions(rows: Row[], sel: Selection): Candidate[] {
  const named = (r: Row) =>
    (sel.agents.length === 0 || sel.agents.includes(r.agent ?? "")) &&
    (sel.sessionIds.length === 0 ||
      sel.sessionIds.includes(r.session_id ?? "") ||
      sel.sessionIds.includes(r.native_session_id ?? ""));
  // Any record of a session not judged dead may be that session running: alive here, or
  // unknown (run in another pid namespace or on another host, hosted by a running server).
  // Relaunching beside it would make two copies of one conversation. An alive one is named first.
  const live = new Map<string, Row>();
  for (const r of rows) {
    if (r.malformed || r.liveness === "dead" || !r.session_id) continue;
    if (live.get(r.session_id)?.liveness !== "alive") live.set(r.session_id, r);
  }
  const picked = rows.filter((r) => interrupted(r) && named(r)).sort(newest);
  // A session's newest record speaks for it, whatever is decided of it: parked, ended on its
  // own, given up or relaunched, an older crash of the same session is not brought back.
  const seen = new Map<string, Row>();
  return picked.map((row) => {
    const decision = decide(row, sel, live, seen);
    if (row.session_id && !seen.has(row.session_id)) seen.set(row.session_id, row);
    return decision;
  });
}

function decide(
  row: Row,
  sel: Selection,
  live: Map<string, Row>,
  seen: Map<string, Row>,
): Candidate {
  const key = restoreKey(row);
  const resume = resumeCommand(row.agent, row.session_id, row.hosted === true);
  const command = "argv" in resume ? resume.argv : null;
  const attempts = sel.attempts(key);
  const base = {
    row,
    key,
    command,
    envNames: "env" in resume ? resume.env : [],
    registersAtFirstPrompt: "argv" in resume && resume.registersAtFirstPrompt,
    failures: attempts?.failures ?? 0,
  };
  const skip = (reason: string): Candidate => ({ ...base, action: "skip", reason });
  // The row's own part of the rule, which prune keeps rows by too.
  const why = whyNotRestorable(row, sel.now, sel.retentionMs);
  if (why !== null) return skip(why);
  const running = live.get(row.session_id!);
  if (running && running !== row) {
    return skip(
      running.liveness === "alive"
        ? `running again as pid ${running.session_pid}`
        : `it may be running as pid ${running.session_pid}: ${running.liveness} (${running.reason})`,
    );
  }
  const newer = seen.get(row.session_id!);
  if (newer) return skip(`superseded by the newer record of pid ${newer.session_pid}`);
  if (attempts !== null && attempts.failures >= sel.maxFailures) {
    return skip(
      `gave up after ${attempts.failures} failed relaunches` +
        (attempts.last_reason ? `: ${attempts.last_reason}` : ""),
    );
  }
  if (!sel.onPath(command![0])) return skip(`${command![0]} is not on PATH`);
  // tmux starts a window whose directory is gone in another one, and says nothing; a harness
  // resumed there (Claude Code keeps conversations by directory) is not the session it was.
  const cwd = row.cwd ?? "";
  if (cwd === "") return skip("its working directory is not recorded");
  if (!isAbsolute(cwd)) return skip(`its working directory is not an absolute path: ${cwd}`);
  if (!sel.isDirectory(cwd)) return skip(`its working directory is gone: ${cwd}`);
  const how = `${row.liveness} (${row.reason})`;
  return {
    ...base,
    action: "relaunch",
    reason: attempts && attempts.failures > 0
      ? `${how}; ${attempts.failures} failed relaunch${attempts.failures > 1 ? "es" : ""} before`
      : how,
  };
}
