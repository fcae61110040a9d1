/**
 * A directory read one entry at a time, and its small files read with care: never through a
 * link, never blocking on a FIFO, the type and owner checked on the open handle. On Linux
 * this is libc (src/fs/libc.ts): memory bounded by one entry, four calls per file, an errno
 * rather than an exception for a file that vanished. Elsewhere Deno's calls do the same work
 * with a listing held in memory and a look (lstat) before the open.
 */
import {
  type DirEntry,
  EACCES,
  ELOOP,
  ENOENT,
  libc,
  O_NOFOLLOW,
  O_NONBLOCK,
} from "../process/libc.ts";

export type { DirEntry };

/** A small file's bytes (valid until the next read), or what is wrong with it. */
export type Small =
  | { ok: true; bytes: Uint8Array; mtimeMs: number | null }
  | { ok: false; problem: string; mtimeMs: number | null };

export interface DirStream extends Disposable {
  readonly path: string;
  /** The next entry, or null at the end. */
  next(): DirEntry | null;
  /**
   * A regular file of ours in this directory, not writable by others, at most `maxBytes`;
   * null when it does not exist (any more).
   */
  readSmall(name: string, maxBytes: number): Small | null;
  close(): void;
}

const uid = Deno.build.os === "windows" ? null : Deno.uid();
/** One buffer for every read: a store of 100,000 records must not allocate one each. */
let shared = new Uint8Array(64 * 1024 + 1);
function buffer(size: number): Uint8Array {
  if (shared.length < size) shared = new Uint8Array(size);
  return shared.subarray(0, size);
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Opens `path` for reading entry by entry; throws Deno's errors (FilesystemLoop for a link). */
export function openDirStream(path: string): DirStream {
  const c = libc();
  return c === null ? denoStream(path) : libcStream(path, c);
}

function libcStream(path: string, c: NonNullable<ReturnType<typeof libc>>): DirStream {
  const dir = c.openDir(path);
  return {
    path,
    next: () => dir.next(),
    readSmall(name, maxBytes) {
      const fd = c.openat(dir.fd, name, O_NOFOLLOW | O_NONBLOCK);
      if (fd < 0) {
        if (fd === -ENOENT) return null;
        if (fd === -ELOOP) return { ok: false, problem: "is a symbolic link", mtimeMs: null };
        // A socket answers ENXIO: it is no record either way.
        const why = fd === -EACCES ? "permission denied" : `error ${-fd}`;
        return { ok: false, problem: `cannot read: ${why}`, mtimeMs: null };
      }
      try {
        const st = c.fstat(fd);
        if (st === null) return { ok: false, problem: "cannot stat", mtimeMs: null };
        const bad = (problem: string): Small => ({ ok: false, problem, mtimeMs: st.mtimeMs });
        if (!st.isFile) return bad("not a regular file");
        if (st.size > maxBytes) return bad(`larger than ${maxBytes} bytes`);
        if (uid !== null && st.uid !== uid) return bad("owned by another user");
        if ((st.mode & 0o022) !== 0) return bad("writable by group or others");
        const buf = buffer(maxBytes + 1);
        let off = 0;
        while (off < buf.length) {
          const n = c.read(fd, buf.subarray(off));
          if (n < 0) return bad(`cannot read: error ${-n}`);
          if (n === 0) break;
          off += n;
          if (off >= st.size && off < buf.length) break;
        }
        if (off > maxBytes) return bad(`larger than ${maxBytes} bytes`);
        return { ok: true, bytes: buf.subarray(0, off), mtimeMs: st.mtimeMs };
      } finally {
        c.close(fd);
      }
    },
    close: () => dir.close(),
    [Symbol.dispose]: () => dir.close(),
  };
}

function denoStream(path: string): DirStream {
  const info = Deno.lstatSync(path);
  if (info.isSymlink) throw new Deno.errors.FilesystemLoop(`Is a symbolic link: ${path}`);
  if (!info.isDirectory) throw new Deno.errors.NotADirectory(`Not a directory: ${path}`);
  const entries = Deno.readDirSync(path)[Symbol.iterator]();
  const sep = Deno.build.os === "windows" ? "\\" : "/";
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
    readSmall: (name, maxBytes) => readSmallDeno(`${path}${sep}${name}`, maxBytes),
    close() {},
    [Symbol.dispose]() {},
  };
}

/** The same checks through Deno's calls: a look (lstat), then the open, compared. */
function readSmallDeno(path: string, maxBytes: number): Small | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    return { ok: false, problem: `cannot stat: ${errText(err)}`, mtimeMs: null };
  }
  const mtimeMs = info.mtime?.getTime() ?? null;
  const bad = (problem: string): Small => ({ ok: false, problem, mtimeMs });
  if (info.isSymlink) return bad("is a symbolic link");
  if (!info.isFile) return bad("not a regular file");
  if (info.size > maxBytes) return bad(`larger than ${maxBytes} bytes`);
  if (uid !== null && info.uid !== uid) return bad("owned by another user");
  if (info.mode !== null && (info.mode & 0o022) !== 0) return bad("writable by group or others");
  const buf = buffer(maxBytes + 1);
  let off = 0;
  try {
    using file = Deno.openSync(path, { read: true });
    const opened = file.statSync();
    if (!opened.isFile || opened.ino !== info.ino || opened.dev !== info.dev) {
      return bad("changed while being read");
    }
    while (off < buf.length) {
      const n = file.readSync(buf.subarray(off));
      if (n === null || n === 0) break;
      off += n;
      if (off >= opened.size && off < buf.length) break;
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    return bad(`cannot read: ${errText(err)}`);
  }
  if (off > maxBytes) return bad(`larger than ${maxBytes} bytes`);
  return { ok: true, bytes: buf.subarray(0, off), mtimeMs };
}
