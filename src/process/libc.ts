/**
 * The few libc calls Deno has no API for, on Linux: open a file without following a link and
 * without blocking (O_NOFOLLOW | O_NONBLOCK; Deno's OpenOptions cannot say either), read a
 * directory one entry at a time (Deno.readDirSync builds every entry first: ~90 MB of RSS at
 * 100,000 names), and fail a read with an errno instead of a thrown exception (a dead pid's
 * /proc entry costs a failed open(2), not a JS exception). Null where libc cannot be loaded
 * (another OS, musl, no --allow-ffi): callers then use Deno's own calls.
 */
import { EACCES, ENOENT, EPERM, loadedLibc, noteLibc } from "./types.ts";

const SYMBOLS = {
  open: { parameters: ["buffer", "i32"], result: "i32" },
  openat: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  unlinkat: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32" },
  getdents64: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** open(2) flags; O_DIRECTORY and O_NOFOLLOW differ between x86 and the ARM family. */
const ARM = Deno.build.arch === "aarch64";
export const O_NONBLOCK = 0o4000;
export const O_CLOEXEC = 0o2000000;
export const O_DIRECTORY = ARM ? 0o40000 : 0o200000;
export const O_NOFOLLOW = ARM ? 0o100000 : 0o400000;
const AT_EMPTY_PATH = 0x1000;
const STATX_BASIC_STATS = 0x7ff;

/** A failure whose errno could not be read back. */
export const UNKNOWN_ERRNO = 100_000;
export { EACCES, ENOENT, EPERM, loadedLibc };
export const ELOOP = 40;
const ENOTDIR = 20;

/** struct linux_dirent64: d_ino, d_off (8 bytes each), d_reclen (2), d_type (1), d_name. */
const D_RECLEN = 16;
const D_TYPE = 18;
const D_NAME = 19;
/** Entries are read this many bytes at a time: one call for about a hundred names. */
const DENTS_BUFFER = 8 * 1024;
const DENTS_COUNT = BigInt(DENTS_BUFFER);

/** What statx(2) says of an open file (struct statx has one layout on every architecture). */
export interface Stat {
  isFile: boolean;
  uid: number;
  mode: number;
  size: number;
  mtimeMs: number;
}

/** One directory entry; `kind` is what readdir says ("unknown" where the filesystem is silent). */
export interface DirEntry {
  name: string;
  kind: "file" | "dir" | "link" | "other" | "unknown";
}

const KINDS: Record<number, DirEntry["kind"]> = { 0: "unknown", 4: "dir", 8: "file", 10: "link" };

export interface Libc {
  /** open(2) of a path; the fd, or -errno. */
  open(path: string, flags: number): number;
  /** open(2) of a path already written as NUL-terminated bytes (no string made); as open. */
  openPath(path: Uint8Array, flags: number): number;
  /** openat(2) relative to a directory fd; the fd, or -errno. */
  openat(dirFd: number, name: string, flags: number): number;
  /** read(2) into `buf`; bytes read, or -errno. */
  read(fd: number, buf: Uint8Array): number;
  close(fd: number): void;
  /**
   * unlinkat(2) of a name relative to a directory fd, flags 0: a link is removed, never its
   * target, and a directory is refused (EISDIR). 0, or -errno.
   */
  unlinkat(dirFd: number, name: string): number;
  /** statx(2) of an open fd; null when it fails. */
  fstat(fd: number): Stat | null;
  /** A directory opened without following a link, read one entry at a time. */
  openDir(path: string): Dir;
  /**
   * The numeric names in directory `path` (the pids /proc lists), read straight from the
   * entries' bytes, no string made; null when it cannot be read or holds more than `limit`.
   */
  readPids(path: string, limit: number): Set<number> | null;
}

export interface Dir extends Disposable {
  /** The directory's fd, for openat(2) of its entries. */
  readonly fd: number;
  /** The next entry (never "." or ".."), or null at the end. */
  next(): DirEntry | null;
  close(): void;
}

let cached: Libc | null | undefined;

/** libc on Linux (glibc), loaded once; null where it cannot be. */
export function libc(): Libc | null {
  if (cached !== undefined) return cached;
  cached = null;
  if (Deno.build.os !== "linux" || !(Deno.build.arch === "x86_64" || ARM)) return null;
  let lib: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    lib = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch {
    return null;
  }
  cached = bind(lib.symbols);
  noteLibc(cached);
  return cached;
}

function bind(s: Deno.DynamicLibrary<typeof SYMBOLS>["symbols"]): Libc {
  const encoder = new TextEncoder();
  /** Paths as NUL-terminated bytes, in one reused buffer (record names are short). */
  let pathBuf = new Uint8Array(4096);
  const cString = (text: string): Uint8Array => {
    if (text.length * 3 + 1 > pathBuf.length) pathBuf = new Uint8Array(text.length * 3 + 1);
    // ASCII (every record name, every /proc path) byte by byte: encodeInto is an op call,
    // and it was the largest single cost of `list` over a big store.
    let i = 0;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0 || c > 0x7f) break;
      pathBuf[i] = c;
    }
    const written = i === text.length ? i : encoder.encodeInto(text, pathBuf).written;
    pathBuf[written] = 0;
    return pathBuf;
  };
  // errno as read back after a failed call; never 0, so a failure never reads as fd 0 (a
  // clobbered errno is UNKNOWN_ERRNO and callers ask Deno's calls instead).
  // The location is the calling thread's, and every call of this isolate runs on one thread:
  // looked up once, not a call and a view per failure (`list` fails an open per dead pid).
  let errnoView: Deno.UnsafePointerView | null | undefined;
  const errno = () => {
    if (errnoView === undefined) {
      const p = s.__errno_location();
      errnoView = p === null ? null : new Deno.UnsafePointerView(p);
    }
    const e = errnoView === null ? 0 : errnoView.getInt32();
    return e > 0 ? e : UNKNOWN_ERRNO;
  };
  const empty = new Uint8Array(1);
  const stx = new Uint8Array(256);
  const view = new DataView(stx.buffer);
  // read(2)'s count as the BigInt a usize takes on V8's fast call path, made once per size: the
  // two sizes in use (the records' buffer, /proc's) alternate in `list`, and one slot made a
  // BigInt and an array at each change, twice per live record.
  let length1 = -1;
  let count1 = 0n;
  let length2 = -1;
  let count2 = 0n;
  const u64 = (off: number) => view.getUint32(off, true) + view.getUint32(off + 4, true) * 2 ** 32;
  return {
    open(path, flags) {
      const fd = s.open(cString(path), flags | O_CLOEXEC);
      return fd < 0 ? -errno() : fd;
    },
    openPath(path, flags) {
      const fd = s.open(path, flags | O_CLOEXEC);
      return fd < 0 ? -errno() : fd;
    },
    openat(dirFd, name, flags) {
      const fd = s.openat(dirFd, cString(name), flags | O_CLOEXEC);
      return fd < 0 ? -errno() : fd;
    },
    read(fd, buf) {
      const length = buf.length;
      let count: bigint;
      if (length === length1) count = count1;
      else if (length === length2) count = count2;
      else {
        length2 = length1;
        count2 = count1;
        length1 = length;
        count = count1 = BigInt(length);
      }
      const n = Number(s.read(fd, buf, count));
      return n < 0 ? -errno() : n;
    },
    close(fd) {
      s.close(fd);
    },
    unlinkat(dirFd, name) {
      return s.unlinkat(dirFd, cString(name), 0) === 0 ? 0 : -errno();
    },
    fstat(fd) {
      if (s.statx(fd, empty, AT_EMPTY_PATH, STATX_BASIC_STATS, stx) !== 0) return null;
      const mode = view.getUint16(28, true);
      return {
        isFile: (mode & 0o170000) === 0o100000,
        uid: view.getUint32(20, true),
        mode: mode & 0o7777,
        size: u64(40),
        // tv_sec as two 32-bit halves: no BigInt a call (exact below 2^53 ms).
        mtimeMs: (view.getInt32(116, true) * 2 ** 32 + view.getUint32(112, true)) * 1000 +
          Math.floor(view.getUint32(120, true) / 1e6),
      };
    },
    openDir(path) {
      const fd = s.open(cString(path), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) throw osError(errno(), path);
      // getdents64(2) straight into a buffer, names decoded here: readdir(3) would cost a call
      // and a string read back per entry.
      const buf = new Uint8Array(DENTS_BUFFER);
      const view = new DataView(buf.buffer);
      let filled = 0;
      let at = 0;
      let open = true;
      const close = () => {
        if (open) s.close(fd);
        open = false;
      };
      return {
        fd,
        next() {
          while (open) {
            if (at >= filled) {
              const n = Number(s.getdents64(fd, buf, DENTS_COUNT));
              if (n < 0) throw osError(errno(), path);
              if (n === 0) return null;
              [filled, at] = [n, 0];
            }
            const length = view.getUint16(at + D_RECLEN, true);
            const kind = KINDS[buf[at + D_TYPE]] ?? "other";
            const end = buf.indexOf(0, at + D_NAME);
            const name = entryName(buf, at + D_NAME, end === -1 ? at + length : end);
            at += length;
            if (name === "." || name === "..") continue;
            return { name, kind };
          }
          return null;
        },
        close,
        [Symbol.dispose]: close,
      };
    },
    readPids(path, limit) {
      const fd = s.open(cString(path), O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return null;
      const pids = new Set<number>();
      const buf = new Uint8Array(DENTS_BUFFER);
      const view = new DataView(buf.buffer);
      try {
        for (;;) {
          const n = Number(s.getdents64(fd, buf, DENTS_COUNT));
          if (n < 0) return null;
          if (n === 0) return pids;
          for (let at = 0; at < n;) {
            const length = view.getUint16(at + D_RECLEN, true);
            // A pid: 1 to 15 digits, the first not 0 (no name in /proc is a number otherwise); a
            // 16th digit leaves buf[i] a digit, not the NUL, so the name is not taken.
            let pid = 0;
            let i = at + D_NAME;
            const end = at + length;
            for (; i < end && i < at + D_NAME + 15; i++) {
              const b = buf[i];
              if (b < 48 || b > 57) break;
              pid = pid * 10 + b - 48;
            }
            if (buf[i] === 0 && i > at + D_NAME && buf[at + D_NAME] !== 48) {
              if (pids.size >= limit) return null;
              pids.add(pid);
            }
            at = end;
          }
        }
      } finally {
        s.close(fd);
      }
    },
  };
}

const nameDecoder = new TextDecoder();

/** A directory entry's name: ASCII (every record's) straight from its bytes, else as UTF-8. */
function entryName(buf: Uint8Array, from: number, to: number): string {
  const bytes = buf.subarray(from, to);
  if (bytes.length > 64) return nameDecoder.decode(bytes);
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return nameDecoder.decode(bytes);
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** The Deno error that Deno's own call would have thrown for this errno. */
export function osError(errno: number, path: string): Error {
  switch (errno) {
    case ENOENT:
      return new Deno.errors.NotFound(`No such file or directory: ${path}`);
    case EPERM:
    case EACCES:
      return new Deno.errors.PermissionDenied(`Permission denied: ${path}`);
    case ENOTDIR:
      return new Deno.errors.NotADirectory(`Not a directory: ${path}`);
    case ELOOP:
      return new Deno.errors.FilesystemLoop(`Is a symbolic link: ${path}`);
    default:
      return new Error(`Error ${errno}: ${path}`);
  }
}
