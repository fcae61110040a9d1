/**
 * FreeBSD process identity through libc's sysctl. The start token is `ki_start` from
 * `struct kinfo_proc`, but FreeBSD recomputes it from the current boot time, so it moves
 * when the wall clock is stepped (psutil #2888 disabled its PID-reuse check for this reason).
 * Tokens are therefore compared with a tolerance of 2 seconds, and a larger difference is
 * "uncertain", never "different": on FreeBSD roster cannot prove that a pid was reused, only
 * that it still looks like the same process. There is no boot id.
 * The amd64/arm64 offsets come from gopsutil `process_freebsd_amd64.go` and were only
 * checked against fixtures, never on a real FreeBSD machine.
 */
import type { Probe, ProcessBackend, ProcessCommand, ProcessInfo, TokenMatch } from "./types.ts";

/** sizeof(struct kinfo_proc) on 64-bit FreeBSD, also stored in its ki_structsize field. */
export const FREEBSD_KINFO_PROC_SIZE = 1088;
export const FREEBSD_SZOMB = 5;
/** How far ki_start may drift between two readings and still count as the same process. */
export const FREEBSD_TOKEN_TOLERANCE_USEC = 2_000_000n;

const CTL_KERN = 1;
const KERN_ARGMAX = 8;
const KERN_PROC = 14;
const KERN_PROC_PID = 1;
const KERN_PROC_ARGS = 7;
const KERN_PROC_PATHNAME = 12;
const LIBC = "libc.so.7";
const PATH_MAX = 1024;

const OFF_STRUCTSIZE = 0;
const OFF_PID = 72;
const OFF_PPID = 76;
const OFF_START_SEC = 336;
const OFF_START_USEC = 344;
const OFF_STAT = 388;
const OFF_COMM = 447;
const COMM_SIZE = 20;

export interface FreebsdKinfo {
  pid: number;
  ppid: number;
  startSec: bigint;
  startUsec: number;
  stat: number;
  comm: string;
}

/** Decodes one `struct kinfo_proc`; null unless both the length and ki_structsize are 1088. */
export function decodeFreebsdKinfoProc(bytes: Uint8Array): FreebsdKinfo | null {
  if (bytes.length !== FREEBSD_KINFO_PROC_SIZE) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getInt32(OFF_STRUCTSIZE, true) !== FREEBSD_KINFO_PROC_SIZE) return null;
  const comm = bytes.subarray(OFF_COMM, OFF_COMM + COMM_SIZE);
  const nul = comm.indexOf(0);
  return {
    pid: view.getInt32(OFF_PID, true),
    ppid: view.getInt32(OFF_PPID, true),
    startSec: view.getBigInt64(OFF_START_SEC, true),
    // tv_usec is a long on 64-bit FreeBSD but always below 1e6.
    startUsec: Number(view.getBigInt64(OFF_START_USEC, true)),
    stat: view.getInt8(OFF_STAT),
    comm: new TextDecoder().decode(nul === -1 ? comm : comm.subarray(0, nul)),
  };
}

/** `freebsd:<sec>.<usec padded to 6>`. */
export function freebsdToken(startSec: bigint, startUsec: number): string {
  return `freebsd:${startSec}.${String(startUsec).padStart(6, "0")}`;
}

/** Microseconds since the epoch, or null for text that is not a FreeBSD token. */
export function parseFreebsdToken(token: string): bigint | null {
  const m = /^freebsd:(-?\d+)\.(\d{6})$/.exec(token);
  return m ? BigInt(m[1]) * 1_000_000n + BigInt(m[2]) : null;
}

/** Within the tolerance: "same"; otherwise "uncertain", since ki_start moves with the clock. */
export function compareFreebsdTokens(recorded: string, current: string): TokenMatch {
  const a = parseFreebsdToken(recorded);
  const b = parseFreebsdToken(current);
  if (a === null || b === null) return "uncertain";
  const diff = a > b ? a - b : b - a;
  return diff <= FREEBSD_TOKEN_TOLERANCE_USEC ? "same" : "uncertain";
}

/** Splits KERN_PROC_ARGS output: NUL-separated and NUL-terminated, like Linux cmdline. */
export function parseProcArgs(bytes: Uint8Array): string[] {
  const parts = new TextDecoder().decode(bytes).split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

export function freebsdProcessInfo(k: FreebsdKinfo): ProcessInfo {
  return {
    pid: k.pid,
    ppid: k.ppid,
    startToken: freebsdToken(k.startSec, k.startUsec),
    startedAtMs: Number(k.startSec) * 1000 + Math.floor(k.startUsec / 1000),
    zombie: k.stat === FREEBSD_SZOMB,
    name: k.comm,
  };
}

/** Null when FFI is not granted (asking would prompt inside a hook) or libc.so.7 is missing. */
export function freebsdBackend(): ProcessBackend | null {
  let lib;
  try {
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    // Kept open for the life of the process: the CLI is short-lived.
    lib = Deno.dlopen(LIBC, {
      sysctl: {
        parameters: ["buffer", "u32", "buffer", "buffer", "pointer", "usize"],
        result: "i32",
      },
    });
  } catch {
    return null;
  }
  const { sysctl } = lib.symbols;

  /** One sysctl read into `size` bytes; null when the call fails. */
  function read(mib: number[], size: number): Uint8Array | null {
    const buf = new Uint8Array(size);
    const len = new BigUint64Array([BigInt(size)]);
    if (sysctl(new Int32Array(mib), mib.length, buf, len, null, 0n) !== 0) return null;
    return buf.subarray(0, Number(len[0]));
  }

  function probe(pid: number): Probe {
    // kill(0 or negative) would probe a process group, not a process.
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid > 0x7fffffff) return { kind: "gone" };
    const bytes = read([CTL_KERN, KERN_PROC, KERN_PROC_PID, pid], FREEBSD_KINFO_PROC_SIZE);
    if (bytes === null) return confirmFailure(pid);
    if (bytes.length === 0) return { kind: "gone" };
    const k = decodeFreebsdKinfoProc(bytes);
    if (k === null || k.pid !== pid) return { kind: "unsupported" };
    return { kind: "exists", info: freebsdProcessInfo(k) };
  }

  /** A missing pid makes sysctl fail with ESRCH, but errno is unreadable here: ask kill(pid, 0). */
  function confirmFailure(pid: number): Probe {
    try {
      Deno.kill(pid, 0 as unknown as Deno.Signal);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return { kind: "gone" };
      if (!(err instanceof Deno.errors.PermissionDenied)) return { kind: "unsupported" };
    }
    return {
      kind: "exists",
      info: { pid, ppid: null, startToken: null, startedAtMs: null, zombie: false, name: null },
    };
  }

  function command(pid: number): ProcessCommand {
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid > 0x7fffffff) {
      return { exe: null, argv: null };
    }
    let exe: string | null = null;
    let argv: string[] | null = null;
    const path = read([CTL_KERN, KERN_PROC, KERN_PROC_PATHNAME, pid], PATH_MAX);
    if (path !== null) {
      const nul = path.indexOf(0);
      exe = new TextDecoder().decode(nul === -1 ? path : path.subarray(0, nul)) || null;
    }
    // As psutil does: size the buffer by KERN_ARGMAX so any argument list fits.
    const argmax = read([CTL_KERN, KERN_ARGMAX], 4);
    if (argmax !== null && argmax.length === 4) {
      const size = new DataView(argmax.buffer, argmax.byteOffset, 4).getInt32(0, true);
      const args = size > 0 ? read([CTL_KERN, KERN_PROC, KERN_PROC_ARGS, pid], size) : null;
      // Zombies and kernel processes answer with nothing.
      if (args !== null && args.length > 0) argv = parseProcArgs(args);
    }
    return { exe, argv };
  }

  return {
    name: "freebsd",
    probe,
    bootId: () => null,
    command,
    compareTokens: compareFreebsdTokens,
  } satisfies ProcessBackend;
}
