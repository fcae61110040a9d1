/**
 * Where the registry keeps its files: `<home>/places/<place directory>/<pid>.json`, and
 * `<pid>.<session key>.json` for each session a shared server hosts. A place is a host and its
 * OS, and on a system with pid namespaces its machine and pid namespace (placeDirName), so
 * records from two namespaces, machines or OSes that share a home and a hostname never share
 * a file. The layouts before it live under `<home>/sessions/` (one directory per host, then
 * per place) and are still read; `places/` is a directory no older roster reads, so none can
 * misjudge, or prune, what this one writes (docs/decisions.md). Nothing else names files here.
 */
import { join } from "../fs/path.ts";
import { TEMP_SUFFIX } from "../fs/write.ts";
import {
  every,
  isDigit,
  isDigits,
  isLowerOrDigit,
  isNameChar,
  isWordChar,
  replaceOthers,
  runEnd,
} from "../chars.ts";
import { isPidText, PID_TEXT } from "../identity/pid.ts";
import { encodeUtf8 } from "../utf8.ts";

/** Record files are `<pid>.json`; everything else in a host directory is ignored. */
export const RECORD_NAME = new RegExp(`^(${PID_TEXT})\\.json$`);
/**
 * Every file of a host directory that holds a record: `<pid>.json`, and the records of ended
 * sessions moved aside when a new session registered under their pid, `<pid>.<suffix>.json`.
 */
export const STORED_NAME = new RegExp(`^(${PID_TEXT})(?:\\.[0-9a-z]{1,32})?\\.json$`);
/**
 * The pid a stored record's file name starts with (STORED_NAME's group), or 0 for a name that
 * is not a stored record's. Read char by char: `list` asks it of every name in the store, and
 * a regex match builds an array and two strings each time.
 */
export function storedPid(name: string): number {
  const n = name.length;
  const pidEnd = runEnd(name, isDigit);
  if (!isPidText(name, 0, pidEnd)) return 0;
  // Then `.json` at the end, or a suffix of 1 to 32 of [0-9a-z] before it.
  if (n - pidEnd < 5 || !name.endsWith(".json")) return 0;
  const suffixEnd = n - 5;
  if (suffixEnd > pidEnd) {
    if (name.charCodeAt(pidEnd) !== 46) return 0;
    const len = suffixEnd - pidEnd - 1;
    if (len < 1 || len > 32) return 0;
    if (!every(name, isLowerOrDigit, pidEnd + 1, suffixEnd)) return 0;
  }
  return Number(name.slice(0, pidEnd));
}

/** A crashed writer's temp file beside a record (fs/write.ts names them). */
export const TEMP_NAME = new RegExp(`^${PID_TEXT}(?:\\.[0-9a-z]{1,32})?\\.json${TEMP_SUFFIX}$`);

/** The directory of every place's directory, and that of the older layouts (still read). */
export const PLACES = "places";
export const SESSIONS = "sessions";

/** `<home>/sessions/`, where the layouts before places/ kept their directories. */
export function sessionsDir(home: string): string {
  return join(home, SESSIONS);
}

/**
 * A place directory's key, as readers pass it around: `<PLACES or SESSIONS>/<its name>`, so a
 * directory of this layout and one of the older layout with the same name stay apart.
 */
export const placeKey = (area: string, name: string) => `${area}/${name}`;
/** The two halves of a key (placeKey). */
export const keyArea = (key: string) => key.slice(0, key.indexOf("/"));
export const keyName = (key: string) => key.slice(key.indexOf("/") + 1);

/**
 * Which names under places/ are place directories (placeDirName's, `<host>~<rest>`): any other
 * name there is skipped, so a later layout can put its directories beside these under names
 * this roster never reads.
 */
export const PLACE_NAME = /^[A-Za-z0-9._-]+~[A-Za-z0-9._-]+$/;

/** The host directory's name: every character outside [A-Za-z0-9._-] becomes `_`. */
export function hostDirName(host: string): string {
  const safe = replaceOthers(host, isNameChar, "_");
  return safe === "" || safe === "." || safe === ".." ? `_${safe}` : safe;
}

/**
 * Where a record was written: its host, machine, pid namespace and OS (identity.ts
 * HostIdentity).
 */
export interface Place {
  host: string;
  machineId?: string | null;
  pidNs?: string | null;
  os?: string | null;
}

/**
 * Pure: the name of a place's directory under places/: `<host>~<machine>.<pid namespace>` where
 * there are pid namespaces (e.g. `build-01~3f2a9c1d0b7e4a15.4026531836`: the first 16 digits
 * of the machine id, `_` when it is not known, and the namespace's inode; only Linux has them),
 * else `<host>~<os>` (e.g. `DESKTOP-1~windows`; `_` for an OS not known). `~` is never in a
 * host's directory name (hostDirName), and an OS's name has no `.`: the forms cannot meet.
 */
export function placeDirName(place: Place): string {
  const { host, machineId = null, pidNs = null, os = null } = place;
  // One answer remembered: `list` asks this of every record, and nearly all share a place.
  const last = lastPlace;
  if (
    last.host === host && last.machineId === machineId && last.pidNs === pidNs && last.os === os
  ) return last.name;
  const name = computePlaceDirName(place);
  lastPlace = { host, machineId, pidNs, os, name };
  return name;
}

let lastPlace: {
  host: string | null;
  machineId: string | null;
  pidNs: string | null;
  os: string | null;
  name: string;
} = { host: null, machineId: null, pidNs: null, os: null, name: "" };

const safe = (s: string) => replaceOthers(s, isWordChar, "_");

/** The inode of a pid namespace's link text, `pid:[<inode>]`; null for any other text. */
export function nsInode(link: string): string | null {
  const ok = link.startsWith("pid:[") && link.endsWith("]") && isDigits(link.slice(5, -1));
  return ok ? link.slice(5, -1) : null;
}

function computePlaceDirName(place: Place): string {
  const host = hostDirName(place.host);
  if (!place.pidNs) return `${host}~${place.os ? safe(place.os) : "_"}`;
  const ns = nsInode(place.pidNs) ?? safe(place.pidNs);
  const machine = place.machineId ? safe(place.machineId.slice(0, 16)) : "_";
  return `${host}~${machine}.${ns}`;
}

/**
 * Pure: the name the layout before places/ gave a place's directory under sessions/: the
 * same as placeDirName's where there are pid namespaces, else the host's (hostDirName).
 */
export function sessionsDirName(place: Place): string {
  return place.pidNs ? placeDirName(place) : hostDirName(place.host);
}

/** The place of a record, as placeDirName takes it. */
export function placeOf(
  record: { host: string; machine_id?: string | null; pid_ns?: string | null; os?: string | null },
): Place {
  return { host: record.host, machineId: record.machine_id, pidNs: record.pid_ns, os: record.os };
}

/**
 * The keys (placeKey) of the directories a place's records may be in, newest layout first:
 * its own under places/, then the older layouts' under sessions/: its place's, then its
 * host's (where the first layout wrote every namespace's and every OS's records).
 */
export function placeDirNames(place: Place): string[] {
  const keys = [placeKey(PLACES, placeDirName(place))];
  if (place.pidNs) keys.push(placeKey(SESSIONS, placeDirName(place)));
  keys.push(placeKey(SESSIONS, hostDirName(place.host)));
  return keys;
}

/**
 * Pure: whether the directory `key` is where a record of `place` belongs: its place's under
 * places/; under sessions/, its place's or its host's, as the older layouts filed it.
 */
export function isPlaceDir(key: string, place: Place): boolean {
  const name = keyName(key);
  if (keyArea(key) === PLACES) return placeDirName(place) === name;
  return sessionsDirName(place) === name || hostDirName(place.host) === name;
}

/** Pure: the host part of a directory's key (a malformed row's host). */
export function dirHost(key: string): string {
  const name = keyName(key);
  const at = name.indexOf("~");
  return at === -1 ? name : name.slice(0, at);
}

/** The path of a place's directory by its key (placeKey). */
export function placeDirPath(home: string, key: string): string {
  return join(home, keyArea(key), keyName(key));
}

/** The path of `host`'s directory of the first layout, `sessions/<host>/`. */
export function hostDir(home: string, host: string): string {
  return join(sessionsDir(home), hostDirName(host));
}

/**
 * Pure: the key of a session id in a file name, 32 hex digits (two 64-bit FNV-1a hashes):
 * session ids are any text, file names are not. Never the length of an ended record's suffix
 * (lifecycle.ts endedName), so the two cannot collide.
 */
export function sessionKey(sessionId: string): string {
  const bytes = encodeUtf8(sessionId);
  const fnv = (basis: bigint) => {
    let h = basis;
    for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
    return h.toString(16).padStart(16, "0");
  };
  return fnv(0xcbf29ce484222325n) + fnv(0x84222325cbf29ce4n);
}

/**
 * The file name of a record: `<pid>.json`, or for a session a shared server hosts (the pid is
 * the server's, shared by all its sessions), `<pid>.<sessionKey>.json`.
 */
export function recordName(pid: number, hostedSession: string | null = null): string {
  return hostedSession === null ? `${pid}.json` : `${pid}.${sessionKey(hostedSession)}.json`;
}
