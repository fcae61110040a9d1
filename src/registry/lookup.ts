/**
 * One process's record found by its identity (a continuation plan's session), and what its
 * lifecycle says of a continue: parked (never continued), resumed (only through its successor,
 * whose row is read too), or neither. continuation-check asks it through mod.ts.
 */
import { listNames } from "../fs/read.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { placeDirNames, placeOf, recordName, storedPid } from "./layout.ts";
import type { SessionLink } from "./record.ts";
import type { Row } from "./row.ts";
import { type Entry, openStore, placeDirIn, readEntry, toRow } from "./store.ts";

/** A process as a plan names it: its pid and start token, where it ran, its session id. */
export interface ProcessSession {
  session_pid: number;
  start_token: string | null;
  host: string;
  machine_id?: string | null;
  pid_ns?: string | null;
  os?: string | null;
  session_id: string | null;
}

/** A session's lifecycle as its record holds it now. */
export interface SessionLifecycle {
  /** The record's path. */
  path: string;
  parked: boolean;
  /** The link `roster resume` wrote, and the successor's row as judged now (null: no record). */
  successor: { link: SessionLink; row: Row | null } | null;
}

type Valid = Extract<Entry, { ok: true }>;

/**
 * The record of `session`'s process (the same pid and start token, on its host) in the store
 * at `home`; null when there is none. Its place's directories are looked in, and this place's
 * (`judge.here`) when they differ. The usual names first (`<pid>.json`, a hosted session's
 * `<pid>.<key>.json`); a directory is listed only when neither is it, for a record moved aside
 * when a new session registered under its pid. Of several (the sessions a shared server hosts
 * share its pid), the one with the session's id, then the newest.
 */
function findRecord(
  root: string,
  session: ProcessSession,
  judge: LivenessJudge,
): Valid | null {
  const dirNames = new Set([
    ...placeDirNames(placeOf(session)),
    ...(session.host === judge.here.host
      ? placeDirNames({ ...judge.here, host: session.host })
      : []),
  ]);
  const pid = session.session_pid;
  const same = (e: Entry | null): e is Valid =>
    e !== null && e.ok && e.record.session_pid === pid &&
    e.record.start_token === session.start_token && e.record.host === session.host;
  const better = (a: Valid, b: Valid | null) => {
    if (b === null) return true;
    const idA = a.record.session_id === session.session_id;
    const idB = b.record.session_id === session.session_id;
    if (idA !== idB) return idA;
    return a.record.registered_at > b.record.registered_at;
  };
  let best: Valid | null = null;
  for (const dirName of dirNames) {
    const dir = placeDirIn(root, dirName, false);
    if (dir === null) continue;
    const usual = [recordName(pid)];
    if (session.session_id !== null) usual.push(recordName(pid, session.session_id));
    for (const name of usual) {
      const e = readEntry(dir, dirName, name);
      if (same(e) && better(e, best)) best = e;
    }
    if (best !== null && best.record.session_id === session.session_id) return best;
    for (const name of listNames(dir, "Could not read the store")) {
      if (storedPid(name) !== pid || usual.includes(name)) continue;
      const e = readEntry(dir, dirName, name);
      if (same(e) && better(e, best)) best = e;
    }
  }
  return best;
}

/**
 * The lifecycle of `session`'s record in the store at `home`, its successor judged now; null
 * when the store holds no record of that process (a plan another tool wrote, a record removed).
 */
export function sessionLifecycle(
  home: string,
  session: ProcessSession,
  judge: LivenessJudge,
): SessionLifecycle | null {
  const root = openStore(home, false);
  if (root === null) return null;
  const found = findRecord(root, session, judge);
  if (found === null) return null;
  const { record } = found;
  const link = record.successor;
  let successor: SessionLifecycle["successor"] = null;
  if (link !== null) {
    // The successor runs where its predecessor ran (a restore, or a resume by hand there).
    const next = findRecord(root, {
      session_pid: link.pid,
      start_token: link.start_token,
      host: record.host,
      machine_id: record.machine_id,
      pid_ns: record.pid_ns,
      os: record.os,
      session_id: link.session_id,
    }, judge);
    successor = { link, row: next === null ? null : toRow(next, judge, true) };
  }
  return { path: found.path, parked: record.parked_at !== null, successor };
}
