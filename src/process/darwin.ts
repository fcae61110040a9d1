/**
 * macOS process identity through libSystem's sysctl. The start token is `p_starttime` from
 * `struct kinfo_proc` (wall-clock time taken once at fork and never recomputed, so exact
 * comparison is safe). macOS has no boot id: a reboot shows up as a different start token.
 * The struct offsets come from golang.org/x/sys `ztypes_darwin_{amd64,arm64}.go`; the tests
 * check them against tables derived from that source (tests/fixtures/offsets), never on a real
 * Mac: every decoding step lives in the pure functions below so the tests pin them.
 */
import {
  CTL_KERN,
  decodeUtf8,
  indexOfNul,
  isBsdPid,
  type KinfoLayout,
  kinfoScheme,
  probeKinfo,
  readArgmax,
  SYSCTL_SYMBOL,
  sysctlReader,
} from "./bsd.ts";
import { exactTokens, type Probe, type ProcessBackend, type ProcessCommand } from "./types.ts";

/** sizeof(struct kinfo_proc), identical on x86_64 and arm64. */
const DARWIN_KINFO_PROC_SIZE = 648;
/** p_stat value of a process that has exited but was not reaped (xnu bsd/sys/proc.h). */
const DARWIN_SZOMB = 5;

const KERN_PROCARGS2 = 49;
/** PROC_PIDPATHINFO_MAXSIZE (4 * MAXPATHLEN). */
const PIDPATH_MAX = 4096;
const LIBSYSTEM = "/usr/lib/libSystem.B.dylib";

const DARWIN_KINFO: KinfoLayout = {
  size: DARWIN_KINFO_PROC_SIZE,
  structSize: null,
  startSec: 0,
  startUsec: 8,
  usecBytes: 4,
  stat: 36,
  pid: 40,
  comm: 243,
  commSize: 17,
  ppid: 560,
};

const DARWIN = kinfoScheme("darwin", DARWIN_KINFO, DARWIN_SZOMB);
/** Decodes one `struct kinfo_proc`; null unless it is exactly 648 bytes. */
export const decodeDarwinKinfoProc = DARWIN.decode;
/** `darwin:<sec>.<usec padded to 6>`. */
export const darwinToken = DARWIN.token;
export const darwinProcessInfo = DARWIN.info;

interface ProcArgs2 {
  argc: number;
  /** The path the kernel exec'd, as it was passed to execve. */
  exe: string;
  argv: string[];
}

/**
 * Parses KERN_PROCARGS2: int32 argc, the exec path, NUL padding, then argc NUL-terminated
 * strings (the environment follows and is ignored). The padding skip cannot tell an empty
 * argv[0] from padding, as in psutil. Null when fewer than argc strings are present.
 */
export function parseProcArgs2(bytes: Uint8Array): ProcArgs2 | null {
  if (bytes.length < 4) return null;
  const argc = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(0, true);
  if (argc < 0) return null;
  let pos = 4;
  const exeEnd = indexOfNul(bytes, pos);
  const exe = decodeUtf8(bytes.subarray(pos, exeEnd));
  pos = exeEnd;
  while (pos < bytes.length && bytes[pos] === 0) pos++;
  const argv: string[] = [];
  while (argv.length < argc) {
    if (pos >= bytes.length) return null;
    const end = indexOfNul(bytes, pos);
    argv.push(decodeUtf8(bytes.subarray(pos, end)));
    pos = end + 1;
  }
  return { argc, exe, argv };
}

/**
 * A uuid_t (16 bytes) as the usual upper-case text, as `ioreg` and System Information show
 * IOPlatformUUID; null for a wrong length or an all-zero id (no answer).
 */
export function formatHostUuid(bytes: Uint8Array): string | null {
  if (bytes.length !== 16 || bytes.every((b) => b === 0)) return null;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("").toUpperCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/** Null when FFI is not granted (asking would prompt inside a hook) or libSystem is missing. */
export function darwinBackend(): ProcessBackend | null {
  let lib;
  try {
    if (Deno.permissions.querySync({ name: "ffi", path: LIBSYSTEM }).state !== "granted") {
      return null;
    }
    // Kept open for the life of the process: the CLI is short-lived.
    lib = Deno.dlopen(LIBSYSTEM, {
      sysctl: SYSCTL_SYMBOL,
      proc_pidpath: { parameters: ["i32", "buffer", "u32"], result: "i32" },
      // int gethostuuid(uuid_t id, const struct timespec *wait): the hardware UUID.
      gethostuuid: { parameters: ["buffer", "buffer"], result: "i32" },
    });
  } catch {
    return null;
  }
  const { proc_pidpath, gethostuuid } = lib.symbols;
  const read = sysctlReader(lib.symbols.sysctl);

  // A failed call says nothing certain; xnu answers a missing pid with success and zero bytes
  // (zombies are still listed).
  const probe = (pid: number): Probe =>
    probeKinfo(read, pid, DARWIN, () => ({ kind: "unsupported" }));

  function command(pid: number): ProcessCommand {
    let exe: string | null = null;
    let argv: string[] | null = null;
    if (!isBsdPid(pid)) return { exe, argv };
    const pathBuf = new Uint8Array(PIDPATH_MAX);
    const n = proc_pidpath(pid, pathBuf, PIDPATH_MAX);
    if (n > 0) exe = decodeUtf8(pathBuf.subarray(0, n));
    const size = readArgmax(read);
    // Other users' processes refuse KERN_PROCARGS2: argv stays null for them.
    const raw = size === null ? null : read([CTL_KERN, KERN_PROCARGS2, pid], size);
    const args = raw === null ? null : parseProcArgs2(raw);
    if (args !== null) {
      argv = args.argv;
      exe ??= args.exe || null;
    }
    return { exe, argv };
  }

  let hostUuid: string | null | undefined;
  /** The hardware UUID (IOPlatformUUID): fixed for the machine, unlike its hostname. */
  function machineId(): string | null {
    if (hostUuid !== undefined) return hostUuid;
    const id = new Uint8Array(16);
    // struct timespec {time_t tv_sec; long tv_nsec}: wait at most 1 s for the answer.
    const wait = new Uint8Array(16);
    new DataView(wait.buffer).setBigInt64(0, 1n, true);
    hostUuid = gethostuuid(id, wait) === 0 ? formatHostUuid(id) : null;
    return hostUuid;
  }

  return {
    name: "darwin",
    probe,
    bootId: () => null,
    machineId,
    command,
    compareTokens: exactTokens,
  } satisfies ProcessBackend;
}
