/**
 * The session lifecycle, pure: how long an ended session's row is kept (the retention window,
 * a continuation holding it, parking), what register's cleanup and prune do with a row, and
 * the predecessor links `list` shows. The I/O that acts on these decisions is store.ts.
 */
import { lastWrittenMs, ownSessionVerdict, type Verdict } from "../identity/liveness.ts";
import { parseDuration, parseTime } from "../time.ts";
import type { SessionLink } from "./record.ts";
import type { Row } from "./row.ts";

/** How long an ended row is kept after roster first saw it ended, unless configured. */
export const DEFAULT_RETENTION_MS = 24 * 3_600_000;
export const RETENTION_ENV = "ROSTER_RETENTION";

/** `$ROSTER_RETENTION` (a duration such as 36h or 7d; 0s keeps nothing), else the default. */
export function retentionMs(env: (name: string) => string | undefined): number {
  const v = env(RETENTION_ENV);
  return v === undefined || v === "" ? DEFAULT_RETENTION_MS : parseDuration(v, RETENTION_ENV, true);
}

/**
 * The lifecycle overrides the process's liveness: a resumed session lives on in its successor
 * and a parked one is set aside on purpose, so neither is ever live, whatever holds its pid.
 * A session a shared server hosts is not known to be live while its server runs (the server
 * outlives the session's terminal and keeps it loaded): `unknown (hosted)`, never `alive`.
 */
export function lifecycleVerdict(
  record: { successor?: SessionLink | null; parked_at?: string | null; hosted?: boolean },
  judged: Verdict,
): Verdict {
  if (record.successor) return { liveness: "dead", reason: "resumed" };
  if (record.parked_at) return { liveness: "dead", reason: "parked" };
  // Only on the server's word: a caller inside the session (own-session) knows that it runs.
  if (record.hosted && (judged.reason === "running" || judged.reason === "pid-only")) {
    return { liveness: "unknown", reason: "hosted" };
  }
  return judged;
}

/** What ownSessionOf looks at in a record. */
export interface OwnSessionFacts {
  session_id: string | null;
  ended_at: string | null;
  parked_at: string | null;
  successor: SessionLink | null;
}

/**
 * Pure: a record seen from another pid namespace of its machine (a harness's tools in their
 * sandbox) is the caller's own, `alive (own-session)`, only when the caller declares its
 * session id, the lifecycle has not ended it (stamped ended from its own namespace, parked,
 * resumed), and it is the newest record of that id (`newest`): session ids outlive processes
 * (`claude --resume <id>`, `codex resume <id>`, an inner harness inheriting the outer's), so
 * of several records of one id only the newest can be the caller's. Otherwise the verdict
 * stands: `unknown (other-pid-ns)`, never `alive`.
 */
export function ownSessionOf(
  record: OwnSessionFacts,
  judged: Verdict,
  declared: ReadonlySet<string>,
  newest: () => boolean,
): Verdict {
  const own = ownSessionVerdict(judged, record.session_id, declared);
  if (own === judged) return judged;
  if (record.ended_at !== null || record.parked_at !== null || record.successor !== null) {
    return judged;
  }
  return newest() ? own : judged;
}

/**
 * What the registry does with one examined row: keep it (held, parked, retained: kept,
 * counted), stamp it, remove it.
 */
export type RowAction = "keep" | "stamp" | "remove" | "held" | "parked" | "retained";

/**
 * Register's bounded cleanup. Only ended rows are touched. The first time one is examined it
 * is stamped with when roster saw it ended (`ended_at`), and the retention window counts from
 * then: a session that ran for days is not removed the moment it ends. A parked row, and a row
 * whose continuation is still open (`held`), are kept whatever their age.
 */
export function cleanupAction(
  row: Row,
  now: number,
  retention: number,
  held: (row: Row) => boolean,
): RowAction {
  if (row.liveness !== "dead" || row.malformed) return "keep";
  if (row.reason === "parked") return "keep";
  if (row.ended_at === null || row.ended_at === undefined) return "stamp";
  if (held(row)) return "keep";
  const ended = parseTime(row.ended_at);
  return ended !== null && now - ended > retention ? "remove" : "keep";
}

/** What prune is asked to remove beyond ended rows no restore needs. */
export interface PruneBounds {
  /** `--older-than`: unknown rows and parked ones older than this too; null: none. */
  olderThanMs: number | null;
}

/**
 * Prune's choice: an ended row goes, except one a continuation still holds and one a restore
 * could bring back (`restorable`: registry/restorable.ts, which counts retention; with
 * `--include-crashed` the caller calls none restorable), kept until it is past retention; a parked row (set aside on purpose) and
 * an unknown one only past `olderThanMs` (from its registration or its activity, the newer),
 * which never shortens retention.
 */
export function pruneAction(
  row: Row,
  now: number,
  bounds: PruneBounds,
  held: (row: Row) => boolean,
  restorable: (row: Row) => boolean,
): RowAction {
  const old = (at: string | null | undefined) => {
    const t = at ? parseTime(at) : null;
    return bounds.olderThanMs !== null && t !== null && now - t > bounds.olderThanMs;
  };
  if (row.liveness === "dead") {
    if (row.reason === "parked") return old(row.parked_at) ? "remove" : "parked";
    if (held(row)) return "held";
    return restorable(row) ? "retained" : "remove";
  }
  // An unknown row's age counts from the last sign of its session: a session of another host
  // or namespace that is working (its activity hooks write activity_at) is not old.
  if (row.liveness === "unknown") {
    const written = lastWrittenMs(row);
    return bounds.olderThanMs !== null && written !== null && now - written > bounds.olderThanMs
      ? "remove"
      : "keep";
  }
  return "keep";
}

/** The file name an ended record is moved to when a new session registers under its pid. */
export function endedName(pid: number, registeredAt: string | null, salt: string): string {
  const t = registeredAt === null ? null : parseTime(registeredAt);
  return `${pid}.${(t ?? 0).toString(36)}${salt}.json`;
}
