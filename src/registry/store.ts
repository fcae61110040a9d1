/**
 * The on-disk store: `<home>/sessions/<host>/<pid>.json`. Reads never follow a symlink,
 * never open a FIFO or device, and read at most 64 KiB; writes are atomic (temp file in the
 * same directory, then rename); every mutation holds the host directory's advisory lock.
 */
import { ioError, RosterError } from "../errors.ts";
import {
  hostDirName,
  malformedRow,
  MAX_RECORD_BYTES,
  RECORD_NAME,
  type SessionRecord,
  validateRecord,
} from "./record.ts";

const SEP = Deno.build.os === "windows" ? "\\" : "/";
export const join = (...parts: string[]) => parts.join(SEP);

export const LOCK_NAME = ".lock";
const LOCK_TIMEOUT_MS = 10_000;

/** One file read from the store: a valid record, or why it is not one. */
export type Entry =
  | { ok: true; path: string; record: SessionRecord; mtimeMs: number | null }
  | {
    ok: false;
    path: string;
    filePid: number;
    hostDir: string;
    mtimeMs: number | null;
    problem: string;
  };

export function malformedFrom(e: Extract<Entry, { ok: false }>) {
  return malformedRow(e.path, e.filePid, e.hostDir, e.mtimeMs, e.problem);
}

export function sessionsDir(home: string): string {
  return join(home, "sessions");
}

export function hostDir(home: string, host: string): string {
  return hostDirPath(home, hostDirName(host));
}

/** The path of a host directory by its (already safe) directory name. */
export function hostDirPath(home: string, dirName: string): string {
  return join(sessionsDir(home), dirName);
}

export function recordPath(home: string, host: string, pid: number): string {
  return join(hostDir(home, host), `${pid}.json`);
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const uid = Deno.build.os === "windows" ? null : Deno.uid();

/**
 * Reads one record file safely. Returns null when the file vanished (a racing prune or
 * unregister): it is simply not there any more.
 */
export function readEntry(dir: string, hostDirNameValue: string, name: string): Entry | null {
  const m = RECORD_NAME.exec(name);
  if (!m) return null;
  const filePid = Number(m[1]);
  const path = join(dir, name);
  const file = readSmallFile(path);
  if (file === null) return null;
  const bad = (problem: string): Entry => ({
    ok: false,
    path,
    filePid,
    hostDir: hostDirNameValue,
    mtimeMs: file.mtimeMs,
    problem,
  });
  if (!file.ok) return bad(file.problem);
  let value: unknown;
  try {
    value = JSON.parse(file.text);
  } catch {
    return bad("not valid JSON");
  }
  const checked = validateRecord(value, filePid);
  if ("problem" in checked) return bad(checked.problem);
  // A record filed under another host's directory is not to be judged against this host.
  if (hostDirName(checked.record.host) !== hostDirNameValue) {
    return bad(`host differs from its directory: ${hostDirNameValue}`);
  }
  return { ok: true, path, record: checked.record, mtimeMs: file.mtimeMs };
}

/** One buffer for every small read: a store of 10,000 records must not allocate 640 MB. */
let sharedBuffer: Uint8Array | undefined;

/** Reads up to `limit` bytes, stopping at EOF or once `expected` bytes (the fstat size) are in. */
function readAtMost(file: Deno.FsFile, limit: number, expected: number): Uint8Array {
  const buf = limit <= MAX_RECORD_BYTES + 1
    ? (sharedBuffer ??= new Uint8Array(MAX_RECORD_BYTES + 1)).subarray(0, limit)
    : new Uint8Array(limit);
  let off = 0;
  while (off < limit) {
    const n = file.readSync(buf.subarray(off));
    if (n === null || n === 0) break;
    off += n;
    if (off >= expected && off < limit) break;
  }
  return buf.subarray(0, off);
}

/** The names of the host directories under sessions/ (empty when the store does not exist). */
export function listHostDirs(home: string): string[] {
  const names: string[] = [];
  try {
    // Never follow a link out of the store: sessions/ itself must be a real directory.
    if (Deno.lstatSync(sessionsDir(home)).isSymlink) {
      throw new RosterError(`Store directory is a symbolic link: ${sessionsDir(home)}`);
    }
    for (const e of Deno.readDirSync(sessionsDir(home))) {
      if (e.isDirectory) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw ioError("Could not read the store", sessionsDir(home), err);
  }
  return names.sort();
}

/** Every record-named file in one host directory, read safely. */
export function readHostDir(home: string, hostDirNameValue: string): Entry[] {
  const dir = hostDirPath(home, hostDirNameValue);
  const out: Entry[] = [];
  let names: string[];
  try {
    names = [];
    for (const e of Deno.readDirSync(dir)) names.push(e.name);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw ioError("Could not read the store", dir, err);
  }
  for (const name of names) {
    const entry = readEntry(dir, hostDirNameValue, name);
    if (entry !== null) out.push(entry);
  }
  return out;
}

/**
 * Creates home, sessions/ and the host directory (0700), tightening any that is looser.
 * Home is tightened only when it is ours and not a shared sticky directory such as /tmp.
 */
export function ensureHostDir(home: string, host: string): string {
  const dir = hostDir(home, host);
  // Fast path for every call after the first: the directory exists, is ours and is tight.
  try {
    const info = Deno.lstatSync(dir);
    if (info.isDirectory && ((info.mode ?? 0) & 0o077) === 0 && info.uid === uid) return dir;
  } catch { /* not there yet: create it below */ }
  try {
    const homeInfo = Deno.statSync(home);
    if (!homeInfo.isDirectory) throw new RosterError(`Home is not a directory: ${home}`);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw ioError("Could not use home", home, err);
  }
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw ioError("Could not create the store", dir, err);
  }
  if (Deno.build.os !== "windows") {
    tighten(home, true);
    tighten(sessionsDir(home), false);
    tighten(dir, false);
  }
  return dir;
}

function tighten(path: string, isHome: boolean) {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (err) {
    throw ioError("Could not use the store", path, err);
  }
  if (info.isSymlink && isHome) info = Deno.statSync(path);
  if (!info.isDirectory) throw new RosterError(`Store path is not a directory: ${path}`);
  const mode = info.mode ?? 0;
  if ((mode & 0o077) === 0) return;
  if (isHome && (info.uid !== uid || (mode & 0o1000) !== 0)) return;
  if (info.uid !== uid) {
    throw new RosterError(`Store directory belongs to another user: ${path}`);
  }
  try {
    Deno.chmodSync(path, 0o700);
  } catch (err) {
    throw ioError("Could not tighten permissions", path, err);
  }
}

/**
 * Writes a file atomically: a fresh temp file in the same directory (0600, created
 * exclusively), flushed to disk unless `durable` is false, then renamed over the target.
 * On any failure the temp file is removed and the old file is untouched.
 */
export function writeAtomic(
  path: string,
  data: string,
  durable = true,
  beforeRename?: () => void,
) {
  const tmp = writeTemp(path, data, durable);
  try {
    beforeRename?.();
    Deno.renameSync(tmp, path);
  } catch (err) {
    removeQuietly(tmp);
    throw ioError("Could not write", path, err);
  }
}

let tempCounter = 0;
/** Names writeTemp gives: `<target>.<writer pid>.<unique>.tmp`; ignored by every reader. */
export const TEMP_NAME = /^[1-9][0-9]{0,9}\.json\.[0-9]+\.[0-9a-z]+\.tmp$/;

/** Writes `data` to a fresh temp file beside `path` (0600, exclusive) and returns its name. */
function writeTemp(path: string, data: string, durable: boolean): string {
  // Unique enough with createNew (O_EXCL) behind it; crypto would cost ~1 ms to load.
  const tmp = `${path}.${Deno.pid}.${(++tempCounter).toString(36)}${
    Math.floor(Math.random() * 2 ** 32).toString(36)
  }.tmp`;
  try {
    using file = Deno.openSync(tmp, { write: true, createNew: true, mode: 0o600 });
    const bytes = new TextEncoder().encode(data);
    let off = 0;
    while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
    if (durable) file.syncDataSync();
  } catch (err) {
    removeQuietly(tmp);
    throw ioError("Could not write", path, err);
  }
  return tmp;
}

export function removeQuietly(path: string) {
  try {
    Deno.removeSync(path);
  } catch { /* already gone */ }
}

export function randomHex(bytes = 6): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** The advisory lock stayed held by another process for longer than the caller would wait. */
export class LockTimeoutError extends RosterError {
  constructor(path: string, ms: number) {
    super(
      `Could not take the store lock in ${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`}: ${path}`,
    );
    this.name = "LockTimeoutError";
  }
}

/**
 * Holds the advisory lock of one directory while `fn` runs. Waits at most `timeoutMs` (10 s),
 * then throws LockTimeoutError: a holder that hangs must not hang every hook behind it. flock locks die with their process, so a
 * crashed holder never blocks the store.
 */
export async function withLock<T>(
  dir: string,
  fn: () => T | Promise<T>,
  timeoutMs = LOCK_TIMEOUT_MS,
): Promise<T> {
  const path = join(dir, LOCK_NAME);
  // Never through a link: opening `.lock -> /etc/passwd` with create would lock (or, dangling,
  // create) another file. What was checked must be what was opened.
  let before: Deno.FileInfo | null = null;
  try {
    before = Deno.lstatSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw ioError("Could not open the lock", path, err);
  }
  if (before !== null && !before.isFile) {
    throw new RosterError(`The lock is not a regular file: ${path}`);
  }
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
  } catch (err) {
    throw ioError("Could not open the lock", path, err);
  }
  if (before !== null && file.statSync().ino !== before.ino) {
    file.close();
    throw new RosterError(`The lock changed while being opened: ${path}`);
  }
  try {
    if (!file.tryLockSync(true)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LockTimeoutError(path, timeoutMs)), timeoutMs);
      });
      try {
        await Promise.race([file.lock(true), timeout]);
      } finally {
        clearTimeout(timer);
      }
    }
    return await fn();
  } finally {
    file.close();
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One small file read safely: its text, or what is wrong with it; null when it is missing. */
export type SmallFile =
  | { ok: true; text: string; mtimeMs: number | null }
  | { ok: false; problem: string; mtimeMs: number | null };

/**
 * Reads a small file with the same care as readEntry (no symlinks, FIFOs or devices; ours
 * and not writable by others; at most `maxBytes`; valid UTF-8). Null when it does not exist.
 */
export function readSmallFile(path: string, maxBytes = MAX_RECORD_BYTES): SmallFile | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    return { ok: false, problem: `cannot stat: ${errText(err)}`, mtimeMs: null };
  }
  const mtimeMs = info.mtime?.getTime() ?? null;
  const bad = (problem: string): SmallFile => ({ ok: false, problem, mtimeMs });
  if (info.isSymlink) return bad("is a symbolic link");
  if (!info.isFile) return bad("not a regular file");
  if (info.size > maxBytes) return bad(`larger than ${maxBytes} bytes`);
  if (uid !== null && info.uid !== uid) return bad("owned by another user");
  if (info.mode !== null && (info.mode & 0o022) !== 0) return bad("writable by group or others");
  let bytes: Uint8Array;
  try {
    using file = Deno.openSync(path, { read: true });
    const opened = file.statSync();
    if (!opened.isFile || opened.ino !== info.ino || opened.dev !== info.dev) {
      return bad("changed while being read");
    }
    bytes = readAtMost(file, maxBytes + 1, opened.size);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    return bad(`cannot read: ${errText(err)}`);
  }
  if (bytes.length > maxBytes) return bad(`larger than ${maxBytes} bytes`);
  try {
    return { ok: true, text: decoder.decode(bytes), mtimeMs };
  } catch {
    return bad("not valid UTF-8");
  }
}

/** Creates a directory and its parents (0700), tightening it when looser; never a symlink. */
export function ensurePrivateDir(dir: string): string {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw ioError("Could not create the directory", dir, err);
  }
  if (Deno.build.os !== "windows") tighten(dir, false);
  return dir;
}

/**
 * Creates `path` holding `data`, exclusively and never torn: a fully written, flushed temp
 * file is hard-linked to the name, which fails when the name exists. Returns the new file's
 * identity, or null when the name was taken.
 */
export function createExclusive(path: string, data: string): { ino: number; dev: number } | null {
  const tmp = writeTemp(path, data, true);
  try {
    const info = Deno.lstatSync(tmp);
    Deno.linkSync(tmp, path);
    return { ino: info.ino ?? 0, dev: info.dev };
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return null;
    throw ioError("Could not create", path, err);
  } finally {
    removeQuietly(tmp);
  }
}
