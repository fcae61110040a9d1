/**
 * Who owns a registration: the harness table (one place) and the owner-pid precedence:
 * `--pid`, `$ROSTER_SESSION_PID`, `$CLAUDE_PID`, then the nearest ancestor that is a known
 * agent harness. A value that is set but invalid is an error, never a fall-through.
 */
import { UsageError } from "../errors.ts";
import {
  asProcess,
  type ProcessBackend,
  type ProcessCommand,
  type ProcessInfo,
} from "../process/types.ts";
import { parsePid } from "../identity/pid.ts";
import type { PidSource } from "./record.ts";

/** Known agent harnesses: the agent name, then the executable names it runs under. */
const HARNESSES: ReadonlyArray<readonly [agent: string, names: readonly string[]]> = [
  ["claude", ["claude", "claude-code"]],
  ["codex", ["codex"]],
  ["pi", ["pi"]],
  ["gemini", ["gemini"]],
  ["opencode", ["opencode"]],
  ["aider", ["aider"]],
  ["goose", ["goose"]],
  ["crush", ["crush"]],
  ["cursor-agent", ["cursor-agent"]],
  ["copilot", ["copilot"]],
  ["amp", ["amp"]],
  ["qwen", ["qwen"]],
  ["droid", ["droid"]],
];

/** npm packages whose entry script a runtime runs (`node .../node_modules/<pkg>/cli.js`). */
const PACKAGES: ReadonlyArray<readonly [agent: string, pkg: string]> = [
  ["claude", "@anthropic-ai/claude-code"],
  ["codex", "@openai/codex"],
  ["gemini", "@google/gemini-cli"],
  ["qwen", "@qwen-code/qwen-code"],
  ["amp", "@sourcegraph/amp"],
  ["copilot", "@github/copilot"],
  ["pi", "@mariozechner/pi-coding-agent"],
  ["opencode", "opencode-ai"],
];

/** Interpreters whose first non-flag argument is the program actually running. */
const RUNTIMES = /^(node|nodejs|bun|deno|python[0-9.]*|ruby|perl)(\.exe)?$/;
const VERSION_NAME = /^v?\d+(\.\d+)+([-+][0-9A-Za-z.-]+)?$/;
const SCRIPT_EXT = /\.(c?js|mjs|ts|py|rb|exe|cmd|bat)$/i;

const byName = new Map<string, string>();
for (const [agent, names] of HARNESSES) for (const n of names) byName.set(n, agent);

function segments(path: string): string[] {
  return path.split(/[\\/]+/).filter((s) => s !== "");
}

/** The harness a path names: its base name, or for a versioned install, the folder it sits in. */
function agentOfPath(path: string): string | null {
  const parts = segments(path);
  const base = (parts.at(-1) ?? "").replace(SCRIPT_EXT, "").toLowerCase();
  if (byName.has(base)) return byName.get(base)!;
  if (VERSION_NAME.test(base) && parts.length >= 2) {
    // e.g. ~/.local/share/claude/versions/2.0.14
    const dir = parts.at(-2) === "versions" && parts.length >= 3 ? parts.at(-3)! : parts.at(-2)!;
    return byName.get(dir.toLowerCase()) ?? null;
  }
  const joined = parts.join("/");
  for (const [agent, pkg] of PACKAGES) {
    if (joined.includes(`node_modules/${pkg}/`)) return agent;
  }
  return null;
}

interface HarnessMatch {
  agent: string;
  /** The interpreter the harness runs on (node, bun, python3, ...), or null when native. */
  runtime: string | null;
}

/** Pure: does this process look like a known harness? */
export function matchHarness(name: string | null, cmd: ProcessCommand): HarnessMatch | null {
  const candidates = [cmd.exe, name, cmd.argv?.[0]];
  for (const c of candidates) {
    if (!c) continue;
    const agent = agentOfPath(c);
    if (agent) return { agent, runtime: null };
  }
  const runtime = [cmd.exe, cmd.argv?.[0], name]
    .map((c) => (c ? (segments(c).at(-1) ?? "") : ""))
    .find((b) => RUNTIMES.test(b));
  if (runtime && cmd.argv) {
    const script = cmd.argv.slice(1).find((a) => !a.startsWith("-"));
    const agent = script ? agentOfPath(script) : null;
    if (agent) return { agent, runtime: runtime.replace(/\.exe$/, "") };
  }
  return null;
}

export const MAX_DEPTH = 32;

/** No pid was named and no harness is among the ancestors (a usage error for register). */
export class NoOwnerError extends UsageError {
  constructor() {
    super(
      "Cannot tell which session this is: no known agent harness among the calling process's " +
        "ancestors; pass --pid PID or set ROSTER_SESSION_PID",
    );
  }
}

export interface Owner {
  pid: number;
  source: PidSource;
  verified: boolean;
  harness: HarnessMatch | null;
}

interface OwnerInput {
  flagPid?: string;
  env: (name: string) => string | undefined;
  selfPid: number;
  selfPpid: number;
}

/** Walks up from `start` (inclusive), at most MAX_DEPTH levels, yielding each live process. */
export function* ancestors(backend: ProcessBackend, start: number): Generator<ProcessInfo> {
  let pid = start;
  const seen = new Set<number>();
  for (let depth = 0; depth < MAX_DEPTH && pid > 0 && !seen.has(pid); depth++) {
    seen.add(pid);
    const p = backend.probe(pid);
    if (p.kind !== "exists") return;
    yield p.info;
    if (p.info.ppid === null) return;
    pid = p.info.ppid;
  }
}

/**
 * Whether `pid` is among the ancestors from `start` up. Start times only fall going up (a
 * parent starts before its child, and an adopter started earlier still), so the walk stops
 * at the first ancestor that started before `pid` did: nothing above it can be `pid`.
 */
export function isAncestor(
  backend: ProcessBackend,
  start: number,
  pid: number,
  startedAtMs: number | null,
): boolean {
  for (const a of ancestors(backend, start)) {
    if (a.pid === pid) return true;
    if (startedAtMs !== null && a.startedAtMs !== null && a.startedAtMs < startedAtMs) return false;
  }
  return false;
}

/**
 * The pid a caller named, first that is set: `--pid`, `$ROSTER_SESSION_PID`, `$CLAUDE_PID`.
 * Set but not a positive integer is a usage error; null when none is set.
 */
export function namedPid(input: Pick<OwnerInput, "flagPid" | "env">): {
  pid: number;
  source: PidSource;
  what: string;
} | null {
  const given: [PidSource, string, string | undefined][] = [
    ["flag", "--pid", input.flagPid],
    ["ROSTER_SESSION_PID", "ROSTER_SESSION_PID", input.env("ROSTER_SESSION_PID")],
    ["CLAUDE_PID", "CLAUDE_PID", input.env("CLAUDE_PID")],
  ];
  for (const [source, what, value] of given) {
    if (value !== undefined) return { pid: parsePid(value, what), source, what };
  }
  return null;
}

export function resolveOwner(input: OwnerInput, backend: ProcessBackend): Owner {
  const named = namedPid(input);
  if (named !== null) {
    const { pid, source, what } = named;
    const p = asProcess(backend.probe(pid));
    if (p.kind === "gone" || (p.kind === "exists" && p.info.zombie)) {
      throw new UsageError(`Invalid ${what}: no running process has pid ${pid}`);
    }
    const info = p.kind === "exists" ? p.info : null;
    const verified = pid === input.selfPid ||
      isAncestor(backend, input.selfPpid, pid, info?.startedAtMs ?? null);
    const name = info?.name ?? null;
    return { pid, source, verified, harness: matchHarness(name, backend.command(pid)) };
  }
  for (const info of ancestors(backend, input.selfPpid)) {
    const harness = matchHarness(info.name, backend.command(info.pid));
    if (harness) return { pid: info.pid, source: "ancestor", verified: true, harness };
  }
  throw new NoOwnerError();
}
