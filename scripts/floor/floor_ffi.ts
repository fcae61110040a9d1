/**
 * The Deno FFI floor, shared by list_ffi.ts and prune_ffi.ts: floor.h's work done from Deno
 * through Deno.dlopen of libc, call for call (getdents64 for the directory; per record openat
 * with O_NOFOLLOW | O_NONBLOCK, fstat on the handle, read, close; per pid open, read and close
 * of /proc/<pid>/stat). No JSON parsing, no strings per record: bytes in fixed buffers. What it
 * costs above the C floor is the runtime's own price for the same I/O (FFI calls, JIT warm-up),
 * which no change to roster's JavaScript can remove. x86_64 and aarch64 glibc only.
 */

/**
 * read, write and getdents64 return ssize_t, but never more than the 64 KiB asked for: read as
 * i32 (the low half of the register, -1 stays -1) they come back as numbers, not a BigInt a
 * call. Their counts are usize, passed as BigInts made once: Deno's FFI also takes a number
 * there, but then leaves V8's fast call path (about 200 ns a call against 20).
 */
const SYMBOLS = {
  open: { parameters: ["buffer", "i32"], result: "i32" },
  openat: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  openatMode: { name: "openat", parameters: ["i32", "buffer", "i32", "u32"], result: "i32" },
  fstat: { parameters: ["i32", "buffer"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  write: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  getdents64: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  unlinkat: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  flock: { parameters: ["i32", "i32"], result: "i32" },
  getuid: { parameters: [], result: "u32" },
} as const;

/** The calls as this module makes them. */
interface Calls {
  open(path: Uint8Array, flags: number): number;
  openat(dirFd: number, name: Uint8Array, flags: number): number;
  openatMode(dirFd: number, name: Uint8Array, flags: number, mode: number): number;
  fstat(fd: number, buf: Uint8Array): number;
  read(fd: number, buf: Uint8Array, count: bigint): number;
  write(fd: number, buf: Uint8Array, count: bigint): number;
  close(fd: number): number;
  getdents64(fd: number, buf: Uint8Array, count: bigint): number;
  unlinkat(dirFd: number, name: Uint8Array, flags: number): number;
  flock(fd: number, op: number): number;
  getuid(): number;
}

const ARM = Deno.build.arch === "aarch64";
const O_RDONLY = 0;
const O_RDWR = 2;
const O_CREAT = 0o100;
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const O_DIRECTORY = ARM ? 0o40000 : 0o200000;
const O_NOFOLLOW = ARM ? 0o100000 : 0o400000;
const LOCK_EX = 2;
/** struct stat: st_mode, st_uid and st_size, whose offsets differ between the two ABIs. */
const ST_MODE = ARM ? 16 : 24;
const ST_UID = ARM ? 24 : 28;
const ST_SIZE = 48;
const MAX_RECORD = 65536;
/** glibc's readdir reads 32 KiB of entries a call: the same number of getdents64 calls. */
const DENTS = 32768;
/** struct linux_dirent64: d_reclen at 16, d_name at 19. */
const D_RECLEN = 16;
const D_NAME = 19;

const lib = Deno.dlopen("libc.so.6", SYMBOLS).symbols as unknown as Calls;
const encoder = new TextEncoder();

/** A text's UTF-8 bytes, for the output. */
export const bytes = (text: string) => encoder.encode(text);
/** A NUL-terminated C string. */
const cString = (text: string) => encoder.encode(`${text}\0`);

const dents = new Uint8Array(DENTS);
const dentsView = new DataView(dents.buffer);
/** The current entry's name, NUL-terminated, its length and its pid's digits. */
export const name = new Uint8Array(256);
export let nameLength = 0;
export let pidDigits = 0;
/** The current record's bytes (NUL-terminated) and length (Dir.nextRecord fills them). */
export const record = new Uint8Array(MAX_RECORD + 1);
export let recordLength = 0;
const st = new Uint8Array(256);
const stView = new DataView(st.buffer);
const stat = new Uint8Array(1024);
const STAT_COUNT = BigInt(stat.length - 1);
const RECORD_COUNT = BigInt(MAX_RECORD);
const DENTS_COUNT = BigInt(DENTS);
const procPath = new Uint8Array(64);
let procPrefix = encoder.encode("/proc/");
const statSuffix = encoder.encode("/stat\0");
const tokenKey = encoder.encode('"start_token":');
const uid = lib.getuid();

/**
 * The programs' arguments, `<host-dir> [proc-root]`: the host directory opened, and /proc's
 * place noted; exits 2 without a directory.
 */
export function hostDirFromArgs(): Dir {
  const [path, proc] = Deno.args;
  if (path === undefined) Deno.exit(2);
  if (proc !== undefined) procPrefix = encoder.encode(`${proc}/`);
  return new Dir(path);
}

/** A directory read entry by entry (getdents64), as opendir/readdir do. */
export class Dir {
  readonly fd: number;
  #filled = 0;
  #at = 0;

  constructor(readonly path: string) {
    this.fd = lib.open(cString(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (this.fd < 0) throw new Error(`Cannot open ${path}`);
  }

  /**
   * The next record read into `record`, its name in `name` (list.c's loop: record_pid, then
   * read_record); false at the end.
   */
  nextRecord(): boolean {
    for (;;) {
      const pid = this.#next();
      if (pid === -1) return false;
      if (pid !== 0 && readRecord(this.fd)) return true;
    }
  }

  /** The next entry's record pid (into `name`), 0 for a name that is not a record's; -1 at the end. */
  #next(): number {
    if (this.#at >= this.#filled) {
      this.#filled = lib.getdents64(this.fd, dents, DENTS_COUNT);
      this.#at = 0;
      if (this.#filled <= 0) return -1;
    }
    const at = this.#at;
    this.#at += dentsView.getUint16(at + D_RECLEN, true);
    // floor.h's record_pid: 1 to 10 digits, no leading zero, then ".json".
    let pid = 0;
    let i = at + D_NAME;
    let c = dents[i];
    if (c < 0x31 || c > 0x39) return 0;
    for (; c >= 0x30 && c <= 0x39; c = dents[++i]) pid = pid * 10 + c - 0x30;
    const digits = i - at - D_NAME;
    if (
      digits > 10 || dents[i] !== 0x2e || dents[i + 1] !== 0x6a || dents[i + 2] !== 0x73 ||
      dents[i + 3] !== 0x6f || dents[i + 4] !== 0x6e || dents[i + 5] !== 0
    ) return 0;
    pidDigits = digits;
    nameLength = digits + 5;
    name.set(dents.subarray(at + D_NAME, at + D_NAME + nameLength + 1));
    return pid;
  }

  close() {
    lib.close(this.fd);
  }
}

/** floor.h's read_record: the current entry read into `record`; false where it is refused. */
function readRecord(dirFd: number): boolean {
  const fd = lib.openat(dirFd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  let n = -1;
  if (lib.fstat(fd, st) === 0) {
    const mode = stView.getUint32(ST_MODE, true);
    if (
      (mode & 0o170000) === 0o100000 && stView.getUint32(ST_UID, true) === uid &&
      (mode & 0o22) === 0 && stView.getUint32(ST_SIZE + 4, true) === 0 &&
      stView.getUint32(ST_SIZE, true) <= MAX_RECORD
    ) {
      n = lib.read(fd, record, RECORD_COUNT);
      if (n >= 0) record[n] = 0;
    }
  }
  lib.close(fd);
  recordLength = n;
  return n >= 0;
}

/**
 * Where the current record's start token starts and ends (floor.h's string_field, whose strstr
 * is here a walk from quote to quote); null if absent.
 */
function startToken(): [number, number] | null {
  let found = -1;
  for (
    let q = record.indexOf(0x22);
    q !== -1 && q < recordLength;
    q = record.indexOf(0x22, q + 1)
  ) {
    let i = 1;
    while (i < tokenKey.length && record[q + i] === tokenKey[i]) i++;
    if (i === tokenKey.length) {
      found = q;
      break;
    }
  }
  if (found === -1) return null;
  let at = found + tokenKey.length;
  while (record[at] === 0x20) at++;
  if (record[at] !== 0x22) return null;
  const end = record.indexOf(0x22, ++at);
  return end === -1 || end >= recordLength ? null : [at, end];
}

/**
 * floor.h's alive() for the current record (after Dir.nextRecord): its pid alive with its start
 * token as /proc/<pid>/stat's field 22.
 */
export function alive(): boolean {
  const token = startToken();
  if (token === null) return false;
  // "/proc/<pid>/stat": the pid's digits are the name's first bytes.
  procPath.set(procPrefix);
  let at = procPrefix.length;
  for (let i = 0; i < pidDigits; i++) procPath[at++] = name[i];
  procPath.set(statSuffix, at);
  const fd = lib.open(procPath, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const n = lib.read(fd, stat, STAT_COUNT);
  lib.close(fd);
  if (n <= 0) return false;
  const close = stat.lastIndexOf(0x29, n - 1);
  if (close < 0 || stat[close + 1] !== 0x20) return false;
  const state = stat[close + 2];
  if (state === 0x5a || state === 0x58 || state === 0x78) return false; // Z, X, x
  // Field 3 (the state) starts at close + 2; each space ends a field: on to field 22.
  let q = close + 2;
  for (let field = 3; field < 22; field++) {
    const space = stat.indexOf(0x20, q);
    if (space < 0 || space >= n) return false;
    q = space + 1;
  }
  let end = stat.indexOf(0x20, q);
  if (end < 0 || end > n) end = n;
  const [from, to] = token;
  if (end - q !== to - from) return false;
  for (let i = 0; i < to - from; i++) if (stat[q + i] !== record[from + i]) return false;
  return true;
}

/** The host directory's lock, held alone (prune.c's flock). */
export function lockExclusive(dirFd: number): void {
  const fd = lib.openatMode(
    dirFd,
    cString(".lock"),
    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
    0o600,
  );
  if (fd < 0 || lib.flock(fd, LOCK_EX) !== 0) throw new Error("Cannot lock the host directory");
}

/** unlinkat(2) of the current entry; true when it is gone. */
export function unlinkCurrent(dirFd: number): boolean {
  return lib.unlinkat(dirFd, name, 0) === 0;
}

/**
 * stdout through a buffer flushed with write(2), as stdio buffers the C floor's output (4 KiB,
 * the st_blksize of /dev/null and of a pipe: the same number of writes).
 */
export class Out {
  #buf = new Uint8Array(4096);
  #at = 0;

  bytes(bytes: Uint8Array, length = bytes.length) {
    if (this.#at + length > this.#buf.length) this.flush();
    if (length > this.#buf.length) {
      lib.write(1, bytes, BigInt(length));
      return;
    }
    this.#buf.set(length === bytes.length ? bytes : bytes.subarray(0, length), this.#at);
    this.#at += length;
  }

  flush() {
    if (this.#at > 0) lib.write(1, this.#buf, BigInt(this.#at));
    this.#at = 0;
  }
}
