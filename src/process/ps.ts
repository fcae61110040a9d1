/**
 * The fallback for Unix-likes without a native backend, or where FFI is refused: one `ps`
 * run per question. The start token is `lstart` in whole seconds. ps runs with LC_ALL=C so
 * lstart is in English, and with TZ=UTC0 so the token does not depend on the caller's time
 * zone (a hook and a shell with different TZ would otherwise record different tokens).
 * lstart is derived from a boot time that moves with clock steps and NTP slewing on Linux
 * and FreeBSD, so tokens match within 2 seconds and a larger gap is "uncertain", never
 * "different". Before trusting "no such process" the backend checks once that this ps
 * understands the options by listing its own process: a ps that rejects them would
 * otherwise make every pid look gone.
 * Each keyword gets its own `-o` with an empty header: BSD and macOS ps read `-o pid=,ppid=`
 * as one column whose header is everything after the first `=`, procps as two. `state` is the
 * keyword every ps knows (procps: one letter; BSD/macOS: an alias of `stat`).
 * ps runs with a cleared environment: with `--allow-run=ps`, Deno refuses to spawn a child
 * that would inherit any `LD_*` or `DYLD_*` variable, and ps needs none of the caller's.
 */
import type { Probe, ProcessBackend, ProcessCommand, ProcessInfo, TokenMatch } from "./types.ts";
import { isPid, MAX_PID_T } from "./pid.ts";

/** The columns asked for, in order; `comm` last because it may contain spaces. */
export const PS_KEYWORDS = ["pid", "ppid", "state", "lstart", "comm"] as const;

/** ps's arguments for one pid: one `-o keyword=` per column, so every ps prints no header. */
export function psArgs(pid: number): string[] {
  return [...PS_KEYWORDS.flatMap((k) => ["-o", `${k}=`]), "-p", String(pid)];
}

/** The environment ps runs with: C locale for English lstart, UTC so tokens ignore TZ. */
export const PS_ENV: Readonly<Record<string, string>> = { LC_ALL: "C", TZ: "UTC0" };
/** How far two lstart readings may differ and still count as the same process. */
const PS_TOKEN_TOLERANCE_SEC = 2;

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const LINE =
  /^\s*(\d+)\s+(\d+)\s+(\S+)\s+[A-Z][a-z]{2}\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})(?:\s+(.*))?$/;

interface PsLine {
  pid: number;
  ppid: number;
  stat: string;
  /** lstart as epoch seconds, read as UTC (ps runs with TZ=UTC0). */
  startSec: number;
  /** May contain spaces: it is the last column. */
  comm: string;
}

/** Parses one line of `ps` run with `psArgs`; null for any other shape. */
export function parsePsLine(line: string): PsLine | null {
  const m = LINE.exec(line.replace(/\r?\n$/, ""));
  if (m === null) return null;
  const month = MONTHS.indexOf(m[4]);
  const [day, hour, minute, second, year] = [m[5], m[6], m[7], m[8], m[9]].map(Number);
  if (month === -1) return null;
  const ms = Date.UTC(year, month, day, hour, minute, second);
  const d = new Date(ms);
  // Date.UTC rolls over out-of-range fields (Feb 31, 25:00) instead of failing.
  if (
    d.getUTCDate() !== day || d.getUTCHours() !== hour || d.getUTCMinutes() !== minute ||
    d.getUTCSeconds() !== second
  ) {
    return null;
  }
  return {
    pid: Number(m[1]),
    ppid: Number(m[2]),
    stat: m[3],
    startSec: ms / 1000,
    comm: m[10] ?? "",
  };
}

/** `ps:<epoch seconds>`. */
export function psToken(startSec: number): string {
  return `ps:${startSec}`;
}

/** Within the tolerance: "same"; otherwise "uncertain", because lstart moves with the clock. */
export function comparePsTokens(recorded: string, current: string): TokenMatch {
  const a = /^ps:(-?\d+)$/.exec(recorded);
  const b = /^ps:(-?\d+)$/.exec(current);
  if (a === null || b === null) return "uncertain";
  return Math.abs(Number(a[1]) - Number(b[1])) <= PS_TOKEN_TOLERANCE_SEC ? "same" : "uncertain";
}

export function psProcessInfo(p: PsLine): ProcessInfo {
  return {
    pid: p.pid,
    ppid: p.ppid,
    startToken: psToken(p.startSec),
    startedAtMs: p.startSec * 1000,
    zombie: p.stat.startsWith("Z"),
    // macOS prints the path a process was started with: the name is its last part.
    name: (p.comm.startsWith("/") ? p.comm.slice(p.comm.lastIndexOf("/") + 1) : p.comm) || null,
  };
}

/** Splits `ps -o args=` output. Lossy: an argument that contains spaces comes back split. */
export function parsePsArgs(text: string): string[] | null {
  const line = text.split("\n").find((l) => l.trim() !== "");
  return line === undefined ? null : line.trim().split(/\s+/);
}

interface PsRun {
  code: number;
  stdout: string;
}

export function psBackend(): ProcessBackend {
  let usable: boolean | undefined;

  /** Null when ps could not be spawned at all (missing, or --allow-run not granted). */
  function runPs(args: string[]): PsRun | null {
    try {
      // Asking for the permission would prompt inside a hook.
      if (Deno.permissions.querySync({ name: "run", command: "ps" }).state !== "granted") {
        return null;
      }
      const out = new Deno.Command("ps", {
        args,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
        env: { ...PS_ENV },
        clearEnv: true,
      }).outputSync();
      return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
    } catch {
      return null;
    }
  }

  function find(pid: number): { run: PsRun; line: PsLine | null } | null {
    const run = runPs(psArgs(pid));
    if (run === null) return null;
    for (const text of run.stdout.split("\n")) {
      const line = parsePsLine(text);
      if (line !== null && line.pid === pid) return { run, line };
    }
    return { run, line: null };
  }

  function isUsable(): boolean {
    usable ??= find(Deno.pid)?.line != null;
    return usable;
  }

  function probe(pid: number): Probe {
    // ps -p 0 or a negative pid means something else to each ps.
    if (!isPid(pid, MAX_PID_T)) return { kind: "gone" };
    if (!isUsable()) return { kind: "unsupported" };
    const found = find(pid);
    if (found === null) return { kind: "unsupported" };
    if (found.line !== null) return { kind: "exists", info: psProcessInfo(found.line) };
    // ps lists nothing and exits 1 for a missing pid; anything else is not that answer.
    if (found.run.code === 1 && found.run.stdout.trim() === "") return { kind: "gone" };
    return { kind: "unsupported" };
  }

  function command(pid: number): ProcessCommand {
    if (!isPid(pid, MAX_PID_T)) {
      return { exe: null, argv: null };
    }
    const run = runPs(["-o", "args=", "-p", String(pid)]);
    return { exe: null, argv: run === null || run.code !== 0 ? null : parsePsArgs(run.stdout) };
  }

  return {
    name: "ps",
    probe,
    bootId: () => null,
    command,
    compareTokens: comparePsTokens,
  } satisfies ProcessBackend;
}
