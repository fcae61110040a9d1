/**
 * What the BSD-family backends (darwin.ts, freebsd.ts) share. Both ask sysctl(3) for one
 * `struct kinfo_proc` under the same kern.proc.pid MIB, read the same few fields from it (at
 * each OS's own offsets, both little-endian), size argument reads by kern.argmax, and turn
 * the fields into a ProcessInfo and a start token the same way (kinfoScheme). Struct layouts,
 * zombie states and token comparison stay in each OS module: nothing here knows an offset.
 */
import type { Probe, ProcessInfo } from "./types.ts";
import { isPid, MAX_PID_T } from "./pid.ts";

/** sysctl MIB names that have the same number on macOS and FreeBSD. */
export const CTL_KERN = 1;
export const KERN_ARGMAX = 8;
export const KERN_PROC = 14;
const KERN_PROC_PID = 1;

/** sysctl(3) as Deno.dlopen declares it. */
export const SYSCTL_SYMBOL = {
  parameters: ["buffer", "u32", "buffer", "buffer", "pointer", "usize"],
  result: "i32",
} as const satisfies Deno.ForeignFunction;

/** The fields roster reads from `struct kinfo_proc`, whatever the OS's layout. */
export interface KinfoProc {
  pid: number;
  ppid: number;
  startSec: bigint;
  startUsec: number;
  stat: number;
  comm: string;
}

/** Where a `struct kinfo_proc` keeps what roster reads: byte offsets (both OSes little-endian). */
export interface KinfoLayout {
  size: number;
  /** ki_structsize's offset, where the struct states its own size (FreeBSD); null: none. */
  structSize: number | null;
  pid: number;
  ppid: number;
  startSec: number;
  startUsec: number;
  /** tv_usec's width: an int on macOS, a long on 64-bit FreeBSD (always below 1e6). */
  usecBytes: 4 | 8;
  stat: number;
  comm: number;
  commSize: number;
}

/** Decodes one `struct kinfo_proc`; null unless it is `layout.size` bytes (and says so). */
export function decodeKinfo(bytes: Uint8Array, layout: KinfoLayout): KinfoProc | null {
  if (bytes.length !== layout.size) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (layout.structSize !== null && view.getInt32(layout.structSize, true) !== layout.size) {
    return null;
  }
  return {
    pid: view.getInt32(layout.pid, true),
    ppid: view.getInt32(layout.ppid, true),
    startSec: view.getBigInt64(layout.startSec, true),
    startUsec: layout.usecBytes === 4
      ? view.getInt32(layout.startUsec, true)
      : Number(view.getBigInt64(layout.startUsec, true)),
    stat: view.getInt8(layout.stat),
    comm: cString(bytes.subarray(layout.comm, layout.comm + layout.commSize)),
  };
}

/** `<os>:<sec>.<usec padded to 6>`: the padding keeps the text unambiguous. */
export function kinfoToken(os: string, startSec: bigint, startUsec: number): string {
  return `${os}:${startSec}.${String(startUsec).padStart(6, "0")}`;
}

/** One OS's reading of `struct kinfo_proc`: its decoder, its start token and its ProcessInfo. */
export interface KinfoScheme {
  /** sizeof(struct kinfo_proc): what kern.proc.pid is asked for. */
  size: number;
  /** One struct decoded at the OS's offsets; null unless it is the OS's size (and says so). */
  decode(bytes: Uint8Array): KinfoProc | null;
  /** `<os>:<sec>.<usec padded to 6>`. */
  token(startSec: bigint, startUsec: number): string;
  /** Roster's view of a decoded struct: the token, and a zombie where p_stat says so. */
  info(k: KinfoProc): ProcessInfo;
}

/** The scheme of an OS named `os` in its tokens, its struct at `layout`, a zombie's p_stat. */
export function kinfoScheme(os: string, layout: KinfoLayout, zombieStat: number): KinfoScheme {
  const token = (startSec: bigint, startUsec: number) => kinfoToken(os, startSec, startUsec);
  return {
    size: layout.size,
    decode: (bytes) => decodeKinfo(bytes, layout),
    token,
    info: (k) => kinfoToInfo(k, token(k.startSec, k.startUsec), k.stat === zombieStat),
  };
}

/** One sysctl read into `size` bytes; null when the call fails. */
export type SysctlRead = (mib: number[], size: number) => Uint8Array | null;

/** Wraps the dlopen'ed sysctl symbol as a `SysctlRead`. */
export function sysctlReader(sysctl: Deno.StaticForeignSymbol<typeof SYSCTL_SYMBOL>): SysctlRead {
  return (mib, size) => {
    const buf = new Uint8Array(size);
    const len = new BigUint64Array([BigInt(size)]);
    if (sysctl(new Int32Array(mib), mib.length, buf, len, null, 0n) !== 0) return null;
    return buf.subarray(0, Number(len[0]));
  };
}

/** kern.argmax, the size that fits any argument area; null when unreadable or not positive. */
export function readArgmax(read: SysctlRead): number | null {
  const bytes = read([CTL_KERN, KERN_ARGMAX], 4);
  if (bytes === null || bytes.length !== 4) return null;
  const size = new DataView(bytes.buffer, bytes.byteOffset, 4).getInt32(0, true);
  return size > 0 ? size : null;
}

/** A pid that names one process: pid_t is 32-bit, and 0 or a negative pid means a group. */
export function isBsdPid(pid: number): boolean {
  return isPid(pid, MAX_PID_T);
}

/** The kern.proc.pid MIB for one pid. */
export function kinfoMib(pid: number): number[] {
  return [CTL_KERN, KERN_PROC, KERN_PROC_PID, pid];
}

/**
 * One pid probed through kern.proc.pid: never a group (0 or a negative pid: kernel_task on
 * macOS, a process group to kill(2)); `failed` answers when sysctl fails (errno cannot be read
 * reliably from Deno), else judgeKinfo settles the answer.
 */
export function probeKinfo(
  read: SysctlRead,
  pid: number,
  scheme: KinfoScheme,
  failed: (pid: number) => Probe,
): Probe {
  if (!isBsdPid(pid)) return { kind: "gone" };
  const bytes = read(kinfoMib(pid), scheme.size);
  return bytes === null ? failed(pid) : judgeKinfo(pid, bytes, scheme);
}

/**
 * Settles a kern.proc.pid read that sysctl answered without error: no bytes means no such
 * pid; a struct that does not decode, or describes another pid, proves nothing.
 */
export function judgeKinfo(pid: number, bytes: Uint8Array, scheme: KinfoScheme): Probe {
  if (bytes.length === 0) return { kind: "gone" };
  const k = scheme.decode(bytes);
  if (k === null || k.pid !== pid) return { kind: "unsupported" };
  return { kind: "exists", info: scheme.info(k) };
}

/** Roster's view of a decoded kinfo_proc, given the OS's token and zombie verdict. */
export function kinfoToInfo(k: KinfoProc, startToken: string, zombie: boolean): ProcessInfo {
  return {
    pid: k.pid,
    ppid: k.ppid,
    startToken,
    startedAtMs: Number(k.startSec) * 1000 + Math.floor(k.startUsec / 1000),
    zombie,
    name: k.comm,
  };
}

/** The index of the first NUL at or after `from`, or the length when there is none. */
export function indexOfNul(bytes: Uint8Array, from: number): number {
  const i = bytes.indexOf(0, from);
  return i === -1 ? bytes.length : i;
}

export function decodeUtf8(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** A fixed char[] field: up to the first NUL, or the whole field when it is full. */
export function cString(field: Uint8Array): string {
  return decodeUtf8(field.subarray(0, indexOfNul(field, 0)));
}
