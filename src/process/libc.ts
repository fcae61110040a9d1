/**
 * libc on Linux, loaded once for every caller: one dlopen, one rule for when (FFI already
 * granted: asking would prompt inside a hook), one errno reader. Here the calls Deno has no API
 * for that the process layer needs: open a file failing with an errno instead of a thrown
 * exception (a dead pid's /proc entry costs a failed open(2), not a JS exception), read it, and
 * list /proc's pids straight from getdents64(2); src/fs/syscalls.ts binds the file calls
 * (openat, statx, getdents64, unlinkat) on the same library, and exit_wait.ts its pidfd.
 * Null where libc cannot be loaded (another OS, musl, no --allow-ffi): callers then use Deno's
 * own calls.
 */
import { lazyLibrary } from "./notify.ts";
import { noteLibc, UNKNOWN_ERRNO } from "./types.ts";

const SYMBOLS = {
  open: { parameters: ["buffer", "i32"], result: "i32" },
  openat: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  unlinkat: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32" },
  getdents64: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** libc's functions as Deno.dlopen binds them. */
export type LibcSymbols = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

const openLibc = lazyLibrary(Deno.build.os === "linux" ? "libc.so.6" : null, SYMBOLS);

/**
 * libc.so.6 on Linux, dlopen'ed on first use and kept, by the rule every library here is
 * opened by (notify.ts); null where it cannot be (another OS, musl, FFI not granted already).
 */
export function libcSymbols(): LibcSymbols | null {
  return openLibc()?.symbols ?? null;
}

// The location is the calling thread's, and every call of this isolate runs on one thread:
// looked up once, not a call and a view per failure (`list` fails an open per dead pid).
let errnoView: Deno.UnsafePointerView | null | undefined;

/**
 * errno as read back after a failed call; never 0, so a failure never reads as fd 0 (a
 * clobbered errno is UNKNOWN_ERRNO and callers ask Deno's calls instead).
 */
export function errno(s: LibcSymbols): number {
  if (errnoView === undefined) {
    const p = s.__errno_location();
    errnoView = p === null ? null : new Deno.UnsafePointerView(p);
  }
  const e = errnoView === null ? 0 : errnoView.getInt32();
  return e > 0 ? e : UNKNOWN_ERRNO;
}

const encoder = new TextEncoder();
/** Paths as NUL-terminated bytes, in one reused buffer (record names are short). */
let pathBuf = new Uint8Array(4096);

/** `text` as a NUL-terminated C string, in a buffer the next call reuses. */
export function cString(text: string): Uint8Array {
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
}

/** open(2) flags; O_DIRECTORY and O_NOFOLLOW differ between x86 and the ARM family. */
const ARM = Deno.build.arch === "aarch64";
/** Whether the flags here and the struct layouts src/fs/syscalls.ts reads are this machine's. */
export const KNOWN_ARCH = Deno.build.arch === "x86_64" || ARM;
export const O_NONBLOCK = 0o4000;
export const O_CLOEXEC = 0o2000000;
export const O_DIRECTORY = ARM ? 0o40000 : 0o200000;
export const O_NOFOLLOW = ARM ? 0o100000 : 0o400000;

/** struct linux_dirent64: d_ino, d_off (8 bytes each), d_reclen (2), d_type (1), d_name. */
export const D_RECLEN = 16;
export const D_TYPE = 18;
export const D_NAME = 19;
/** Entries are read this many bytes at a time: one call for about a hundred names. */
export const DENTS_BUFFER = 8 * 1024;
export const DENTS_COUNT = BigInt(DENTS_BUFFER);

/** The calls the process layer makes: /proc's files and its list of pids. */
export interface Libc {
  /** open(2) of a path; the fd, or -errno. */
  open(path: string, flags: number): number;
  /** open(2) of a path already written as NUL-terminated bytes (no string made); as open. */
  openPath(path: Uint8Array, flags: number): number;
  /** read(2) into `buf`; bytes read, or -errno. */
  read(fd: number, buf: Uint8Array): number;
  close(fd: number): void;
  /**
   * The numeric names in directory `path` (the pids /proc lists), read straight from the
   * entries' bytes, no string made; null when it cannot be read or holds more than `limit`.
   */
  readPids(path: string, limit: number): Set<number> | null;
}

let cached: Libc | null | undefined;

/** libc's process calls on Linux (glibc), bound once; null where libc cannot be loaded. */
export function libc(): Libc | null {
  if (cached !== undefined) return cached;
  cached = null;
  const s = KNOWN_ARCH ? libcSymbols() : null;
  if (s === null) return null;
  cached = bind(s);
  noteLibc(cached);
  return cached;
}

function bind(s: LibcSymbols): Libc {
  // read(2)'s count as the BigInt a usize takes on V8's fast call path, made once per size: the
  // two sizes in use (the records' buffer, /proc's) alternate in `list`, and one slot made a
  // BigInt and an array at each change, twice per live record.
  let length1 = -1;
  let count1 = 0n;
  let length2 = -1;
  let count2 = 0n;
  return {
    open(path, flags) {
      const fd = s.open(cString(path), flags | O_CLOEXEC);
      return fd < 0 ? -errno(s) : fd;
    },
    openPath(path, flags) {
      const fd = s.open(path, flags | O_CLOEXEC);
      return fd < 0 ? -errno(s) : fd;
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
      return n < 0 ? -errno(s) : n;
    },
    close(fd) {
      s.close(fd);
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
