/**
 * FreeBSD process identity through libc's sysctl. The start token is `ki_start` from
 * `struct kinfo_proc`, but FreeBSD recomputes it from the current boot time, so it moves
 * when the wall clock is stepped (psutil #2888 disabled its PID-reuse check for this reason).
 * Tokens are therefore compared with a tolerance of 2 seconds, and a larger difference is
 * "uncertain", never "different": on FreeBSD roster cannot prove that a pid was reused, only
 * that it still looks like the same process. There is no boot id.
 * The amd64/arm64 offsets come from gopsutil `process_freebsd_{amd64,arm64}.go`; the tests
 * check them against tables derived from that source (tests/fixtures/offsets), never on a real
 * FreeBSD machine.
 */
import {
  cString,
  CTL_KERN,
  decodeUtf8,
  isBsdPid,
  KERN_PROC,
  type KinfoLayout,
  kinfoScheme,
  probeKinfo,
  readArgmax,
  SYSCTL_SYMBOL,
  sysctlReader,
} from "./bsd.ts";
import { psBackend } from "./ps.ts";
import {
  existsUnread,
  type Probe,
  type ProcessBackend,
  type ProcessCommand,
  type TokenMatch,
} from "./types.ts";

/** sizeof(struct kinfo_proc) on 64-bit FreeBSD, also stored in its ki_structsize field. */
const FREEBSD_KINFO_PROC_SIZE = 1088;
const FREEBSD_SZOMB = 5;
/** How far ki_start may drift between two readings and still count as the same process. */
const FREEBSD_TOKEN_TOLERANCE_USEC = 2_000_000n;

const KERN_PROC_ARGS = 7;
const KERN_PROC_PATHNAME = 12;
const LIBC = "libc.so.7";
const PATH_MAX = 1024;

const FREEBSD_KINFO: KinfoLayout = {
  size: FREEBSD_KINFO_PROC_SIZE,
  structSize: 0,
  pid: 72,
  ppid: 76,
  startSec: 336,
  startUsec: 344,
  usecBytes: 8,
  stat: 388,
  comm: 447,
  commSize: 20,
};

const FREEBSD = kinfoScheme("freebsd", FREEBSD_KINFO, FREEBSD_SZOMB);
/** Decodes one `struct kinfo_proc`; null unless both the length and ki_structsize are 1088. */
export const decodeFreebsdKinfoProc = FREEBSD.decode;
/** `freebsd:<sec>.<usec padded to 6>`. */
export const freebsdToken = FREEBSD.token;
export const freebsdProcessInfo = FREEBSD.info;

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
  const parts = decodeUtf8(bytes).split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * A missing pid makes sysctl fail with ESRCH, but errno is unreadable here, and a process
 * hidden from this user fails the same way. `ps -p` settles it with the `--allow-run=ps` the
 * binary has; `Deno.kill(pid, 0)` needs unrestricted `--allow-run`, so it is asked only when
 * that is granted. Neither answering is "unsupported", never a guess.
 */
export function confirmSysctlFailure(
  pid: number,
  viaPs: (pid: number) => Probe = (p) => psBackend().probe(p),
): Probe {
  const exists = existsUnread(pid);
  const ps = viaPs(pid);
  if (ps.kind === "gone") return ps;
  // ps's token is of another scheme: keep only that the process is there.
  if (ps.kind === "exists") return exists;
  if (Deno.permissions.querySync({ name: "run" }).state !== "granted") {
    return { kind: "unsupported" };
  }
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { kind: "gone" };
    if (!(err instanceof Deno.errors.PermissionDenied)) return { kind: "unsupported" };
  }
  return exists;
}

/** Null when FFI is not granted (asking would prompt inside a hook) or libc.so.7 is missing. */
export function freebsdBackend(): ProcessBackend | null {
  let lib;
  try {
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    // Kept open for the life of the process: the CLI is short-lived.
    lib = Deno.dlopen(LIBC, { sysctl: SYSCTL_SYMBOL });
  } catch {
    return null;
  }
  const read = sysctlReader(lib.symbols.sysctl);

  const probe = (pid: number): Probe => probeKinfo(read, pid, FREEBSD, confirmSysctlFailure);

  function command(pid: number): ProcessCommand {
    if (!isBsdPid(pid)) return { exe: null, argv: null };
    const path = read([CTL_KERN, KERN_PROC, KERN_PROC_PATHNAME, pid], PATH_MAX);
    const exe = path === null ? null : cString(path) || null;
    // As psutil does: size the buffer by KERN_ARGMAX so any argument list fits.
    const size = readArgmax(read);
    const args = size === null ? null : read([CTL_KERN, KERN_PROC, KERN_PROC_ARGS, pid], size);
    // Zombies and kernel processes answer with nothing.
    const argv = args !== null && args.length > 0 ? parseProcArgs(args) : null;
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
