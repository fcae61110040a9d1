/**
 * Linux process identity from /proc. The start token is `starttime` from
 * /proc/<pid>/stat (clock ticks since boot: it does not move when the wall clock is
 * stepped); the boot is told apart by /proc/sys/kernel/random/boot_id. The /proc root is
 * injectable so tests can point it at fixtures.
 */
import { exactTokens, type Probe, type ProcessBackend, type ProcessCommand } from "./types.ts";

/** Clock ticks per second as seen by user space (USER_HZ): 100 on every mainstream arch. */
export const CLK_TCK = 100;

export interface StatFields {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  /** Clock ticks since boot, kept as the decimal text the kernel wrote. */
  starttime: string;
}

/**
 * Parses /proc/<pid>/stat. comm may hold spaces and ")", so split at the LAST ")".
 * Returns null for anything that does not have the expected shape.
 */
export function parseStat(text: string): StatFields | null {
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open));
  const rest = text.slice(close + 2).split(" ");
  if (rest.length < 20 || !Number.isSafeInteger(pid)) return null;
  const state = rest[0];
  const ppid = Number(rest[1]);
  const starttime = rest[19];
  if (!/^[A-Za-z]$/.test(state) || !Number.isSafeInteger(ppid) || !/^\d+$/.test(starttime)) {
    return null;
  }
  return { pid, comm: text.slice(open + 2, close), state, ppid, starttime };
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

/** Zombie (Z) or dead (X, and x on 2.6.33 to 3.13). */
export function isDeadState(state: string): boolean {
  return state === "Z" || state === "X" || state === "x";
}

export function linuxBackend(procRoot = "/proc") {
  let bootIdCache: string | null | undefined;
  let btimeCache: number | null | undefined;

  function btime(): number | null {
    if (btimeCache === undefined) {
      try {
        btimeCache = parseBtime(Deno.readTextFileSync(`${procRoot}/stat`));
      } catch {
        btimeCache = null;
      }
    }
    return btimeCache;
  }

  function probe(pid: number): Probe {
    // kill(0, 0) and kill(-1, 0) would probe process groups, not a process.
    if (!Number.isSafeInteger(pid) || pid <= 0) return { kind: "gone" };
    let text: string;
    try {
      text = Deno.readTextFileSync(`${procRoot}/${pid}/stat`);
    } catch (err) {
      return confirmMissing(pid, err);
    }
    const stat = parseStat(text);
    if (stat === null || stat.pid !== pid) return { kind: "unsupported" };
    return {
      kind: "exists",
      info: {
        pid,
        ppid: stat.ppid,
        startToken: stat.starttime,
        // Lazy: only register shows a start time, so list never reads /proc/stat.
        get startedAtMs() {
          const boot = btime();
          return boot === null ? null : boot * 1000 + Number(stat.starttime) * 1000 / CLK_TCK;
        },
        zombie: isDeadState(stat.state),
        name: stat.comm,
      },
    };
  }

  /** /proc/<pid> missing is not proof of death under hidepid=: ask kill(pid, 0). */
  function confirmMissing(pid: number, err: unknown): Probe {
    if (!(err instanceof Deno.errors.NotFound) && !(err instanceof Deno.errors.PermissionDenied)) {
      return { kind: "unsupported" };
    }
    try {
      Deno.kill(pid, 0 as unknown as Deno.Signal);
    } catch (killErr) {
      if (killErr instanceof Deno.errors.NotFound) return { kind: "gone" };
      if (!(killErr instanceof Deno.errors.PermissionDenied)) return { kind: "unsupported" };
    }
    return {
      kind: "exists",
      info: { pid, ppid: null, startToken: null, startedAtMs: null, zombie: false, name: null },
    };
  }

  function command(pid: number): ProcessCommand {
    let exe: string | null = null;
    let argv: string[] | null = null;
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
      try {
        bootIdCache = Deno.readTextFileSync(`${procRoot}/sys/kernel/random/boot_id`).trim() || null;
      } catch {
        bootIdCache = null;
      }
    }
    return bootIdCache;
  }

  return {
    name: "linux",
    probe,
    bootId,
    command,
    compareTokens: exactTokens,
  } satisfies ProcessBackend;
}
