/**
 * Drives the real harness releases: each in a private tmux server (`tmux -L`), with a throwaway
 * HOME holding the recipes from docs/hooks.md as written, a `roster` in ~/.local/bin that runs
 * this checkout, and the harness pointed at the stand-in model in model_server.ts.
 */
import {
  BOUND_SCALE,
  cliArgs,
  type CliResult,
  endTmux,
  pidsMentioning,
  roster,
  run,
} from "../helpers.ts";
import { recipe, shq } from "../recipes/harness.ts";
import { type ModelServer, startModelServer } from "./model_server.ts";
import type { Row } from "../../src/registry/row.ts";

/** The pinned releases (the README names them; .ci/setup.d/20-harnesses.sh installs them). */
export const RELEASES = {
  claude: { pkg: "@anthropic-ai/claude-code", version: "2.1.328", bin: "claude" },
  codex: { pkg: "@openai/codex", version: "0.169.0", bin: "codex" },
  pi: { pkg: "@mariozechner/pi-coding-agent", version: "0.73.1", bin: "pi" },
  gemini: { pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
} as const;
export type HarnessName = keyof typeof RELEASES;

const CACHE = Deno.env.get("ROSTER_HARNESS_CACHE") ??
  `${Deno.env.get("HOME")}/.cache/roster/harnesses`;

/** Where a release is installed; throws (the run fails) when it is not: no silent skips. */
export function harnessBin(name: HarnessName): string {
  const r = RELEASES[name];
  const bin = `${CACHE}/${name}@${r.version}/node_modules/.bin/${r.bin}`;
  try {
    Deno.statSync(bin);
  } catch {
    throw new Error(
      `${r.pkg}@${r.version} is not installed at ${bin}: run .ci/setup.d/20-harnesses.sh`,
    );
  }
  return bin;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Polls `fn` until it returns a value that is not null/false, or throws after `ms` times
 * $ROSTER_TEST_BOUND_SCALE: a bound catches a hang, and a host the load drill makes busy is
 * not one (a SIGKILLed Claude Code took over 60 s to be gone there).
 */
export async function waitFor<T>(
  what: string,
  fn: () => T | null | false | undefined | Promise<T | null | false | undefined>,
  ms = 60_000,
  every = 250,
): Promise<T> {
  const deadline = Date.now() + ms * BOUND_SCALE;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== null && v !== false && v !== undefined) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${ms} ms waiting for ${what}${last ? `: ${last}` : ""}`);
    }
    await sleep(every);
  }
}

let rigs = 0;

/**
 * One test's world: a temp dir (under /var/tmp: Codex refuses to put its helper binaries under
 * /tmp) with HOME and a project dir, a private tmux server, and a model server.
 */
export class Rig implements AsyncDisposable {
  readonly socket: string;
  readonly home: string;
  readonly proj: string;
  readonly store: string;
  readonly server: ModelServer;
  #windows = 0;

  private constructor(readonly base: string) {
    this.socket = `roster-h-${Deno.pid}-${++rigs}-${crypto.randomUUID().slice(0, 8)}`;
    this.home = `${base}/home`;
    this.proj = `${base}/proj`;
    this.store = `${this.home}/.local/state/roster`;
    this.server = startModelServer();
  }

  static async create(): Promise<Rig> {
    Deno.mkdirSync("/var/tmp", { recursive: true });
    const base = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "roster-harness-" });
    const rig = new Rig(Deno.realPathSync(base));
    Deno.mkdirSync(rig.proj, { recursive: true });
    Deno.mkdirSync(`${rig.home}/.local/bin`, { recursive: true });
    // roster where a user's install puts it; Codex's tools run a login shell, whose profile
    // puts ~/.local/bin on PATH.
    const deno = Deno.execPath();
    const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
    const line = [deno, ...cliArgs([])].map(shq).join(" ");
    // It logs each call's wall time (ms), exit code and arguments to ~/.roster-calls: the hook
    // cost the suite reports is measured inside the real hooks, and the activity tests see
    // which events the release really sent.
    rig.write(
      ".local/bin/roster",
      `#!/bin/sh
t0=$(date +%s%N)
DENO_DIR=${shq(denoDir)} ${line} "$@"
rc=$?
t1=$(date +%s%N)
{ echo "$1 $(( (t1 - t0) / 1000000 )) $rc $*" >>"$HOME/.roster-calls"; } 2>/dev/null
exit $rc
`,
      0o755,
    );
    try {
      rig.write(".profile", Deno.readTextFileSync("/etc/skel/.profile"));
    } catch {
      rig.write(".profile", 'PATH="$HOME/.local/bin:$PATH"\n');
    }
    return rig;
  }

  /** Writes a file under HOME (parents created). */
  write(rel: string, text: string, mode = 0o644): string {
    const path = `${this.home}/${rel}`;
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(path, text);
    Deno.chmodSync(path, mode);
    return path;
  }

  /** The environment every harness starts with: nothing of the test runner's own session. */
  baseEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      HOME: this.home,
      PATH: `${this.home}/.local/bin:/usr/local/bin:/usr/bin:/bin`,
      TERM: "xterm-256color",
      LANG: "C.UTF-8",
      NO_COLOR: "1",
      ...extra,
    };
  }

  tmux(args: string[], env?: Record<string, string>): Promise<CliResult> {
    return run("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], env ?? this.baseEnv());
  }

  /**
   * Starts `argv` in a new tmux window (the first call starts the tmux server with `env`, so
   * every pane inherits only that). Returns the pane's id and its first process's pid.
   */
  async launch(argv: string[], env: Record<string, string>, cwd = this.proj): Promise<Pane> {
    const cmd = argv.map(shq).join(" ");
    const name = `w${++this.#windows}`;
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const args = this.#windows === 1
      ? ["new-session", "-d", "-s", "main", "-n", name, "-x", "200", "-y", "50", "-c", cwd]
      : ["new-window", "-d", "-t", "main", "-n", name, "-c", cwd];
    const r = await this.tmux(
      [...args, ...envArgs, "-P", "-F", "#{pane_id} #{pane_pid}", cmd],
      this.#windows === 1 ? env : undefined,
    );
    if (r.code !== 0) throw new Error(`tmux could not start ${argv[0]}: ${r.stderr}`);
    const [id, pid] = r.stdout.trim().split(" ");
    return new Pane(this, id, Number(pid));
  }

  /** roster run against this HOME's store, as a person at a terminal would. */
  roster(args: string[], env: Record<string, string> = {}, timeoutMs?: number): Promise<CliResult> {
    return roster([...args, "--home", this.store], { env, timeoutMs });
  }

  async rows(all = true): Promise<Row[]> {
    const r = await this.roster(["list", ...(all ? ["--all"] : []), "--json"]);
    if (r.code !== 0) throw new Error(`roster list exited ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Row[];
  }

  /** The calls the hooks made through ~/.roster-calls: `[subcommand, ms, exit code]`. */
  calls(): [string, number, number][] {
    let text = "";
    try {
      text = Deno.readTextFileSync(`${this.home}/.roster-calls`);
    } catch { /* none yet */ }
    return text.split("\n").filter((l) => l).map((l) => {
      const [cmd, ms, rc] = l.split(" ");
      return [cmd, Number(ms), Number(rc)];
    });
  }

  /** The arguments of each call the hooks made, in order (from ~/.roster-calls). */
  callArgs(): string[] {
    let text = "";
    try {
      text = Deno.readTextFileSync(`${this.home}/.roster-calls`);
    } catch { /* none yet */ }
    return text.split("\n").filter((l) => l).map((l) => l.split(" ").slice(3).join(" "));
  }

  /**
   * Types a prompt and makes sure it was submitted: some TUIs read an Enter that follows typed
   * text closely as part of a paste, so Enter is sent again until the model server has seen it.
   */
  async prompt(pane: Pane, text: string): Promise<void> {
    const seen = () => this.server.requests.some((r) => JSON.stringify(r.body).includes(text));
    await pane.type(text);
    for (let i = 0; i < 20 && !seen(); i++) {
      await sleep(3_000);
      if (!seen()) await pane.keys("Enter");
    }
    if (!seen()) {
      throw new Error(`The prompt never reached the model: ${text}\n${await pane.screen()}`);
    }
  }

  /** Waits for a row matching `pred`. */
  row(what: string, pred: (r: Row) => boolean, ms = 90_000): Promise<Row> {
    return waitFor(what, async () => (await this.rows()).find(pred), ms, 500);
  }

  async [Symbol.asyncDispose]() {
    await endTmux(this.socket);
    try {
      await this.server[Symbol.asyncDispose]();
    } catch { /* already closed */ }
    // Whatever a harness left running under this HOME (Codex's app-server daemon) goes too.
    for (const pid of pidsMentioning(this.base, true)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await Deno.remove(this.base, { recursive: true }).catch(() => {});
  }
}

export class Pane {
  constructor(readonly rig: Rig, readonly id: string, readonly pid: number) {}

  async screen(): Promise<string> {
    const r = await this.rig.tmux(["capture-pane", "-p", "-J", "-t", this.id]);
    return r.stdout;
  }

  /** Types text literally, then (by default) Enter as a separate key. */
  async type(text: string, enter = true): Promise<void> {
    await this.rig.tmux(["send-keys", "-t", this.id, "-l", text]);
    if (enter) {
      // A key right after the text would read as part of a paste to some TUIs (pi).
      await sleep(1_000);
      await this.rig.tmux(["send-keys", "-t", this.id, "Enter"]);
    }
  }

  async keys(...keys: string[]): Promise<void> {
    await this.rig.tmux(["send-keys", "-t", this.id, ...keys]);
  }

  /** Waits until the screen matches `re`; the error shows the screen. */
  async waitScreen(re: RegExp, ms = 60_000): Promise<string> {
    let last = "";
    try {
      return await waitFor(
        `${re} on the screen`,
        async () => {
          last = await this.screen();
          return re.test(last) ? last : null;
        },
        ms,
        300,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- screen ---\n${last}`);
    }
  }

  /** Whether the pane's process is still running (tmux keeps dead panes only if told to). */
  async alive(): Promise<boolean> {
    const r = await this.rig.tmux(["list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"]);
    return r.stdout.split("\n").some((l) => l === `${this.id} 0`);
  }
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
  argv: string[];
  exe: string | null;
}

/** One process as /proc shows it, or null when gone. */
export function proc(pid: number): ProcInfo | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter((s) => s);
    let exe: string | null = null;
    try {
      exe = Deno.readLinkSync(`/proc/${pid}/exe`);
    } catch { /* no permission or kernel thread */ }
    return { pid, ppid, comm, argv, exe };
  } catch {
    return null;
  }
}

/** The descendants of `pid` (not itself), parents before children. */
export function descendants(pid: number): ProcInfo[] {
  const all: ProcInfo[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const p = proc(Number(e.name));
    if (p) all.push(p);
  }
  const out: ProcInfo[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const p of all) {
      if (p.ppid === parent) {
        out.push(p);
        queue.push(p.pid);
      }
    }
  }
  return out;
}

/** Reads a file the harness's tool wrote, once it is complete (ends with a marker line). */
export function readDone(path: string, ms = 90_000): Promise<string> {
  return waitFor(
    `${path} to be written`,
    () => {
      try {
        const t = Deno.readTextFileSync(path);
        return t.includes("__done") ? t : null;
      } catch {
        return null;
      }
    },
    ms,
    300,
  );
}

/** A tool command run in a new pid namespace, as a harness's sandbox (or a person's) runs it. */
export const BWRAP = ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc"];

/**
 * The job a harness's tool runs: `roster whoami --json` (its exit code and output) and the
 * environment variables roster reads, written to `out` with a final `__done` line; with
 * `wrap`, all of it under that command (e.g. BWRAP), so the pid namespace read is the wrap's.
 */
export function whoamiJob(out: string, wrap: string[] = []): string {
  const vars = [
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_THREAD_ID",
    "GEMINI_SESSION_ID",
    "CLAUDE_PID",
    "ROSTER_SESSION_ID",
    "ROSTER_SESSION_PID",
  ];
  const body = `roster whoami --json; echo "__rc $?"; readlink /proc/self/ns/pid; ` +
    vars.map((v) => `echo "__env ${v}=\${${v}:-}"; `).join("") + `echo __done`;
  const inner = wrap.length ? `${wrap.map(shq).join(" ")} sh -c ${shq(body)}` : `{ ${body}; }`;
  return `${inner} > ${shq(out)} 2>&1`;
}

export interface WhoamiResult {
  code: number;
  row: Row | null;
  stderr: string;
  pidNs: string;
  /** The variables the tool saw (empty when unset). */
  env: Record<string, string>;
}

export function parseWhoami(text: string): WhoamiResult {
  const m = /__rc (\d+)/.exec(text);
  const code = m ? Number(m[1]) : -1;
  const before = m ? text.slice(0, m.index) : text;
  const start = before.indexOf("{");
  let row: Row | null = null;
  if (code === 0 && start !== -1) row = JSON.parse(before.slice(start)) as Row;
  const after = m ? text.slice(m.index + m[0].length).trim().split("\n") : [];
  const env: Record<string, string> = {};
  for (const l of after) {
    const e = /^__env ([A-Z_]+)=(.*)$/.exec(l);
    if (e) env[e[1]] = e[2];
  }
  return { code, row, stderr: code === 0 ? "" : before.trim(), pidNs: after[0] ?? "", env };
}

/** Recipes read from docs/hooks.md, parsed where they are JSON. */
export function recipeJson(name: string): Record<string, unknown> {
  return JSON.parse(recipe(name)) as Record<string, unknown>;
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)];
}

export { startModelServer };
