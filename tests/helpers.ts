/**
 * Test helpers: disposable temp homes, the CLI run exactly as a hook would run it, and real
 * child processes (spawned, killed, reaped, left as zombies) for liveness.
 */
import { hostDir as storeHostDir, placeDirName } from "../src/registry/layout.ts";
import { linuxBackend } from "../src/process/linux.ts";
import { DECLARED_SESSION_VARS } from "../src/registry/session_id.ts";
import { assertSchema } from "./schema.ts";

export const MAIN = new URL("../main.ts", import.meta.url).pathname;
export const ROOT = new URL("../", import.meta.url).pathname;
/** Linux needs all access: Deno gates every /proc read behind --allow-all (docs/decisions.md). */
export const PERMS = ["--allow-all"];

export interface TempDir extends AsyncDisposable {
  path: string;
}

export async function tempDir(prefix = "roster-test-"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  stdin?: string;
  /** Environment variables to remove (the test runner's own may leak in). */
  clearEnv?: boolean;
  /** How long the command may run before it is killed (SIGKILL) and the call throws. */
  timeoutMs?: number;
  /** Do not check `--json` output against its schema (a test of deliberately odd output). */
  skipSchema?: boolean;
}

/** Above the largest pid_max Linux allows (2^22): no process can ever hold this pid. */
export const NO_PID = 4_200_000;

/**
 * Variables of the test runner's own session that roster reads: left in a child's environment
 * they would change what it does (which session, which store, which harness).
 */
export const LEAKY: readonly string[] = [
  "ROSTER_HOME",
  "ROSTER_SESSION_PID",
  "CLAUDE_PID",
  "ROSTER_AGENT",
  "CLAUDE_CONFIG_DIR",
  "TMUX_PANE",
  "ROSTER_RUNTIME",
  "ROSTER_TEST_PAUSE_AT",
  "ROSTER_DEBUG",
  "ROSTER_CWD_GONE",
  // Set by an outer `deno task` (deno task ok): a nested `deno task roster` would run there.
  "INIT_CWD",
  // Every session id roster reads (ROSTER_SESSION_ID and each harness's), a harness's own home,
  // the store's XDG place, the housekeeping and model settings, and an outer tmux: a run inside
  // Codex, Gemini CLI or tmux, or a CI machine that sets one, is no different.
  ...DECLARED_SESSION_VARS,
  "ROSTER_NATIVE_SESSION_ID",
  "ROSTER_RETENTION",
  "ROSTER_MODEL",
  "XDG_STATE_HOME",
  "CODEX_HOME",
  "GEMINI_CLI_HOME",
  "PI_CODING_AGENT_DIR",
  "PI_CODING_AGENT_SESSION_DIR",
  "TMUX",
];

/** This process's environment without the LEAKY variables. */
export function cleanEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  for (const k of LEAKY) delete env[k];
  return env;
}

/**
 * The boot history (registry/boots.ts) of the roster calls a test makes, one per test process,
 * never the machine's own: a test may add a boot to it (one this machine "ran" before).
 */
export const BOOT_HISTORY = (() => {
  const dir = Deno.makeTempDirSync({ prefix: "roster-boots-" });
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* gone */ }
  });
  return `${dir}/boots`;
})();

function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...cleanEnv(), NO_COLOR: "1", ROSTER_BOOT_HISTORY: BOOT_HISTORY, ...extra };
}

/** The roster command line a hook would run: `deno run <perms> main.ts ...args`. */
export function cliArgs(args: string[]): string[] {
  return ["run", "--quiet", ...PERMS, MAIN, ...args];
}

/**
 * How many times longer than on a quiet machine a wait may take before it is called a hang:
 * $ROSTER_TEST_BOUND_SCALE (default 1; scripts/ci_under_load.sh sets more). Bounds catch hangs;
 * they never measure speed (that is `deno task bench`).
 */
export const BOUND_SCALE = Math.max(1, Number(Deno.env.get("ROSTER_TEST_BOUND_SCALE") ?? 1) || 1);

/** The bound for a wait that ends in moments on any machine: only a hang outlasts it. */
export const HANG_MS = 120_000 * BOUND_SCALE;

export const DEFAULT_TIMEOUT_MS = 60_000 * BOUND_SCALE;

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * `promise`, or an error naming `what` once `ms` pass first: a wait that hangs fails its test
 * (which Deno names) instead of stalling the run.
 */
export async function bounded<T>(promise: Promise<T>, what: string, ms = HANG_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `ready` every `everyMs` until it holds; throws naming `what` after `ms` (a hang bound,
 * not a speed limit: a slow host only makes it poll longer).
 */
export async function waitUntil(
  ready: () => boolean | Promise<boolean>,
  what: string,
  { ms = HANG_MS, everyMs = 10 }: { ms?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(everyMs);
  }
}

/**
 * Runs roster to completion. A run that outlasts `opts.timeoutMs` (default 60 s) is killed with
 * SIGKILL and the call throws, naming the command: a hang fails the test instead of stalling it.
 */
export async function roster(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const child = new Deno.Command(Deno.execPath(), {
    args: cliArgs(args),
    env: childEnv(opts.env),
    clearEnv: true,
    cwd: opts.cwd,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = await outputWithin(
    child,
    timeoutMs,
    `roster ${args.join(" ")}`,
    opts.stdin === undefined ? undefined : () => writeStdin(child, opts.stdin!),
  );
  const dec = new TextDecoder();
  const result = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  // Every JSON output the suite produces is checked against its schema (tests/schema.ts).
  if (args.includes("--json") && result.stdout.trim() !== "" && !opts.skipSchema) {
    assertSchema(args, result.stdout);
  }
  return result;
}

/**
 * Runs a program to completion (only `env` in its environment; `stdin` written to it, else none)
 * and collects its output; one that outlasts `boundMs`, when given, is killed and throws.
 */
export async function run(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  cwd?: string,
  boundMs?: number,
  stdin?: string,
): Promise<CliResult> {
  const child = new Deno.Command(cmd, {
    args,
    env,
    clearEnv: true,
    cwd,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const feed = stdin === undefined ? undefined : () => writeStdin(child, stdin);
  const out = boundMs === undefined && feed === undefined
    ? await child.output()
    : await outputWithin(child, boundMs ?? DEFAULT_TIMEOUT_MS, [cmd, ...args].join(" "), feed);
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * The marker `<dir>/.pause-<point>-<pid>` that `child` writes when it reaches a pause point
 * (src/pause.ts) and waits there until it is removed: its path once it is there, or null once
 * `child` has exited. A wait past HANG_MS is a hang, and throws.
 */
export async function pauseMarker(
  dir: string,
  point: string,
  child: Deno.ChildProcess,
): Promise<string | null> {
  let exited = false;
  const ended = () => exited = true;
  child.status.then(ended, ended);
  const marker = `${dir}/.pause-${point}-${child.pid}`;
  const there = () => {
    try {
      Deno.lstatSync(marker);
      return true;
    } catch {
      return false;
    }
  };
  await waitUntil(() => there() || exited, `${point}: a pause`);
  return there() ? marker : null;
}

/** Writes `text` to `child`'s stdin and closes it; a child may stop reading (roster past 64 MiB does). */
async function writeStdin(child: Deno.ChildProcess, text: string) {
  const w = child.stdin.getWriter();
  try {
    await w.write(new TextEncoder().encode(text));
    await w.close();
  } catch (err) {
    if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
  }
}

/**
 * `child`'s output, or an error naming `what` once `ms` passed: the child is SIGKILLed (a bound
 * catches a hang; callers scale it with BOUND_SCALE). `feed` writes its stdin, if any.
 */
async function outputWithin(
  child: Deno.ChildProcess,
  ms: number,
  what: string,
  feed?: () => Promise<void>,
): Promise<Deno.CommandOutput> {
  const run = (async () => {
    if (feed) await feed();
    return await child.output();
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((ok) => {
    timer = setTimeout(() => ok("expired"), ms);
  });
  const out = await Promise.race([run, expired]).finally(() => clearTimeout(timer));
  if (out !== "expired") return out;
  try {
    child.kill("SIGKILL");
  } catch { /* it finished just now */ }
  await child.status;
  // Its pipes close with it (unless a grandchild holds them): give the reads a moment.
  let grace: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    run.catch(() => {}),
    new Promise((ok) => grace = setTimeout(ok, 1_000)),
  ]).finally(() => clearTimeout(grace));
  throw new Error(`${what} did not finish within ${ms} ms: killed with SIGKILL`);
}

/** Runs roster with `--home` and `--json` and parses stdout, failing loudly on a bad exit. */
export async function rosterJson<T = unknown>(
  home: string,
  args: string[],
  opts: CliOptions = {},
): Promise<T> {
  const r = await roster([...args, "--home", home, "--json"], opts);
  if (r.code !== 0) {
    throw new Error(`roster ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  }
  return JSON.parse(r.stdout) as T;
}

export interface Sleeper extends AsyncDisposable {
  pid: number;
  /** SIGKILL and reap: afterwards the pid is gone. */
  kill(): Promise<void>;
}

/**
 * `command.spawn()`, again after a moment when the program is "busy" (ETXTBSY): a program the
 * test has just written is busy while any other thread of the test runner forks, since the child
 * holds the write handle until its own exec. Parallel tests fork all the time.
 */
export async function spawnWritten(command: Deno.Command): Promise<Deno.ChildProcess> {
  for (let attempt = 1;; attempt++) {
    try {
      return command.spawn();
    } catch (err) {
      if (attempt >= 50 || !String((err as Error)?.message).includes("os error 26")) throw err;
      await sleep(20);
    }
  }
}

/** A real child process that lives until killed. */
export function spawnSleeper(seconds = 300): Sleeper {
  return spawnKillable("sleep", [String(seconds)]);
}

/** `cmd args...` as a child with no stdio, killed (SIGKILL; TerminateProcess) and awaited. */
export function spawnKillable(cmd: string, args: string[]): Sleeper {
  const child = new Deno.Command(cmd, { args, stdin: "null", stdout: "null", stderr: "null" })
    .spawn();
  let done = false;
  const kill = async () => {
    if (done) return;
    done = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await bounded(child.status, `${cmd} (pid ${child.pid}) did not end after SIGKILL`);
  };
  return { pid: child.pid, kill, [Symbol.asyncDispose]: kill };
}

export function writeJson(path: string, value: unknown) {
  Deno.writeTextFileSync(path, JSON.stringify(value));
  Deno.chmodSync(path, 0o600);
}

export function hostName(): string {
  return Deno.hostname();
}

/**
 * This process's directory in the store at `home`, as roster names it: its place's (host,
 * machine and pid namespace) where there are pid namespaces, else the host's.
 */
export function hostDir(home: string): string {
  const os = Deno.build.os;
  if (os !== "linux") return `${home}/places/${placeDirName({ host: hostName(), os })}`;
  const b = linuxBackend();
  const place = { host: hostName(), machineId: b.machineId(), pidNs: b.pidNamespace(), os };
  return `${home}/places/${placeDirName(place)}`;
}

/** The record a `list --json` row was read from: the row without what list adds. */
export function recordOf(row: object): Record<string, unknown> {
  const { liveness: _l, reason: _r, path: _p, malformed: _m, detail: _d, predecessor: _q, ...rec } =
    row as Record<string, unknown>;
  return rec;
}

/** The host's directory of the layout before places (`sessions/<host>/`), still read. */
export function oldHostDir(home: string): string {
  return storeHostDir(home, hostName());
}

/**
 * Pids of the processes whose command line mentions `needle`, or with `environ` their
 * environment too: a harness that restore relaunched from the shared install has only its HOME
 * to say whose it is.
 */
export function pidsMentioning(needle: string, environ = false): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      if (
        Deno.readTextFileSync(`/proc/${e.name}/cmdline`).includes(needle) ||
        environ && Deno.readTextFileSync(`/proc/${e.name}/environ`).includes(needle)
      ) out.push(Number(e.name));
    } catch { /* gone, or not ours to read */ }
  }
  return out;
}

/** Where `tmux -L name` keeps its socket: tmux's rule, $TMUX_TMPDIR (unless empty) or /tmp. */
export function tmuxSocketPath(name: string): string {
  return `${Deno.env.get("TMUX_TMPDIR") || "/tmp"}/tmux-${Deno.uid()}/${name}`;
}

/**
 * Ends the server of `tmux -L socket` and removes its socket, which tmux leaves behind. A
 * server that does not answer kill-server within a bound (stopped, or a loaded machine) is
 * killed, as is any client still attached: every process whose command line names the socket.
 */
export async function endTmux(socket: string): Promise<void> {
  const env: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const dir = Deno.env.get("TMUX_TMPDIR");
  if (dir) env.TMUX_TMPDIR = dir;
  await run("tmux", ["-L", socket, "kill-server"], env, undefined, 5_000 * BOUND_SCALE)
    .catch(() => {});
  const named = () => pidsMentioning(`\0${socket}\0`);
  for (const pid of named()) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone meanwhile */ }
  }
  // A killed process names the socket until the kernel has run its exit (later, under load).
  await waitUntil(() => named().length === 0, `tmux -L ${socket} after SIGKILL`);
  await Deno.remove(tmuxSocketPath(socket)).catch(() => {});
}

/** Whether anything is at `path` (a dangling symlink counts: it is not followed). */
export function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether `path` is a regular file, or a symlink to one. */
export function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Whether `tool` is on PATH (`command -v`); when it is not, says so for the skipped tests. */
export function installed(tool: string): boolean {
  const ok = new Deno.Command("sh", {
    args: ["-c", 'command -v "$1"', "sh", tool],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).outputSync().success;
  if (!ok) console.log(`skipped: ${tool} is not installed (apt-get install ${tool})`);
  return ok;
}

export interface Zombie extends AsyncDisposable {
  /** The zombie: exited, never reaped. */
  pid: number;
  /** Its parent, which never reaps it; disposing kills the parent, and init reaps both. */
  parent: number;
}

/** The state letter of /proc/<pid>/stat (after the parenthesised name), or null if gone. */
function procState(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) || null;
  } catch {
    return null;
  }
}

/**
 * A real zombie (Unix): `sleep 0` runs in the background of a shell that then execs into a
 * sleep, which never reaps it. Returns once `isZombie` says so (by default /proc/<pid>/stat
 * shows Z, on Linux); throws after 5 s if not.
 */
export async function spawnZombie(
  isZombie: (pid: number) => boolean = (pid) => procState(pid) === "Z",
): Promise<Zombie> {
  const child = new Deno.Command("sh", {
    // The child exits only once its parent has become `sleep` (which never reaps it): a child
    // that exited first could be reaped by the shell before its exec, under load.
    args: [
      "-c",
      `sh -c 'p=$(cut -d" " -f4 /proc/$$/stat); ` +
      `while [ "$(cat /proc/$p/comm)" != sleep ]; do sleep 0.01; done' & echo $!; exec sleep 60`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const dispose = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.stdout.cancel().catch(() => {});
    await child.status;
  };
  try {
    const reader = child.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const pid = Number(text.trim());
    if (!Number.isSafeInteger(pid) || pid <= 0) {
      throw new Error(`spawnZombie: no pid in ${JSON.stringify(text)}`);
    }
    const deadline = Date.now() + 5_000;
    while (!isZombie(pid)) {
      if (Date.now() > deadline) {
        throw new Error(`spawnZombie: pid ${pid} is not a zombie after 5 s`);
      }
      await sleep(20);
    }
    return { pid, parent: child.pid, [Symbol.asyncDispose]: dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/**
 * Whether `unshare --time` works here (Linux, root, a 5.6+ kernel) with a boottime offset of
 * `offset` seconds; says why not when it does not.
 */
export function canUnshareTime(offset = 1000): boolean {
  if (Deno.build.os !== "linux") {
    console.log("skipped: time namespaces are Linux-only");
    return false;
  }
  try {
    const ok = new Deno.Command("unshare", {
      args: ["--time", "--boottime", String(offset), "true"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
    if (!ok) console.log("skipped: unshare --time failed (needs root and a 5.6+ kernel)");
    return ok;
  } catch {
    console.log("skipped: unshare is not installed");
    return false;
  }
}
