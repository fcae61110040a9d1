/**
 * Where the registry keeps its files: `<home>/sessions/<host directory>/<pid>.json`. The
 * host directory is named after the host (hostDirName); nothing else names files here.
 */
import { join } from "../fs/dir.ts";
import { TEMP_SUFFIX } from "../fs/write.ts";
import { PID_TEXT } from "../identity/pid.ts";

/** Record files are `<pid>.json`; everything else in a host directory is ignored. */
export const RECORD_NAME = new RegExp(`^(${PID_TEXT})\\.json$`);
/**
 * Every file of a host directory that holds a record: `<pid>.json`, and the records of ended
 * sessions moved aside when a new session registered under their pid, `<pid>.<suffix>.json`.
 */
export const STORED_NAME = new RegExp(`^(${PID_TEXT})(?:\\.[0-9a-z]{1,32})?\\.json$`);
/** A crashed writer's temp file beside a record (fs/write.ts names them). */
export const TEMP_NAME = new RegExp(`^${PID_TEXT}(?:\\.[0-9a-z]{1,32})?\\.json${TEMP_SUFFIX}$`);

export function sessionsDir(home: string): string {
  return join(home, "sessions");
}

/** The host directory's name: every character outside [A-Za-z0-9._-] becomes `_`. */
export function hostDirName(host: string): string {
  const safe = host.replace(/[^A-Za-z0-9._-]/g, "_");
  return safe === "" || safe === "." || safe === ".." ? `_${safe}` : safe;
}

/** The path of a host directory by its name (hostDirName). */
export function hostDirPath(home: string, dirName: string): string {
  return join(sessionsDir(home), dirName);
}

/** The path of `host`'s host directory. */
export function hostDir(home: string, host: string): string {
  return hostDirPath(home, hostDirName(host));
}

export function recordPath(home: string, host: string, pid: number): string {
  return join(hostDir(home, host), `${pid}.json`);
}
