/**
 * A directory read one entry at a time, and its small files read with care: never through a
 * link, never blocking on a FIFO, the type and owner checked on the open handle. On Linux
 * this is libc (./syscalls.ts, with src/process/libc.ts's read and close): memory bounded by one entry, four calls per file, an errno
 * rather than an exception for a file that vanished. Elsewhere Deno's calls do the same work
 * with a listing held in memory and a look (lstat) before the open (src/fs/read.ts).
 */
import { type Libc, libc } from "../process/libc.ts";
import { ENOENT } from "../process/types.ts";
import { type DirEntry, type FileCalls, fileCalls, O_NOFOLLOW, O_NONBLOCK } from "./syscalls.ts";

import { SEP } from "./path.ts";
import { readSmallFile } from "./read.ts";
import type { FileResult } from "./result.ts";

export type { DirEntry };

export interface DirStream extends Disposable {
  readonly path: string;
  /** The next entry, or null at the end. */
  next(): DirEntry | null;
  /**
   * A regular file of ours in this directory, not writable by others, at most `maxBytes`;
   * null when it does not exist (any more).
   */
  readSmall(name: string, maxBytes: number): FileResult<string> | null;
  /**
   * Removes the entry `name`: a link itself, never what it points to, and never a directory.
   * False when it was not removed (gone, a directory, no permission). One unlinkat(2) relative
   * to the open directory on Linux: no lookup of the path from `/`, no look before.
   */
  remove(name: string): boolean;
  close(): void;
}

const uid = Deno.build.os === "windows" ? null : Deno.uid();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
/** The same decoding, replacing bad bytes: the fast path (see decodeStrict). */
const lenient = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });

/**
 * UTF-8 that must be valid, decoded; throws on bad bytes. A lenient decode is several times
 * cheaper than a fatal one, and bad bytes always decode to U+FFFD: text without one was
 * valid. Only text that holds a U+FFFD (valid or not) is decoded again, strictly.
 */
export function decodeStrict(bytes: Uint8Array): string {
  const text = lenient.decode(bytes);
  return text.indexOf("\uFFFD") === -1 ? text : decoder.decode(bytes);
}
/** One buffer for every read: a store of 100,000 records must not allocate one each. */
let shared = new Uint8Array(64 * 1024 + 1);
let sized = shared;
function buffer(size: number): Uint8Array {
  if (sized.length === size) return sized;
  if (shared.length < size) shared = new Uint8Array(size);
  return sized = shared.subarray(0, size);
}

/** A careful read's refusal, dated by the file. */
function refused(problem: string, mtimeMs: number | null): FileResult<string> {
  return { ok: false, problem, mtimeMs };
}

/** Opens `path` for reading entry by entry; throws Deno's errors (FilesystemLoop for a link). */
export function openDirStream(path: string): DirStream {
  const c = libc();
  const f = c === null ? null : fileCalls();
  return c === null || f === null ? denoStream(path) : libcStream(path, c, f);
}

function libcStream(path: string, c: Libc, f: FileCalls): DirStream {
  const dir = f.openDir(path);
  return {
    path,
    next: () => dir.next(),
    readSmall(name, maxBytes) {
      const fd = f.openat(dir.fd, name, O_NOFOLLOW | O_NONBLOCK);
      if (fd < 0) {
        if (fd === -ENOENT) return null;
        // A link (ELOOP), a socket (ENXIO), no permission: rare, and the careful path by
        // name says which, dated by the entry itself.
        return readSmallFile(`${path}/${name}`, maxBytes);
      }
      try {
        const st = f.fstat(fd);
        if (st === null) return refused("cannot stat", null);
        if (!st.isFile) return refused("not a regular file", st.mtimeMs);
        if (st.size > maxBytes) return refused(`larger than ${maxBytes} bytes`, st.mtimeMs);
        if (uid !== null && st.uid !== uid) return refused("owned by another user", st.mtimeMs);
        if ((st.mode & 0o022) !== 0) return refused("writable by group or others", st.mtimeMs);
        const buf = buffer(maxBytes + 1);
        // The first read into the whole buffer (no view made for it): a record is one read.
        let off = 0;
        while (off < buf.length) {
          const n = c.read(fd, off === 0 ? buf : buf.subarray(off));
          if (n < 0) return refused(`cannot read: error ${-n}`, st.mtimeMs);
          if (n === 0) break;
          off += n;
          if (off >= st.size && off < buf.length) break;
        }
        if (off > maxBytes) return refused(`larger than ${maxBytes} bytes`, st.mtimeMs);
        try {
          return { ok: true, value: decodeStrict(buf.subarray(0, off)), mtimeMs: st.mtimeMs };
        } catch {
          return refused("not valid UTF-8", st.mtimeMs);
        }
      } finally {
        c.close(fd);
      }
    },
    remove: (name) => f.unlinkat(dir.fd, name) === 0,
    close: () => dir.close(),
    [Symbol.dispose]: () => dir.close(),
  };
}

function denoStream(path: string): DirStream {
  const info = Deno.lstatSync(path);
  if (info.isSymlink) throw new Deno.errors.FilesystemLoop(`Is a symbolic link: ${path}`);
  if (!info.isDirectory) throw new Deno.errors.NotADirectory(`Not a directory: ${path}`);
  const entries = Deno.readDirSync(path)[Symbol.iterator]();
  return {
    path,
    next() {
      const r = entries.next();
      if (r.done) return null;
      const e = r.value;
      return {
        name: e.name,
        kind: e.isFile ? "file" : e.isDirectory ? "dir" : e.isSymlink ? "link" : "other",
      };
    },
    readSmall: (name, maxBytes) => readSmallFile(`${path}${SEP}${name}`, maxBytes),
    remove(name) {
      const file = `${path}${SEP}${name}`;
      try {
        if (Deno.lstatSync(file).isDirectory) return false;
        Deno.removeSync(file);
        return true;
      } catch {
        return false;
      }
    },
    close() {},
    [Symbol.dispose]() {},
  };
}
