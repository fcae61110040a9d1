/**
 * Linux process identity from /proc. The start token is `starttime` from
 * /proc/<pid>/stat (clock ticks since boot: it does not move when the wall clock is
 * stepped); the boot is told apart by /proc/sys/kernel/random/boot_id. The /proc root is
 * injectable so tests can point it at fixtures.
 *
 * Over 400 lines: the pure /proc decoders (each tested alone, on fixtures) beside the one
 * backend that reads /proc with them; the backend is one closure over its per-call caches.
 */
import {
  EACCES,
  ENOENT,
  EPERM,
  ESRCH,
  exactTokens,
  loadedLibc,
  type Probe,
  type ProcessBackend,
  type ProcessCommand,
  type ProcessInfo,
} from "./types.ts";
import { isPid } from "./pid.ts";
import { readRegularText } from "../open_file.ts";

/** The most of /proc/self/mountinfo read: a host of many containers has thousands of mounts. */
const MAX_MOUNTINFO = 16 << 20;

/** Clock ticks per second as seen by user space (USER_HZ): 100 on every mainstream arch. */
const CLK_TCK = 100;

interface StatFields {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  /** Clock ticks since boot, kept as the decimal text the kernel wrote. */
  starttime: string;
}

/**
 * Parses /proc/<pid>/stat as text: parseStatBytes of its UTF-8 bytes (the one parser; tests and
 * the bench hold text). Returns null for anything that does not have the expected shape.
 */
export function parseStat(text: string): StatFields | null {
  const bytes = new TextEncoder().encode(text);
  return parseStatBytes(bytes, bytes.length);
}

const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Whether text[from, to) is ASCII digits only. */
function isDigits(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Parses the `btime` line of /proc/stat: boot time in epoch seconds. */
export function parseBtime(text: string): number | null {
  const m = /(?:^|\n)btime (\d+)(?:\n|$)/.exec(text);
  return m ? Number(m[1]) : null;
}

/** Splits /proc/<pid>/cmdline (NUL-separated, usually NUL-terminated). */
export function parseCmdline(bytes: Uint8Array): string[] {
  const text = new TextDecoder().decode(bytes);
  const parts = text.split("\0");
  if (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * Whether the proc mount at `mountPoint` has a hidepid= option that hides other users'
 * processes (2, invisible, 4, ptraceable), from /proc/self/mountinfo. Unknown: true.
 */
export function procMayHide(mountinfo: string, mountPoint = "/proc"): boolean {
  // The last mount on a point is the one in effect (a sandbox may mount a fresh proc over it).
  let verdict = true;
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    if (fields[4] !== mountPoint) continue;
    const dash = fields.indexOf("-");
    if (dash < 0 || fields[dash + 1] !== "proc") {
      verdict = true;
      continue;
    }
    const m = /(?:^|,)hidepid=([^,]*)/.exec(`${fields[dash + 3] ?? ""},${fields[5] ?? ""}`);
    verdict = m !== null && !["0", "off", "1", "noaccess"].includes(m[1]);
  }
  return verdict;
}

/**
 * Pure: whether a /proc shows the reader's own pid namespace, from what it says of the reader
 * (`pid`, getpid(2)): `self`, the link /proc/self (the reader's pid in the namespace the proc
 * was mounted for; null where the reader is not in that namespace at all, which a proc mounted
 * for a child namespace shows), and /proc/self/status (null: unreadable). Its NSpid line lists
 * the reader's pid in each namespace from the mount's down to the reader's own, so one entry
 * proves the mount is the reader's: more is an ancestor's (`nsenter -p` or `unshare -p` without
 * a /proc of its own). A kernel before 4.1 writes no NSpid: then `self` is all there is.
 * Anything else proves nothing, and a /proc that is not proven the reader's is not trusted.
 */
export function procShowsOwnNs(self: string | null, status: string | null, pid: number): boolean {
  if (self !== String(pid) || status === null) return false;
  const m = /^NSpid:[ \t]*([^\n]*)$/m.exec(status);
  if (m === null) return /^Pid:[ \t]*(\d+)[ \t]*$/m.exec(status)?.[1] === self;
  const ids = m[1].trim().split(/[ \t]+/);
  return ids.length === 1 && ids[0] === self;
}

/** Tgid and Threads from /proc/<pid>/status; null fields where absent. */
export function parseStatus(text: string): { tgid: number | null; threads: number | null } {
  const tgid = /^Tgid:\s*(\d+)$/m.exec(text);
  const threads = /^Threads:\s*(\d+)$/m.exec(text);
  return { tgid: tgid ? Number(tgid[1]) : null, threads: threads ? Number(threads[1]) : null };
}

/**
 * The reader's boottime offset in clock ticks, from /proc/self/timens_offsets (`boottime <s>
 * <ns>`): 0 outside a time namespace, or when the file is missing (kernels before 5.6).
 */
export function parseBoottimeOffset(text: string): bigint {
  const m = /^boottime\s+(-?\d+)\s+(\d+)\s*$/m.exec(text);
  if (!m) return 0n;
  return BigInt(m[1]) * BigInt(CLK_TCK) + BigInt(m[2]) * BigInt(CLK_TCK) / 1_000_000_000n;
}

/**
 * A start token comparable across time namespaces: the kernel shows starttime shifted by the
 * READER's boottime offset, so the offset comes off again (the same process, the same token,
 * whichever namespace reads it).
 */
export function normaliseStartTime(starttime: string, offsetTicks: bigint): string | null {
  if (offsetTicks === 0n) return starttime;
  // The kernel adds the reader's offset in u64: a process that started before a negative
  // offset's zero shows (start + offset) wrapped past 2^64 ns, about 1.8e12 ticks. Nothing
  // takes the wrap off exactly (2^64 ns is no whole number of ticks), so there is no token.
  if (offsetTicks < 0n && starttime.length >= 12 && BigInt(starttime) > WRAPPED_TICKS) return null;
  return String(BigInt(starttime) - offsetTicks);
}

/** 2^63 ns in clock ticks: no start time of a real boot (292 years) comes near it. */
const WRAPPED_TICKS = 922_337_203_685n;

/** Gone pids a call probes before it lists the process table instead (linuxBackend). */
export const LISTING_AFTER = 256;
/** Clock ticks (one second) a start time must precede the listing's uptime reading by. */
const LISTING_MARGIN = CLK_TCK;
/** A process table larger than this is not listed: its pids would cost more than their opens. */
const LISTING_LIMIT = 1 << 18;

/**
 * /proc/uptime's first field ("350.12 ...": seconds since boot, two decimals) in clock ticks,
 * rounded down as the kernel rounds a start time; null for any other shape.
 */
export function parseUptimeTicks(text: string): number | null {
  const dot = text.indexOf(".");
  if (dot < 1 || dot > 12 || !isDigits(text, 0, dot) || !isDigits(text, dot + 1, dot + 3)) {
    return null;
  }
  const after = text.charCodeAt(dot + 3);
  if (after !== 32 && after !== 10) return null;
  return Number(text.slice(0, dot)) * CLK_TCK + Number(text.slice(dot + 1, dot + 3));
}

/** /proc/loadavg's task count ("0.20 0.18 0.12 1/80 11206": 80); null for any other shape. */
export function parseLoadavgTasks(text: string): number | null {
  const fields = text.split(" ");
  const slash = fields.length < 5 ? -1 : fields[3].indexOf("/");
  if (slash < 1) return null;
  const total = fields[3].slice(slash + 1);
  return total.length > 0 && total.length <= 15 && isDigits(total, 0, total.length)
    ? Number(total)
    : null;
}

/** A Linux start token (normalised clock ticks: 1 to 15 digits) as a number; null otherwise. */
export function tokenTicks(token: string): number | null {
  if (token.length === 0 || token.length > 15 || !isDigits(token, 0, token.length)) return null;
  return Number(token);
}

/** Zombie (Z) or dead (X, and x on 2.6.33 to 3.13). */
export function isDeadState(state: string): boolean {
  return state === "Z" || state === "X" || state === "x";
}

/** What readStat answers for a failure that is no errno it knows (Deno's call failed otherwise). */
const UNREADABLE = -1_000_000;
/** For a field that is not ASCII: keeps a leading BOM, as a decode of the whole line does. */
const commDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
const procBuf = new Uint8Array(4096);

const SPACE = 32;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const isDigitByte = (b: number) => b >= 48 && b <= 57;
/** `/stat` and the NUL that ends a C string. */
const STAT_SUFFIX = new Uint8Array([47, 115, 116, 97, 116, 0]);

/** Whether buf[from, to) is 1 to 15 ASCII digits: a number that Number() reads exactly. */
function shortDigits(buf: Uint8Array, from: number, to: number): boolean {
  if (to <= from || to - from > 15) return false;
  for (let i = from; i < to; i++) if (!isDigitByte(buf[i])) return false;
  return true;
}

function digitsValue(buf: Uint8Array, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) v = v * 10 + buf[i] - 48;
  return v;
}

/**
 * Parses the first `n` bytes of `buf`, a /proc/<pid>/stat line as read: the pid, the command
 * name (which may hold spaces and ")", so it ends at the LAST ")"), the state, the ppid and
 * the start time (field 22); null for anything that does not have that shape. The answer is
 * that of the line decoded as UTF-8 and read as text (tests/process/linux_test.ts holds it to a
 * text reference on mangled lines), without decoding the line: `list` reads one line per live
 * pid, and the decode of the whole line cost an op call and some 300 bytes of string, which the
 * command name, a slice of it, kept alive in the judge's cache. Only the command name and the
 * start time become strings, and a pid or ppid only when it is not plain digits.
 */
export function parseStatBytes(buf: Uint8Array, n: number): StatFields | null {
  // A decode drops a leading byte order mark: the line starts after it.
  const start = n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  // The pid: up to the first " (", and not empty.
  let open = start;
  while (open + 1 < n && !(buf[open] === SPACE && buf[open + 1] === OPEN_PAREN)) open++;
  if (open === start || open + 1 >= n) return null;
  // The last ")". Bytes past n are an earlier read's: not this line.
  const close = buf.lastIndexOf(CLOSE_PAREN, n - 1);
  if (close < open) return null;
  const pid = numberAt(buf, start, open);
  // One character after ")" is stepped over: a byte where it is ASCII, else the bytes that
  // decode to it; bytes that decode to more than one UTF-16 unit leave no state to read.
  let at = close + 2;
  if (close + 1 < n && buf[close + 1] > 0x7f) {
    at = close + 1;
    while (at < n && buf[at] > 0x7f) at++;
    if (commDecoder.decode(buf.subarray(close + 1, at)).length !== 1) return null;
  }
  let e0 = 0, e1 = 0, e18 = 0, e19 = 0;
  let count = 0;
  for (let from = at; count < 20;) {
    let space = from >= n ? -1 : buf.indexOf(SPACE, from);
    if (space >= n) space = -1;
    const last = space === -1;
    if (last) space = n;
    if (count === 0) e0 = space;
    else if (count === 1) e1 = space;
    else if (count === 18) e18 = space;
    else if (count === 19) e19 = space;
    count++;
    if (last) break;
    from = space + 1;
  }
  if (count < 20 || !Number.isSafeInteger(pid)) return null;
  if (e0 - at !== 1 || !isAsciiLetter(buf[at])) return null;
  const ppid = numberAt(buf, e0 + 1, e1);
  if (!Number.isSafeInteger(ppid)) return null;
  if (e19 === e18 + 1) return null;
  for (let i = e18 + 1; i < e19; i++) if (!isDigitByte(buf[i])) return null;
  return {
    pid,
    comm: latin1OrUtf8(buf, open + 2, close),
    state: String.fromCharCode(buf[at]),
    ppid,
    starttime: e19 - e18 - 1 <= 15 && (buf[e18 + 1] !== 48 || e19 === e18 + 2)
      ? String(digitsValue(buf, e18 + 1, e19))
      : latin1OrUtf8(buf, e18 + 1, e19),
  };
}

/** buf[from, to) as Number() reads its text: straight from the bytes when it is plain digits. */
function numberAt(buf: Uint8Array, from: number, to: number): number {
  return shortDigits(buf, from, to)
    ? digitsValue(buf, from, to)
    : Number(latin1OrUtf8(buf, from, to));
}

/** buf[from, to) as text: ASCII straight from the bytes, else decoded as UTF-8. */
function latin1OrUtf8(buf: Uint8Array, from: number, to: number): string {
  const bytes = buf.subarray(from, to);
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return commDecoder.decode(bytes);
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

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
  const statPrefix = new TextEncoder().encode(`${procRoot}/`);
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
      return {
        kind: "exists",
        info: { pid, ppid: null, startToken: null, startedAtMs: null, zombie: false, name: null },
      };
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
    for (const path of ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
      const id = readRegularText(path)?.trim();
      if (id !== undefined && /^[0-9a-f]{32}$/.test(id)) return id;
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
