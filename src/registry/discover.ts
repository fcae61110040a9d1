/**
 * `list --discover`: sessions that harnesses record themselves, read and never written.
 * Claude Code keeps `<config dir>/sessions/<pid>.json` (`$CLAUDE_CONFIG_DIR`, else
 * `~/.claude`) with `pid`, `sessionId`, `cwd`, `startedAt` (epoch milliseconds) and, since
 * 2.1, `procStart` (the same start token roster reads) and `pidDomain` (the machine and pid
 * namespace the pid belongs to). Where pidDomain is this machine's and this pid namespace's,
 * procStart is compared exactly; from another domain the row is unknown; a file without them
 * is judged by start time, and timing alone never says dead. A missing, unreadable or odd
 * file is skipped silently: these files are someone else's, and their shape is not a contract.
 */
import { join } from "../fs/path.ts";
import { readSmallFile } from "../fs/read.ts";
import { type LivenessJudge, probeVerdict, type Verdict } from "../identity/liveness.ts";
import { isValidPid } from "../identity/pid.ts";
import type { Probe } from "../process/types.ts";
import { RECORD_NAME } from "./layout.ts";
import { claudeRow, type ClaudeSession, type Row, type SourcedRow } from "./row.ts";
import { YEAR_10000_MS } from "../time.ts";

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
const MAX_TEXT = 4096;
/** A home with thousands of stale session files must not make `list` slow: read at most this many. */
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
    startedAt >= YEAR_10000_MS // not a time roster can write as RFC 3339
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
  const procStart = typeof o.procStart === "string" && /^\d{1,20}$/.test(o.procStart)
    ? o.procStart
    : null;
  const optional = (v: unknown) => text(v) ?? null;
  return {
    pid: o.pid,
    sessionId,
    cwd,
    startedAtMs: startedAt,
    procStart,
    pidDomain: optional(o.pidDomain),
    tmux: optional(o.tmux),
    status: optional(o.status),
  };
}

/**
 * Pure: the liveness of a session file. With `procStart` and a `pidDomain` that is this
 * machine's and pid namespace's (`domain`), the token decides exactly: the same is running,
 * another is pid-reused. A pidDomain from elsewhere cannot be judged here (unknown). Without
 * them, by start time: within the margin is running, anything else unknown, never dead on
 * timing alone (a stepped wall clock moves every start time and the boot time with it).
 */
export function judgeSession(
  session: Pick<ClaudeSession, "startedAtMs" | "procStart" | "pidDomain">,
  probe: Probe,
  domain: string | null,
): Verdict {
  if (session.pidDomain !== null && domain !== null && session.pidDomain !== domain) {
    // `<os>:<machine>:pid:[<inode>]`: the same machine up to the pid namespace, or another.
    const machine = (d: string) => d.slice(0, d.lastIndexOf(":pid:"));
    const sameMachine = machine(session.pidDomain) === machine(domain);
    return { liveness: "unknown", reason: sameMachine ? "other-pid-ns" : "other-host" };
  }
  if (probe.kind !== "exists" || probe.info.zombie) return probeVerdict(probe)!;
  if (session.procStart !== null && session.pidDomain !== null && domain !== null) {
    const token = probe.info.startToken;
    if (token === null) return { liveness: "unknown", reason: "unverifiable" };
    return token === session.procStart
      ? { liveness: "alive", reason: "running" }
      : { liveness: "dead", reason: "pid-reused" };
  }
  const started = probe.info.startedAtMs;
  if (started !== null && Math.abs(started - session.startedAtMs) <= START_MARGIN_MS) {
    return { liveness: "alive", reason: "running" };
  }
  return { liveness: "unknown", reason: "unverifiable" };
}

/** This machine's and pid namespace's pidDomain as Claude Code writes it (Linux), or null. */
export function pidDomainOf(
  here: { machineId?: string | null; pidNs?: string | null },
  os: typeof Deno.build.os,
): string | null {
  return os === "linux" && here.machineId && here.pidNs
    ? `linux:${here.machineId}:${here.pidNs}`
    : null;
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

/** Every Claude Code session on this machine, judged now. Never writes; never fails. */
export function discoverClaude(dir: string, judge: LivenessJudge): SourcedRow[] {
  const rows: SourcedRow[] = [];
  let names: string[];
  try {
    names = [];
    for (const e of Deno.readDirSync(dir)) {
      // Only session-file names count toward the cap: unrelated files (notes, backups,
      // another tool's) must not push a live session past it.
      if (!e.isFile || !RECORD_NAME.test(e.name)) continue;
      if (names.length >= MAX_FILES) break;
      names.push(e.name);
    }
  } catch {
    return rows;
  }
  const domain = pidDomainOf(judge.here, Deno.build.os);
  for (const name of names.sort()) {
    const session = readClaudeSession(dir, name);
    if (session === null) continue;
    const probe = judge.probe(session.pid);
    const verdict = judgeSession(session, probe, domain);
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
