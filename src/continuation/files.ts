/**
 * Careful file access shared by the ledger, its audit log and the facts reader: JSON through
 * the store's safe reader, and for files the safe reader cannot take (any length, or appended
 * to), an open that refuses a FIFO or device (opening one can block for ever) and a file
 * swapped in between the look and the open.
 */
import { ioError, RosterError } from "../errors.ts";
import { readSmallFile } from "../registry/store.ts";

/** Every ledger file roster writes: indented JSON, one trailing newline. */
export const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

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

/** A small JSON file read safely: its value, or what is wrong with it; null when missing. */
export type JsonRead =
  | { value: unknown; mtimeMs: number | null }
  | { problem: string; mtimeMs: number | null }
  | null;

export function readJsonFile(path: string): JsonRead {
  const file = readSmallFile(path);
  if (file === null) return null;
  if (!file.ok) return { problem: file.problem, mtimeMs: file.mtimeMs };
  try {
    return { value: JSON.parse(file.text), mtimeMs: file.mtimeMs };
  } catch {
    return { problem: "not valid JSON", mtimeMs: file.mtimeMs };
  }
}

/**
 * Opens `path` only as the regular file `judged` describes (the caller's lstat, or stat for a
 * link it follows; null: any regular file, for one just created). A file swapped in between
 * is closed and null is returned.
 */
export function openJudged(
  path: string,
  judged: Deno.FileInfo | null,
  options: Deno.OpenOptions,
): Deno.FsFile | null {
  const file = Deno.openSync(path, options);
  try {
    const opened = file.statSync();
    const same = judged === null || (opened.ino === judged.ino && opened.dev === judged.dev);
    if (opened.isFile && same) return file;
  } catch (err) {
    file.close();
    throw err;
  }
  file.close();
  return null;
}

/**
 * Opens the regular file at `path`, never through a link and never a FIFO or device; errors
 * name `what` and the path. Null when there is none and `options.create` is not set.
 */
export function openRegular(
  path: string,
  what: string,
  options: Deno.OpenOptions,
): Deno.FsFile | null {
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
  let file: Deno.FsFile | null;
  try {
    file = openJudged(path, before, options);
  } catch (err) {
    throw ioError(what, path, err);
  }
  if (file === null) throw new RosterError(`${what}: the file changed while being opened: ${path}`);
  return file;
}

/**
 * Reads until end of file or until more than `limit` bytes are in, so that a caller with a
 * cap sees that it was exceeded without reading all of an endless stream.
 */
export function readUpTo(
  read: (buf: Uint8Array) => number | null,
  limit = Infinity,
): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total <= limit) {
    const buf = new Uint8Array(Math.min(1 << 16, limit + 1 - total));
    const n = read(buf);
    if (n === null || n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return all;
}
