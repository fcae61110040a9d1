/**
 * `list --discover`: sessions that harnesses record themselves, read and never written.
 * Claude Code keeps `<config dir>/sessions/<pid>.json` (`$CLAUDE_CONFIG_DIR`, else
 * `~/.claude`) with `pid`, `sessionId`, `cwd` and `startedAt` (epoch milliseconds). Such a
 * file carries no start token, so a row is judged by its pid, by whether the process started
 * within a margin of `startedAt`, and by whether `startedAt` predates this boot. A missing,
 * unreadable or odd file is skipped silently: these files are someone else's, and their
 * shape is not a contract.
 */
import { join } from "../fs/dir.ts";
import { readSmallFile } from "../fs/read.ts";
import { type LivenessJudge, probeVerdict, type Verdict } from "../identity/liveness.ts";
import { isValidPid } from "../identity/pid.ts";
import type { Probe } from "../process/types.ts";
import { RECORD_NAME } from "./layout.ts";
import { claudeRow, type ClaudeSession, type Row, type SourcedRow } from "./row.ts";

export type { SourcedRow };

/**
 * How far a process's start may sit from `startedAt` and still be the session's. On Linux a
 * process's start time is the boot time plus a tick count, and the boot time (btime) is the
 * wall clock minus the time since boot: it moves whenever the clock is stepped (NTP at boot,
 * a VM resumed, a person setting the time), and with it every start time. So a start a
 * little off either side is no evidence of another process: within the margin is running,
 * and beyond it roster cannot tell (unknown), never dead on timing alone.
 */
const START_MARGIN_MS = 30_000;
/**
 * A `startedAt` this far before the current boot began is an earlier boot's file: its
 * writer cannot still run. The slack covers a clock stepped between then and now.
 */
const BOOT_MARGIN_MS = 60_000;

/** Far-future limit of a JavaScript Date; anything beyond is not a time. */
const MAX_DATE_MS = 8.64e15;
const MAX_TEXT = 4096;
/** A home with thousands of stale files must not make `list` slow: read at most this many. */
const MAX_FILES = 4096;

/** Pure: the directory holding Claude Code's session files, or null without a home. */
export function claudeSessionsDir(
  env: (name: string) => string | undefined,
  os: typeof Deno.build.os,
): string | null {
  const sep = os === "windows" ? "\\" : "/";
  const config = env("CLAUDE_CONFIG_DIR");
  if (config) return `${config}${sep}sessions`;
  const home = env(os === "windows" ? "USERPROFILE" : "HOME");
  return home ? `${home}${sep}.claude${sep}sessions` : null;
}

/** Pure: a parsed session file, or null for anything odd (including a pid unlike its name). */
export function parseClaudeSession(value: unknown, filePid: number): ClaudeSession | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  if (!isValidPid(o.pid) || o.pid !== filePid) return null;
  const startedAt = o.startedAt;
  if (
    typeof startedAt !== "number" || !Number.isFinite(startedAt) || startedAt <= 0 ||
    startedAt > MAX_DATE_MS
  ) return null;
  const text = (v: unknown): string | null | undefined =>
    v === undefined || v === null
      ? null
      : typeof v === "string" && v.length <= MAX_TEXT
      ? v
      : undefined;
  const sessionId = text(o.sessionId);
  const cwd = text(o.cwd);
  if (sessionId === undefined || cwd === undefined) return null;
  return { pid: o.pid, sessionId, cwd, startedAtMs: startedAt };
}

/**
 * Pure: the liveness of a session that has no start token, from what the pid holds now, when
 * that process started, and when this boot began (`bootMs`, null when unknown). Timing alone
 * never says dead (see START_MARGIN_MS); only a file older than this boot does.
 */
export function judgeByStart(startedAtMs: number, probe: Probe, bootMs: number | null): Verdict {
  if (probe.kind !== "exists" || probe.info.zombie) return probeVerdict(probe)!;
  const started = probe.info.startedAtMs;
  if (started !== null && Math.abs(started - startedAtMs) <= START_MARGIN_MS) {
    return { liveness: "alive", reason: "running" };
  }
  if (bootMs !== null && startedAtMs < bootMs - BOOT_MARGIN_MS) {
    return { liveness: "dead", reason: "rebooted" };
  }
  return { liveness: "unknown", reason: "unverifiable" };
}

/** Reads one session file safely; null when it is missing or odd in any way. */
function readClaudeSession(dir: string, name: string): ClaudeSession | null {
  const m = RECORD_NAME.exec(name);
  if (!m) return null;
  const file = readSmallFile(join(dir, name));
  if (file === null || !file.ok) return null;
  try {
    return parseClaudeSession(JSON.parse(file.value), Number(m[1]));
  } catch {
    return null;
  }
}

/**
 * When this boot began, in epoch milliseconds, or null when the OS or the permissions do not
 * say (then no row is judged by the boot). Derived like Linux's btime (now minus the time
 * since boot), so it moves with a stepped clock just as the process start times do.
 */
function bootTimeMs(): number | null {
  try {
    const up = Deno.osUptime();
    return Number.isFinite(up) && up >= 0 ? Date.now() - up * 1000 : null;
  } catch {
    return null;
  }
}

/** Every Claude Code session on this machine, judged now. Never writes; never fails. */
export function discoverClaude(dir: string, judge: LivenessJudge): SourcedRow[] {
  const rows: SourcedRow[] = [];
  let names: string[];
  try {
    names = [];
    for (const e of Deno.readDirSync(dir)) {
      if (names.length >= MAX_FILES) break;
      if (e.isFile) names.push(e.name);
    }
  } catch {
    return rows;
  }
  const bootMs = bootTimeMs();
  for (const name of names.sort()) {
    const session = readClaudeSession(dir, name);
    if (session === null) continue;
    const probe = judge.probe(session.pid);
    const verdict = judgeByStart(session.startedAtMs, probe, bootMs);
    rows.push(claudeRow(session, join(dir, name), probe, verdict, judge.here));
  }
  return rows;
}

/**
 * Pure: registered rows tagged `roster`, plus the discovered rows that add something. A
 * discovered row for a pid that a live registered row on this host already covers is the
 * same process seen twice, and is dropped.
 */
export function mergeDiscovered(registered: Row[], discovered: SourcedRow[], host: string) {
  const covered = new Set(
    registered.filter((r) => r.host === host && r.liveness === "alive").map((r) => r.session_pid),
  );
  return [
    ...registered.map((r): SourcedRow => ({ ...r, source: "roster" })),
    ...discovered.filter((d) => !covered.has(d.session_pid)),
  ];
}
