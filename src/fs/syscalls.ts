/**
 * The file calls Deno has no API for, on Linux, bound on the process layer's libc
 * (src/process/libc.ts): open a file relative to a directory without following a link and
 * without blocking (openat with O_NOFOLLOW | O_NONBLOCK; Deno's OpenOptions cannot say
 * either), statx of the open file, a directory read one entry at a time (getdents64:
 * Deno.readDirSync builds every entry first, ~90 MB of RSS at 100,000 names), and unlinkat of
 * one entry. Null where libc cannot be loaded: callers then use Deno's own calls.
 */
import {
  cString,
  D_NAME,
  D_RECLEN,
  D_TYPE,
  DENTS_BUFFER,
  DENTS_COUNT,
  errno,
  KNOWN_ARCH,
  type LibcSymbols,
  libcSymbols,
  O_CLOEXEC,
  O_DIRECTORY,
  O_NOFOLLOW,
} from "../process/libc.ts";
import { EACCES, ELOOP, ENOENT, ENOTDIR, EPERM } from "../process/types.ts";

export { O_NOFOLLOW, O_NONBLOCK } from "../process/libc.ts";

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

export interface FileCalls {
  /** openat(2) relative to a directory fd; the fd, or -errno. */
  openat(dirFd: number, name: string, flags: number): number;
  /**
   * unlinkat(2) of a name relative to a directory fd, flags 0: a link is removed, never its
   * target, and a directory is refused (EISDIR). 0, or -errno.
   */
  unlinkat(dirFd: number, name: string): number;
  /** statx(2) of an open fd; null when it fails. */
  fstat(fd: number): Stat | null;
  /** A directory opened without following a link, read one entry at a time. */
  openDir(path: string): Dir;
}

export interface Dir extends Disposable {
  /** The directory's fd, for openat(2) of its entries. */
  readonly fd: number;
  /** The next entry (never "." or ".."), or null at the end. */
  next(): DirEntry | null;
  close(): void;
}

let cached: FileCalls | null | undefined;

/** The file calls on Linux (glibc), bound once; null where libc cannot be loaded. */
export function fileCalls(): FileCalls | null {
  if (cached !== undefined) return cached;
  const s = KNOWN_ARCH ? libcSymbols() : null;
  return cached = s === null ? null : bind(s);
}

/** statx(2) of the fd itself (an empty path), for the basic fields. */
const AT_EMPTY_PATH = 0x1000;
const STATX_BASIC_STATS = 0x7ff;

function bind(s: LibcSymbols): FileCalls {
  const empty = new Uint8Array(1);
  const stx = new Uint8Array(256);
  const view = new DataView(stx.buffer);
  const u64 = (off: number) => view.getUint32(off, true) + view.getUint32(off + 4, true) * 2 ** 32;
  return {
    openat(dirFd, name, flags) {
      const fd = s.openat(dirFd, cString(name), flags | O_CLOEXEC);
      return fd < 0 ? -errno(s) : fd;
    },
    unlinkat(dirFd, name) {
      return s.unlinkat(dirFd, cString(name), 0) === 0 ? 0 : -errno(s);
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
      if (fd < 0) throw osError(errno(s), path);
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
              if (n < 0) throw osError(errno(s), path);
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
