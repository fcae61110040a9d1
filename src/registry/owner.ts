/**
 * Who owns a registration: the harness table (one place) and the owner-pid precedence:
 * `--pid`, `$ROSTER_SESSION_PID`, `$CLAUDE_PID`, then the nearest ancestor that is a known
 * agent harness. A value that is set but invalid is an error, never a fall-through.
 *
 * Over 400 lines: the harness tables (names, packages, servers, resume commands) are one
 * description of each harness, beside the walks and the precedence that read them.
 */
import { every, isDigit, isLetter, runEnd } from "../chars.ts";
import { UsageError } from "../errors.ts";
import {
  asProcess,
  type ProcessBackend,
  type ProcessCommand,
  type ProcessInfo,
} from "../process/types.ts";
import { parsePid } from "../identity/pid.ts";
import type { PidSource } from "./record.ts";
import { SESSION_ID_VARS } from "./session_id.ts";

/**
 * Known agent harnesses, each the name of the executable it runs under; other names an
 * executable of one has (`claude-code`) in ALIASES.
 */
const AGENTS =
  "claude codex pi gemini opencode aider goose crush cursor-agent copilot amp qwen droid"
    .split(" ");
const ALIASES: ReadonlyArray<readonly [name: string, agent: string]> = [["claude-code", "claude"]];

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

/**
 * Interpreters whose first non-flag argument is the program actually running:
 * `^(node|nodejs|bun|deno|python[0-9.]*|ruby|perl)(\.exe)?$`, read without a regex (src/chars.ts).
 */
export function isRuntime(name: string): boolean {
  const bare = withoutExe(name);
  return RUNTIME_NAMES.includes(bare) ||
    (bare.startsWith("python") && every(bare, isDigitOrDot, 6));
}

const RUNTIME_NAMES = ["node", "nodejs", "bun", "deno", "ruby", "perl"];

const isDigitOrDot = (c: number) => isDigit(c) || c === 46;
const withoutExe = (name: string) => name.endsWith(".exe") ? name.slice(0, -4) : name;

/** A version's name, `^v?\d+(\.\d+)+([-+][0-9A-Za-z.-]+)?$` (`2.1.3`, `v0.61.0-rc.1`). */
export function isVersionName(name: string): boolean {
  const start = name.charCodeAt(0) === 118 /* v */ ? 1 : 0;
  let at = runEnd(name, isDigit, start);
  if (at === start) return false;
  let dots = 0;
  for (; name.charCodeAt(at) === 46 && isDigit(name.charCodeAt(at + 1)); dots++) {
    at = runEnd(name, isDigit, at + 1);
  }
  if (dots === 0) return false;
  if (at === name.length) return true;
  const sign = name.charCodeAt(at);
  return (sign === 45 || sign === 43) && at + 1 < name.length &&
    every(name, isVersionTagChar, at + 1);
}

const isVersionTagChar = (c: number) => isDigit(c) || isLetter(c) || c === 46 || c === 45;

/**
 * A script's extension, matched on the lower-cased name (`\.(c?js|mjs|ts|py|rb|exe|cmd|bat)$`);
 * no one is the end of another, so at most one matches.
 */
const SCRIPT_EXTS = [".cjs", ".mjs", ".js", ".ts", ".py", ".rb", ".exe", ".cmd", ".bat"];

export function withoutScriptExt(name: string): string {
  const ext = SCRIPT_EXTS.find((e) => name.endsWith(e));
  return ext === undefined ? name : name.slice(0, -ext.length);
}

const byName = new Map<string, string>([...AGENTS.map((a) => [a, a] as const), ...ALIASES]);

/** A path's names, split at either separator (no regex: a first regex split costs ~1 ms). */
function segments(path: string): string[] {
  return path.replaceAll("\\", "/").split("/").filter((s) => s !== "");
}

/** The harness a path names: its base name, or for a versioned install, the folder it sits in. */
function agentOfPath(path: string): string | null {
  const parts = segments(path);
  const base = withoutScriptExt((parts.at(-1) ?? "").toLowerCase());
  if (byName.has(base)) return byName.get(base)!;
  if (isVersionName(base) && parts.length >= 2) {
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

/**
 * Harness processes that host many sessions at once, by agent and the argument that marks
 * them: Codex's `codex app-server` (by default every session of a CODEX_HOME, and its hooks,
 * run inside one, which outlives the terminals). Such a process is no session's owner alone.
 */
const SERVERS: ReadonlyArray<readonly [agent: string, arg: string]> = [["codex", "app-server"]];

interface HarnessMatch {
  agent: string;
  /** The interpreter the harness runs on (node, bun, python3, ...), or null when native. */
  runtime: string | null;
  /** A shared server hosting many sessions (SERVERS): its life says nothing of one session. */
  hosted?: boolean;
}

/** Pure: whether a harness process is a shared server (SERVERS) rather than one session. */
function isServer(agent: string, argv: string[] | null): boolean {
  return SERVERS.some(([a, arg]) => a === agent && (argv?.slice(1).includes(arg) ?? false));
}

/** Pure: does this process look like a known harness, and is it a shared server? */
export function matchHarness(name: string | null, cmd: ProcessCommand): HarnessMatch | null {
  const found = matchAgent(name, cmd);
  return found && isServer(found.agent, cmd.argv) ? { ...found, hosted: true } : found;
}

function matchAgent(name: string | null, cmd: ProcessCommand): HarnessMatch | null {
  const candidates = [cmd.exe, name, cmd.argv?.[0]];
  for (const c of candidates) {
    if (!c) continue;
    const agent = agentOfPath(c);
    if (agent) return { agent, runtime: null };
  }
  const runtime = [cmd.exe, cmd.argv?.[0], name]
    .map((c) => (c ? (segments(c).at(-1) ?? "") : ""))
    .find(isRuntime);
  if (runtime && cmd.argv) {
    const script = cmd.argv.slice(1).find((a) => !a.startsWith("-"));
    const agent = script ? agentOfPath(script) : null;
    if (agent) return { agent, runtime: withoutExe(runtime) };
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
  /**
   * A pid named by an inherited variable ($ROSTER_SESSION_PID, $CLAUDE_PID) was passed over
   * because a harness sits nearer the caller: the caller's session is an inner one, and the
   * other inherited variables ($ROSTER_SESSION_ID, $CLAUDE_CODE_SESSION_ID) are the outer's.
   */
  inner: boolean;
}

/**
 * An owner with its questions asked only when wanted: `verified` walks the caller's ancestors,
 * `harness` reads the process's executable and command line (activity asks it only where the
 * session's own record does not answer first).
 */
type Located = Omit<Owner, "verified" | "harness"> & {
  verified: () => boolean;
  harness: () => HarnessMatch | null;
};

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
  // Read in order and only as far as needed: a flag makes the variables irrelevant.
  const given: [PidSource, string, () => string | undefined][] = [
    ["flag", "--pid", () => input.flagPid],
    ["ROSTER_SESSION_PID", "ROSTER_SESSION_PID", () => input.env("ROSTER_SESSION_PID")],
    ["CLAUDE_PID", "CLAUDE_PID", () => input.env("CLAUDE_PID")],
  ];
  for (const [source, what, read] of given) {
    const value = read();
    if (value !== undefined) return { pid: parsePid(value, what), source, what };
  }
  return null;
}

/**
 * The nearest harness among the caller's ancestors, walking up no further than `stopAt` (a
 * pid an inherited variable names): null when the walk reaches `stopAt` or the top first.
 */
function nearestHarness(
  backend: ProcessBackend,
  parent: number | null,
  stopAt: number | null,
): { info: ProcessInfo; harness: HarnessMatch } | null {
  if (parent === null) return null;
  for (const info of ancestors(backend, parent)) {
    if (info.pid === stopAt) return null;
    const harness = matchHarness(info.name, backend.command(info.pid));
    if (harness) return { info, harness };
  }
  return null;
}

/**
 * Where the walk up starts: the caller's parent as the backend sees it, which checks what
 * Deno.ppid cannot: on Windows a parent that exited leaves its pid to the next process, and a
 * process created after the caller is a stranger, not its parent (null: no walk). Deno.ppid
 * only when the caller cannot probe itself.
 */
function parentOf(backend: ProcessBackend, input: OwnerInput): number | null {
  const self = backend.probe(input.selfPid);
  return self.kind === "exists" ? self.info.ppid : input.selfPpid;
}

/**
 * Who owns a registration. `--pid` wins outright. A pid named by an inherited variable
 * ($ROSTER_SESSION_PID, then $CLAUDE_PID) wins only when no known harness sits between the
 * caller and it: an outer session's variables reach everything started inside it (Claude Code
 * exports CLAUDE_PID to every Bash-tool command), so a Codex or Gemini CLI started there is
 * its own session, not Claude's. With no variable, the nearest harness ancestor.
 */
export function resolveOwner(input: OwnerInput, backend: ProcessBackend): Owner {
  const { pid, source, verified, harness, inner } = locateOwner(input, backend);
  return { pid, source, verified: verified(), harness: harness(), inner };
}

/**
 * resolveOwner's owner with `verified` a question: for a named pid other than the caller it
 * walks the caller's ancestors, which a hook that only touches the record (activity) skips.
 */
export function locateOwner(input: OwnerInput, backend: ProcessBackend): Located {
  const named = namedPid(input);
  // Where every walk up starts, read once and only for a walk: a --pid names its owner itself.
  let parentPid: number | null | undefined;
  const parent = () => parentPid === undefined ? parentPid = parentOf(backend, input) : parentPid;
  if (named !== null && named.source !== "flag" && named.pid !== input.selfPid) {
    const near = nearestHarness(backend, parent(), named.pid);
    if (near) return ancestorOwner(near, true);
  }
  if (named !== null) {
    const { pid, source, what } = named;
    const p = asProcess(backend.probe(pid));
    if (p.kind === "gone" || (p.kind === "exists" && p.info.zombie)) {
      throw new UsageError(`Invalid ${what}: no running process has pid ${pid}`);
    }
    const info = p.kind === "exists" ? p.info : null;
    const name = info?.name ?? null;
    let match: HarnessMatch | null | undefined;
    const harness = () =>
      match === undefined ? match = matchHarness(name, backend.command(pid)) : match;
    // Init (pid 1) is every process's ancestor, so being one proves nothing, unless it is a
    // harness itself (an agent run as a container's first process).
    const verified = () => {
      if (pid === input.selfPid) return true;
      if (pid <= 1 && harness() === null) return false;
      const up = parent();
      return up !== null && isAncestor(backend, up, pid, info?.startedAtMs ?? null);
    };
    return { pid, source, verified, harness, inner: false };
  }
  const near = nearestHarness(backend, parent(), null);
  if (near) return ancestorOwner(near, false);
  throw new NoOwnerError();
}

/** The nearest harness ancestor as the owner; `inner` when it sits below an inherited pid. */
function ancestorOwner(
  near: NonNullable<ReturnType<typeof nearestHarness>>,
  inner: boolean,
): Located {
  const { pid } = near.info;
  return { pid, source: "ancestor", verified: () => true, harness: () => near.harness, inner };
}

/**
 * The pid a session-end hook's record belongs to, resolved as register resolves it, except
 * that a named pid whose process has gone is taken as it is (the record of a pid no process
 * holds is nobody's). `inherited`: the pid came from a variable, with no harness between the
 * caller and it. Throws NoOwnerError when nothing names a session.
 */
export function endHookPid(
  input: OwnerInput,
  backend: ProcessBackend,
): { pid: number; inherited: boolean } {
  const named = namedPid(input);
  if (named?.source === "flag") return { pid: named.pid, inherited: false };
  const near = nearestHarness(backend, parentOf(backend, input), named?.pid ?? null);
  if (near) return { pid: near.info.pid, inherited: false };
  if (named) return { pid: named.pid, inherited: true };
  throw new NoOwnerError();
}

/** Whether the process `pid` is a shared server hosting many sessions (SERVERS). */
export function hostsSessions(backend: ProcessBackend, pid: number): boolean {
  const p = backend.probe(pid);
  const name = p.kind === "exists" ? p.info.name : null;
  return matchHarness(name, backend.command(pid))?.hosted === true;
}

/**
 * Whether a record an end hook reached only through an inherited variable may be its own: not
 * when the caller declares a session of another harness (Gemini CLI's last SessionEnd runs
 * after its process is gone, with Claude's CLAUDE_PID still in its environment).
 */
export function declaredElsewhere(
  sessionId: string | null,
  env: (name: string) => string | undefined,
): boolean {
  const own = [...SESSION_ID_VARS.codex, ...SESSION_ID_VARS.gemini]
    .map((n) => env(n))
    .filter((v): v is string => !!v);
  return own.length > 0 && (sessionId === null || !own.includes(sessionId));
}

/**
 * How each harness resumes one session, checked against the pinned releases (docs/
 * continuation.md): the executable, the arguments before and after the session's id, and
 * the variables of the caller's environment that say where the harness keeps its sessions and
 * its settings (passed on to the relaunch; never a secret). A harness missing here cannot be
 * resumed by roster: it is reported, never guessed.
 */
const RESUMES: Readonly<Record<string, ResumeSpec>> = {
  claude: { bin: "claude", args: (id) => ["--resume", id], env: ["CLAUDE_CONFIG_DIR"] },
  // A session that ran inside its TUI (--no-daemon) comes back the same way; a hosted one
  // through the shared server, which `codex resume` starts when none runs.
  // Its start hook runs at a session's first prompt, a resumed one's too (0.169.0): nothing
  // registers the relaunch until a turn is sent, which `codex resume <id> <PROMPT>` sends.
  codex: {
    bin: "codex",
    args: (id, hosted) => ["resume", ...(hosted ? [] : ["--no-daemon"]), id],
    env: ["CODEX_HOME"],
    registersAtFirstPrompt: true,
  },
  // `--session` takes a session file or a (partial) uuid: the id the recipe records.
  pi: {
    bin: "pi",
    args: (id) => ["--session", id],
    env: ["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_OFFLINE"],
  },
  // 0.61.0's `--resume` takes "latest", an index, or a session's full uuid (of this cwd).
  gemini: { bin: "gemini", args: (id) => ["--resume", id], env: ["GEMINI_CLI_HOME"] },
};

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,255}$/;

interface ResumeSpec {
  bin: string;
  args: (id: string, hosted: boolean) => string[];
  env: readonly string[];
  registersAtFirstPrompt?: boolean;
}

/** The command that resumes one session, and the variables its relaunch passes on. */
export interface ResumeCommand {
  argv: string[];
  env: readonly string[];
  /** Its start hook runs only once a turn is sent: its resume command takes that turn last. */
  registersAtFirstPrompt: boolean;
}

/**
 * Pure: how `agent` resumes the session `sessionId` (hosted: it ran in a shared server), or
 * why it cannot be: no id, or a harness roster has no resume command for. `prompt`: its first
 * turn, which only a harness that registers at its first prompt takes.
 */
export function resumeCommand(
  agent: string | null,
  sessionId: string | null,
  hosted: boolean,
  prompt: string | null = null,
): ResumeCommand | { problem: string } {
  const spec = agent === null ? undefined : RESUMES[agent];
  if (spec === undefined || !Object.hasOwn(RESUMES, agent!)) {
    return { problem: `no resume command known for ${agent ? `agent ${agent}` : "no agent"}` };
  }
  if (sessionId === null || sessionId === "") {
    return { problem: "no session id recorded: the harness cannot be told which to resume" };
  }
  // An id is passed as one argument: one that could read as a flag, or that holds anything
  // but the characters harnesses use in ids, is not passed at all.
  if (!SAFE_ID.test(sessionId)) {
    return { problem: "the recorded session id is not one a harness would take" };
  }
  const badPrompt = prompt?.trim() === "" || prompt?.startsWith("-");
  if (prompt !== null && (spec.registersAtFirstPrompt !== true || badPrompt)) {
    return { problem: `not a first prompt ${agent} would take on its command line` };
  }
  return {
    argv: [spec.bin, ...spec.args(sessionId, hosted), ...(prompt === null ? [] : [prompt])],
    env: spec.env,
    registersAtFirstPrompt: spec.registersAtFirstPrompt === true,
  };
}
