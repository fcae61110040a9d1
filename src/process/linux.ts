/**
 * Linux process identity from /proc. The start token is `starttime` from
 * /proc/<pid>/stat (clock ticks since boot: it does not move when the wall clock is
 * stepped); the boot is told apart by /proc/sys/kernel/random/boot_id. The /proc root is
 * injectable so tests can point it at fixtures. The files are read here, once per call where
 * they do not change (the backend's caches), and parsed by ./linux_proc.ts.
 */
import {
  EACCES,
  ENOENT,
  EPERM,
  ESRCH,
  exactTokens,
  existsUnread,
  loadedLibc,
  type Probe,
  type ProcessBackend,
  type ProcessCommand,
  type ProcessInfo,
} from "./types.ts";
import { isPid } from "./pid.ts";
import {
  CLK_TCK,
  isDeadState,
  normaliseStartTime,
  parseBoottimeOffset,
  parseBtime,
  parseCmdline,
  parseLoadavgTasks,
  parseStatBytes,
  parseStatus,
  parseUptimeTicks,
  procMayHide,
  procShowsOwnNs,
  type StatFields,
  tokenTicks,
} from "./linux_proc.ts";
import { readRegularText } from "../open_file.ts";
import { every, isLowerHex } from "../chars.ts";
import { encodeUtf8 } from "../utf8.ts";

/** The most of /proc/self/mountinfo read: a host of many containers has thousands of mounts. */
const MAX_MOUNTINFO = 16 << 20;

/** Gone pids a call probes before it lists the process table instead (linuxBackend). */
export const LISTING_AFTER = 256;
/** Clock ticks (one second) a start time must precede the listing's uptime reading by. */
const LISTING_MARGIN = CLK_TCK;
/** A process table larger than this is not listed: its pids would cost more than their opens. */
const LISTING_LIMIT = 1 << 18;

/** What readStat answers for a failure that is no errno it knows (Deno's call failed otherwise). */
const UNREADABLE = -1_000_000;
/** Where readStat reads a /proc/<pid>/stat line through libc (one buffer: one line at a time). */
const procBuf = new Uint8Array(4096);
/** `/stat` and the NUL that ends a C string. */
const STAT_SUFFIX = new Uint8Array([47, 115, 116, 97, 116, 0]);

/** One answer for every gone pid: `list` probes thousands, and none needs its own object. */
const GONE: Probe = Object.freeze({ kind: "gone" });
const UNSUPPORTED: Probe = Object.freeze({ kind: "unsupported" });

/** procShowsOwnNs of the /proc at `procRoot`, as this process sees it. */
function readOwnProc(procRoot: string): boolean {
  let self: string | null = null;
  let status: string | null = null;
  try {
    self = Deno.readLinkSync(`${procRoot}/self`);
    status = readRegularText(`${procRoot}/self/status`);
  } catch { /* not shown: not proven */ }
  return procShowsOwnNs(self, status, Deno.pid);
}

interface LazyReads {
  btime(): number | null;
  status(pid: number): ReturnType<typeof parseStatus> | null;
}

/**
 * A process as /proc/<pid>/stat shows it. A class, not an object literal with getters: a
 * literal builds its getters afresh for each of the thousands of pids `list` probes.
 */
class LinuxProcess implements ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly name: string;
  readonly #starttime: string;
  readonly #lazy: LazyReads;

  constructor(
    stat: StatFields,
    readonly startToken: string | null,
    readonly zombie: boolean,
    lazy: LazyReads,
  ) {
    this.pid = stat.pid;
    this.ppid = stat.ppid;
    this.name = stat.comm;
    this.#starttime = stat.starttime;
    this.#lazy = lazy;
  }

  /** Lazy: only register shows a start time, so list never reads /proc/stat. */
  get startedAtMs(): number | null {
    const boot = this.#lazy.btime();
    return boot === null ? null : boot * 1000 + Number(this.#starttime) * 1000 / CLK_TCK;
  }

  /** A thread id answers like a pid in /proc but is not a process (read only if asked). */
  get isThread(): boolean {
    const tgid = this.#lazy.status(this.pid)?.tgid;
    return tgid != null && tgid !== this.pid;
  }
}

/**
 * The Linux backend over `procRoot`. `ownProc` says whether that /proc shows this process's own
 * pid namespace (procShowsOwnNs; asked once, at the first probe); where it does not, its pids
 * are another namespace's: no probe answers, no command is read, nothing is listed.
 */
export function linuxBackend(procRoot = "/proc", ownProc?: () => boolean) {
  let bootIdCache: string | null | undefined;
  // Read once a call: the host key and the host identity both ask (a hook's second read cost
  // about 50 us).
  let machineIdCache: string | null | undefined;
  let foreignCache: boolean | undefined;

  /** Whether this /proc is not shown to be this process's namespace's (read once per call). */
  function procForeign(): boolean {
    if (foreignCache === undefined) {
      foreignCache = !(ownProc ?? (() => readOwnProc(procRoot)))();
    }
    return foreignCache;
  }
  let btimeCache: number | null | undefined;

  function btime(): number | null {
    if (btimeCache === undefined) {
      const text = readRegularText(`${procRoot}/stat`);
      btimeCache = text === null ? null : parseBtime(text);
    }
    return btimeCache;
  }

  let hiddenCache: boolean | undefined;
  let offsetCache: bigint | undefined;

  /** This reader's boottime offset (a time namespace), read once per call. */
  function boottimeOffset(): bigint {
    if (offsetCache === undefined) {
      const text = readRegularText(`${procRoot}/self/timens_offsets`);
      offsetCache = text === null ? 0n : parseBoottimeOffset(text);
    }
    return offsetCache;
  }

  /** Whether this /proc may hide processes (read once per call; unknown counts as yes). */
  function mayHide(): boolean {
    if (hiddenCache === undefined) {
      const text = readRegularText(`${procRoot}/self/mountinfo`, MAX_MOUNTINFO);
      hiddenCache = text === null || procMayHide(text, procRoot);
    }
    return hiddenCache;
  }

  /**
   * Gone pids found by a failed open through libc this call. Past LISTING_AFTER of them, one
   * listing of the process table (`listing()`) answers for the rest: `list` and `prune` over a
   * store of thousands of exited sessions then pay one getdents64 pass over /proc instead of a
   * failed open(2) per record. The hook paths do not load libc, so they never list (`whoami`
   * only when it reads the store for a declared session id).
   */
  let gone = 0;
  /** The listing: undefined before it is taken, null where it cannot be trusted or read. */
  let snapshot: { pids: Set<number>; uptime: number } | null | undefined;

  /**
   * The pids in procRoot, with the uptime (clock ticks since boot, this reader's offset taken
   * off as start tokens are) read BEFORE the listing began. A process that started before that
   * reading and still ran while the listing passed its pid is in the listing (getdents64 over
   * /proc walks every thread group leader that exists throughout the walk), so a pid it lacks
   * whose recorded start time is earlier names a process that has exited: dead is for good,
   * whatever holds the pid later. Never where hidepid= may hide other users' processes (a pid
   * missing from the listing proves nothing there), and never past LISTING_LIMIT processes.
   */
  function listing(): { pids: Set<number>; uptime: number } | null {
    const c = loadedLibc();
    if (c === null || mayHide()) return null;
    const text = readRegularText(`${procRoot}/uptime`);
    const uptime = text === null ? null : parseUptimeTicks(text);
    if (uptime === null) return null;
    const pids = c.readPids(procRoot, LISTING_LIMIT);
    return pids === null ? null : { pids, uptime: uptime - Number(boottimeOffset()) };
  }

  /**
   * How many gone pids pay for a listing: a listed process costs about half what a failed
   * open and its judging do (getdents64 of /proc makes each entry's dentry), so the listing
   * waits until the gone pids seen would have paid for it (the tasks /proc/loadavg counts,
   * threads included, halved; at least LISTING_AFTER). A host of many processes and a store of
   * few exited sessions then never lists; a store of many exited sessions lists once.
   */
  let listAt: number | undefined;

  function exitedBefore(pid: number, token: string): boolean {
    if (snapshot === undefined) {
      if (procForeign()) return false;
      // loadavg is read only once LISTING_AFTER gone pids make a listing worth weighing.
      if (gone < (listAt ?? LISTING_AFTER) || gone < (listAt ??= listingThreshold())) return false;
      snapshot = listing();
    }
    if (snapshot === null || snapshot.pids.has(pid)) return false;
    const ticks = tokenTicks(token);
    // A second of margin beyond the strict bound: fork records a start time a moment before it
    // makes the pid visible (before Linux 5.5, before copying the memory map), so a process may
    // start just before the reading and still be missed by the walk. An exited session's record
    // is far older than a second; a younger one is probed.
    return ticks !== null && ticks + LISTING_MARGIN < snapshot.uptime;
  }

  function listingThreshold(): number {
    const text = readRegularText(`${procRoot}/loadavg`);
    const tasks = text === null ? null : parseLoadavgTasks(text);
    return tasks === null ? Infinity : Math.max(LISTING_AFTER, Math.ceil(tasks / 2));
  }

  /** `<procRoot>/`, then a pid's digits and `/stat` and a NUL: the path libc opens. */
  const statPrefix = encodeUtf8(`${procRoot}/`);
  const statPath = new Uint8Array(statPrefix.length + 32);
  statPath.set(statPrefix);

  /**
   * /proc/<pid>/stat: the count of its bytes, now in procBuf, or -errno, or Deno's text. Through
   * libc once `list` or `prune` loaded it (a dead pid then costs one failed open(2), not a
   * thrown exception, and thousands are probed; the path is written as bytes, no string made);
   * through Deno otherwise (a hook probes a handful, and loading libc would cost more than it
   * saves). Never libc that is not loaded: a -1 from no libc is no errno.
   */
  function readStat(pid: number): number | Uint8Array {
    const c = loadedLibc();
    if (c !== null) {
      let end = statPrefix.length;
      const digits = String(pid);
      for (let i = 0; i < digits.length; i++) statPath[end++] = digits.charCodeAt(i);
      for (let i = 0; i < STAT_SUFFIX.length; i++) statPath[end++] = STAT_SUFFIX[i];
      const fd = c.openPath(statPath, 0);
      if (fd === -ENOENT || fd === -ESRCH) {
        gone++;
        return fd;
      }
      if (fd === -EACCES || fd === -EPERM) return fd;
      if (fd >= 0) {
        try {
          const n = c.read(fd, procBuf);
          if (n >= 0) return n;
          if (-n === ESRCH) return -ESRCH;
        } finally {
          c.close(fd);
        }
      }
      // Any other failure: Deno's call says what it is.
    }
    try {
      return Deno.readFileSync(`${procRoot}/${pid}/stat`);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return -ENOENT;
      if (err instanceof Deno.errors.PermissionDenied) return -EACCES;
      return UNREADABLE;
    }
  }

  function probe(pid: number): Probe {
    // kill(0, 0) and kill(-1, 0) would probe process groups, not a process.
    if (!isPid(pid, Number.MAX_SAFE_INTEGER)) return GONE;
    // Another namespace's pids: whatever holds this number there says nothing of it here.
    if (procForeign()) return UNSUPPORTED;
    const read = readStat(pid);
    if (typeof read === "number" && read < 0) {
      const errno = -read;
      if (errno === ENOENT || errno === ESRCH) {
        // Proof of death, unless hidepid= may hide other users' processes: then ask
        // kill(pid, 0), which is left off the common path because it costs ~3 ms to load.
        if (!mayHide()) return GONE;
        const k = signalProbe(pid);
        if (k !== "exists") return { kind: k };
      } else if (errno !== EACCES && errno !== EPERM) {
        return { kind: "unsupported" };
      }
      // It exists (hidepid=1 makes it unreadable rather than missing) but says nothing more.
      return existsUnread(pid);
    }
    const stat = typeof read === "number"
      ? parseStatBytes(procBuf, read)
      : parseStatBytes(read, read.length);
    if (stat === null || stat.pid !== pid) return { kind: "unsupported" };
    const startToken = normaliseStartTime(stat.starttime, boottimeOffset());
    // Z on a thread-group leader whose other threads still run is a live process: only a
    // leader with no threads left is a zombie. (Read only on the rare Z path.)
    const zombie = isDeadState(stat.state) && (status(pid)?.threads ?? 1) <= 1;
    return { kind: "exists", info: new LinuxProcess(stat, startToken, zombie, lazy) };
  }

  /** What a LinuxProcess reads only when asked. */
  const lazy: LazyReads = { btime, status };

  function status(pid: number): ReturnType<typeof parseStatus> | null {
    const text = readRegularText(`${procRoot}/${pid}/status`);
    return text === null ? null : parseStatus(text);
  }

  /** kill(pid, 0): ESRCH = gone, EPERM = exists (another user's), success = exists. */
  function signalProbe(pid: number): "gone" | "exists" | "unsupported" {
    try {
      Deno.kill(pid, 0 as unknown as Deno.Signal);
      return "exists";
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return "gone";
      if (err instanceof Deno.errors.PermissionDenied) return "exists";
      return "unsupported";
    }
  }

  function command(pid: number): ProcessCommand {
    let exe: string | null = null;
    let argv: string[] | null = null;
    if (procForeign()) return { exe, argv };
    try {
      exe = Deno.readLinkSync(`${procRoot}/${pid}/exe`);
      if (exe.endsWith(" (deleted)")) exe = exe.slice(0, -" (deleted)".length);
    } catch { /* kernel threads and other users' processes have no readable exe */ }
    try {
      argv = parseCmdline(Deno.readFileSync(`${procRoot}/${pid}/cmdline`));
    } catch { /* gone or hidden */ }
    return { exe, argv };
  }

  function bootId(): string | null {
    if (bootIdCache === undefined) {
      bootIdCache = readRegularText(`${procRoot}/sys/kernel/random/boot_id`)?.trim() || null;
    }
    return bootIdCache;
  }

  function machineId(): string | null {
    if (machineIdCache !== undefined) return machineIdCache;
    machineIdCache = null;
    for (const path of ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
      const id = readRegularText(path)?.trim();
      if (id?.length === 32 && every(id, isLowerHex)) return machineIdCache = id;
    }
    return null;
  }

  function pidNamespace(): string | null {
    try {
      return Deno.readLinkSync(`${procRoot}/self/ns/pid`);
    } catch {
      return null;
    }
  }

  return {
    name: "linux",
    probe,
    bootId,
    bootTimeMs: () => {
      const boot = btime();
      return boot === null ? null : boot * 1000;
    },
    machineId,
    pidNamespace,
    procForeign,
    command,
    exitedBefore,
    compareTokens: exactTokens,
  } satisfies ProcessBackend;
}
