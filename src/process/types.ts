/**
 * The one interface every per-OS process backend satisfies. Decoders stay pure (bytes or
 * text in, values out) in each OS module; the I/O behind this interface stays thin.
 */
import type { Libc } from "./libc.ts";

/** What roster can learn about one running (or zombie) process. */
export interface ProcessInfo {
  pid: number;
  /** Parent pid, or null where the OS did not say. */
  ppid: number | null;
  /** Opaque start token, stable for the life of the process; null where it could not be read. */
  startToken: string | null;
  /** Start time in epoch milliseconds (for display), or null. */
  startedAtMs: number | null;
  /** The process has exited but was not reaped yet. */
  zombie: boolean;
  /** Short process name (Linux comm, macOS p_comm, Windows image name), or null. */
  name: string | null;
  /** The pid names a thread of another process (Linux), not a process; absent elsewhere. */
  readonly isThread?: boolean;
}

/** The answer to "is this pid running?". */
export type Probe =
  | { kind: "exists"; info: ProcessInfo }
  | { kind: "gone" }
  /** This OS (or this permission set) cannot tell. */
  | { kind: "unsupported" };

/** A process that is there but could not be read: nothing is known of it but its pid. */
export function existsUnread(pid: number): Probe {
  return {
    kind: "exists",
    info: { pid, ppid: null, startToken: null, startedAtMs: null, zombie: false, name: null },
  };
}

/** Executable path and arguments, for matching a process against the harness table. */
export interface ProcessCommand {
  exe: string | null;
  argv: string[] | null;
}

/** How two start tokens compare: some OSes move start times when the clock is stepped. */
export type TokenMatch = "same" | "different" | "uncertain";

export interface ProcessBackend {
  /** `linux`, `darwin`, `freebsd`, `windows` or `ps`, `none`. */
  readonly name: string;
  probe(pid: number): Probe;
  /** Identifies the current boot (Linux boot_id), or null where the OS has none. */
  bootId(): string | null;
  /** When this boot started, epoch ms (Linux /proc/stat btime); absent or null where unknown. */
  bootTimeMs?(): number | null;
  /** Identifies the machine (Linux /etc/machine-id); absent or null where unknown. */
  machineId?(): string | null;
  /** Identifies the pid namespace (Linux `pid:[N]`); absent or null where there is none. */
  pidNamespace?(): string | null;
  /**
   * True where the process table in view is another pid namespace's than this process's (Linux:
   * a /proc mounted for an ancestor or a child namespace, as `nsenter -p` or `unshare -p`
   * without a /proc of their own leave): every probe then says `unsupported`. Absent elsewhere.
   */
  procForeign?(): boolean;
  command(pid: number): ProcessCommand;
  /**
   * True only where the process that held `pid` under start token `token` is known to have
   * exited without a probe of its own: it started before a listing of the process table that
   * does not show `pid` (Linux, once a call has probed enough gone pids that one listing costs
   * less than their failed opens). False means "probe it", never "alive". Absent elsewhere.
   */
  exitedBefore?(pid: number, token: string): boolean;
  compareTokens(recorded: string, current: string): TokenMatch;
}

/**
 * Exact comparison, for OSes whose start time never moves (Linux, macOS, Windows). Tokens of
 * different schemes (`darwin:` from FFI against `ps:` from the fallback, say) cannot be
 * compared: that is "uncertain", never "different".
 */
export function exactTokens(recorded: string, current: string): TokenMatch {
  if (tokenScheme(recorded) !== tokenScheme(current)) return "uncertain";
  return recorded === current ? "same" : "different";
}

/** `darwin`, `windows`, `freebsd`, `ps`; "" for Linux's bare clock-tick count. */
export function tokenScheme(token: string): string {
  const colon = token.indexOf(":");
  return colon === -1 ? "" : token.slice(0, colon);
}

/**
 * For a pid a person or a hook names: a thread id answers like a pid but is no process, so
 * it reads as gone (only Linux says so; the check reads /proc/<pid>/status once).
 */
export function asProcess(p: Probe): Probe {
  return p.kind === "exists" && p.info.isThread ? { kind: "gone" } : p;
}

/** No running process holds the pid: it is gone, or only a zombie is left. */
export function isGone(p: Probe): boolean {
  return p.kind === "gone" || (p.kind === "exists" && p.info.zombie);
}

/**
 * The errno table: the values that the backends and libc's callers tell apart, Linux's (ESRCH
 * is 3 on macOS and FreeBSD too: kqueue.ts reads it from a kevent).
 */
export const EPERM = 1;
export const ENOENT = 2;
/** No such process: it exited (between a /proc open and its read, or before a watch). */
export const ESRCH = 3;
export const EINTR = 4;
export const EACCES = 13;
export const ENOTDIR = 20;
export const ELOOP = 40;
/** A failure whose errno could not be read back (libc.ts never reports 0). */
export const UNKNOWN_ERRNO = 100_000;

let libcLoaded: Libc | null = null;

/**
 * libc (./libc.ts) if something in this process already loaded it, without loading it: dlopen
 * costs a millisecond or two that a hook's single probe would not win back, while `list` and
 * `prune` load it anyway and then probe thousands of pids. Kept here, not in libc.ts, so the
 * Linux backend asks without loading libc's module on a hook's start-up (docs/performance.md).
 */
export function loadedLibc(): Libc | null {
  return libcLoaded;
}

/** Called by ./libc.ts once it has loaded libc. */
export function noteLibc(loaded: Libc): void {
  libcLoaded = loaded;
}
