/**
 * Careful reads: a small file read defensively (no symlinks, FIFOs or devices; ours and not
 * writable by others; size-capped; valid UTF-8), and for files of any length, an open that
 * refuses a FIFO or device (opening one can block for ever) and a file swapped in between
 * the look and the open.
 */
import { ioError, RosterError } from "../errors.ts";
import { readFully } from "./io.ts";
import type { FileResult } from "./result.ts";
import { untrustedFile } from "./private.ts";
import { openJudged } from "../open_file.ts";
import { decodeUtf8 } from "../utf8.ts";

/** The opener beneath every careful read (src/open_file.ts: the one there is). */
export { openJudged };

/** The default cap of a small file: 64 KiB. */
const MAX_SMALL_FILE = 64 * 1024;

const uid = Deno.build.os === "windows" ? null : Deno.uid();

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Whether anything exists at `path` (any type, even a dangling symlink): fail closed. */
export function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    return true;
  }
}

/** One buffer for every small read: a store of 10,000 records must not allocate 640 MB. */
let sharedBuffer: Uint8Array | undefined;

/** Reads up to `limit` bytes, stopping at EOF or once `expected` bytes (the fstat size) are in. */
function readAtMost(file: Deno.FsFile, limit: number, expected: number): Uint8Array {
  const buf = limit <= MAX_SMALL_FILE + 1
    ? (sharedBuffer ??= new Uint8Array(MAX_SMALL_FILE + 1)).subarray(0, limit)
    : new Uint8Array(limit);
  return buf.subarray(0, readFully(file, buf, expected));
}

/**
 * Reads a small file with care (no symlinks, FIFOs or devices; ours and not writable by
 * others; at most `maxBytes`; valid UTF-8): its text, or what is wrong with it. Null when it
 * does not exist (or vanished: a racing remover). A file replaced between its lstat and its
 * open is read again: every record, plan and lock is replaced by a rename (writeAtomic), and
 * two registers of one session hold the lock shared, so one's rename can land inside the
 * other's read. Reported CHANGED only when it keeps changing; read as a damaged file, a record
 * was rewritten as new and lost what its session's hooks had recorded (seen under load).
 */
export function readSmallFile(path: string, maxBytes = MAX_SMALL_FILE): FileResult<string> | null {
  for (let tries = 1;; tries++) {
    const read = readSmallFileOnce(path, maxBytes);
    if (tries === SWAP_TRIES || read === null || read.ok || read.problem !== CHANGED) return read;
  }
}

/**
 * How often a careful read looks again at a file replaced between its lstat and its open
 * before it calls the file changing: a rename by another roster lands there now and then, a
 * file that keeps changing is someone's doing.
 */
const SWAP_TRIES = 5;

function readSmallFileOnce(path: string, maxBytes: number): FileResult<string> | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    return { ok: false, problem: `cannot stat: ${errText(err)}`, mtimeMs: null };
  }
  const mtimeMs = info.mtime?.getTime() ?? null;
  const bad = (problem: string): FileResult<string> => ({ ok: false, problem, mtimeMs });
  if (info.isSymlink) return bad("is a symbolic link");
  if (!info.isFile) return bad("not a regular file");
  if (info.size > maxBytes) return bad(`larger than ${maxBytes} bytes`);
  const untrusted = untrustedFile(info, Deno.build.os, uid);
  if (untrusted !== null) return bad(untrusted);
  let bytes: Uint8Array;
  try {
    using file = openJudged(path, info, { read: true });
    if (file === null) return bad(CHANGED);
    bytes = readAtMost(file, maxBytes + 1, info.size);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    return bad(`cannot read: ${errText(err)}`);
  }
  if (bytes.length > maxBytes) return bad(`larger than ${maxBytes} bytes`);
  try {
    return { ok: true, value: decodeUtf8(bytes, { fatal: true }), mtimeMs };
  } catch {
    return bad("not valid UTF-8");
  }
}

/** What readSmallFile says of a file swapped while it was being opened. */
export const CHANGED = "changed while being read";

/** A small JSON file read with care: its parsed value, or what is wrong; null when missing. */
export function readJson(path: string): FileResult<unknown> | null {
  const file = readSmallFile(path);
  if (file === null || !file.ok) return file;
  try {
    return { ok: true, value: JSON.parse(file.value), mtimeMs: file.mtimeMs };
  } catch {
    return { ok: false, problem: "not valid JSON", mtimeMs: file.mtimeMs };
  }
}

/**
 * Opens the regular file at `path`, never through a link and never a FIFO or device; errors
 * name `what` and the path. Null when there is none and `options.create` is not set. A file
 * replaced between the look and the open is looked at again, as readSmallFile does: a
 * settings file another `hooks install` renames into place is no error of this one's.
 * `beforeOpen` runs between each look and its open (a test's pause point, src/pause.ts).
 */
export function openRegular(
  path: string,
  what: string,
  // Neither truncate (done by the open, before the handle is checked: through a link swapped
  // in) nor createNew (openRegular's own to set).
  options: Omit<Deno.OpenOptions, "truncate" | "createNew">,
  beforeOpen?: () => void,
): Deno.FsFile | null {
  for (let tries = 1;; tries++) {
    let before: Deno.FileInfo | null = null;
    try {
      before = Deno.lstatSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw ioError(what, path, err);
    }
    if (before !== null && !before.isFile) {
      throw new RosterError(`${what}: not a regular file: ${path}`);
    }
    if (before === null && !options.create) return null;
    beforeOpen?.();
    let file: Deno.FsFile | null;
    try {
      // Never O_CREAT alone, which would create a file where a link put in place meanwhile
      // points: a file that was there is opened without it, one that was not is created
      // exclusively (O_EXCL follows no link).
      file = openJudged(path, before, { ...options, create: false, createNew: before === null });
    } catch (err) {
      // Gone between the look and the open: a remover won, as if it had been first; or made
      // by another meanwhile (a link put there too): looked at again, as a swap is.
      const raced = err instanceof Deno.errors.NotFound || err instanceof Deno.errors.AlreadyExists;
      if (err instanceof Deno.errors.NotFound && !options.create) return null;
      if (raced && tries < SWAP_TRIES) continue;
      throw ioError(what, path, err);
    }
    if (file !== null) return file;
    if (tries === SWAP_TRIES) {
      throw new RosterError(`${what}: the file changed while being opened: ${path}`);
    }
  }
}

/** The names in a directory; [] when it does not exist; `what` names it in errors. */
export function listNames(dir: string, what: string): string[] {
  const names: string[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) names.push(e.name);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw ioError(what, dir, err);
  }
  return names;
}
