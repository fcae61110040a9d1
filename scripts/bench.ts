/**
 * `deno task bench`: start-up, scaling, contention and memory of roster, each measured in
 * the same run side by side with a floor (a hello-world started the same way), and printed
 * as one markdown table. Figures are medians of interleaved runs, so a noisy machine moves
 * the floor and roster together; compare ratios, not absolute times.
 *
 * Flags: --runs N (default 15), --sizes 10,100,1000,10000, --quick (runs 5, sizes up to 1000),
 * --startup (the start-up rows only, under deno run), --baseline DIR (also time DIR/main.ts,
 * another checkout, interleaved with this one in the same run: a before/after comparison).
 */
import { linuxBackend, parseStat } from "../src/process/linux.ts";
import { hostDirName } from "../src/registry/layout.ts";
import { V8_FLAGS } from "./build.ts";
import { median } from "./stats.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

interface Options {
  runs: number;
  sizes: number[];
  startup: boolean;
  baseline: string | null;
}

function options(argv: string[]): Options {
  const opts: Options = {
    runs: 15,
    sizes: [10, 100, 1_000, 10_000],
    startup: false,
    baseline: null,
  };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--runs") opts.runs = Math.max(3, Number(argv[++i]));
    else if (argv[i] === "--sizes") opts.sizes = argv[++i].split(",").map(Number);
    else if (argv[i] === "--quick") Object.assign(opts, { runs: 5, sizes: [10, 100, 1_000] });
    else if (argv[i] === "--startup") opts.startup = true;
    else if (argv[i] === "--baseline") opts.baseline = argv[++i];
    else throw new Error(`Unknown flag: ${argv[i]}`);
  }
  return opts;
}

interface Stats {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

function stats(samples: number[]): Stats {
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples };
}

function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/** One command line: the program and its arguments. */
type Cmd = string[];

async function runOnce(cmd: Cmd): Promise<number> {
  const started = performance.now();
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  if (out.code !== 0) {
    throw new Error(`${cmd.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return ms;
}

/**
 * Times several commands round-robin, so drift on a shared machine hits them all alike.
 * `before` runs untimed ahead of each timed run of that case (to restore a store).
 */
async function interleaved(
  cases: { name: string; cmd: Cmd; before?: () => void }[],
  runs: number,
): Promise<Map<string, Stats>> {
  const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (const c of cases) {
    c.before?.();
    await runOnce(c.cmd); // warm-up: module cache, page cache
  }
  for (let r = 0; r < runs; r++) {
    for (const c of cases) {
      c.before?.();
      samples.get(c.name)!.push(await runOnce(c.cmd));
    }
  }
  return new Map([...samples].map(([k, v]) => [k, stats(v)]));
}

/** Peak resident memory in KiB through GNU time, median of a few runs; null where absent. */
async function peakKiB(cmd: Cmd, runs = 5, before?: () => void): Promise<number | null> {
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    before?.();
    try {
      const out = await new Deno.Command("/usr/bin/time", {
        args: ["-f", "%M", ...cmd],
        stdout: "null",
        stderr: "piped",
      }).output();
      const lines = new TextDecoder().decode(out.stderr).trim().split("\n");
      const kib = Number(lines[lines.length - 1]);
      if (!Number.isFinite(kib)) return null;
      values.push(kib);
    } catch {
      return null;
    }
  }
  return stats(values).median;
}

/** Live processes to stand behind "alive" records: one bash that forks `n` sleeps. */
class Sleepers {
  pids: number[] = [];
  #bash: Deno.ChildProcess | null = null;

  async start(n: number) {
    if (n === 0) return;
    this.#bash = new Deno.Command("bash", {
      args: ["-c", `for i in $(seq ${n}); do sleep 3600 & echo $!; done; wait`],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = this.#bash.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    while (this.pids.length < n) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      const lines = buf.split("\n");
      buf = lines.pop()!;
      for (const l of lines) if (l.trim()) this.pids.push(Number(l));
    }
    reader.releaseLock();
  }

  async stop() {
    for (const pid of this.pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    if (this.#bash) {
      await this.#bash.status;
      await this.#bash.stdout.cancel().catch(() => {});
    }
  }
}

const host = Deno.hostname();
const hostDir = (home: string) => `${home}/sessions/${hostDirName(host)}`;
const linux = linuxBackend();
const bootId = linux.bootId();
const machineId = linux.machineId();
const pidNs = linux.pidNamespace();

/** The start token roster records for a live pid: starttime from /proc/<pid>/stat. */
function starttime(pid: number): string {
  const stat = parseStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
  if (stat === null) throw new Error(`Cannot parse /proc/${pid}/stat`);
  return stat.starttime;
}

function record(pid: number, token: string) {
  return JSON.stringify({
    schema: 1,
    session_pid: pid,
    pid_source: "flag",
    pid_verified: false,
    start_token: token,
    process_started_at: null,
    boot_id: bootId,
    machine_id: machineId,
    pid_ns: pidNs,
    host,
    agent: "bench",
    runtime: null,
    session_id: null,
    cwd: "/",
    tmux_pane: null,
    registered_at: new Date().toISOString(),
    registrar: { pid: Deno.pid, version: "bench", path: "bench" },
  });
}

/** Pids with no process behind them (below pid_max, as real dead pids are), for "dead" records. */
function freePids(n: number, avoid: Set<number>): number[] {
  const out: number[] = [];
  const pidMax = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());
  for (let pid = pidMax - 1; out.length < n && pid > 300; pid--) {
    if (avoid.has(pid)) continue;
    try {
      Deno.statSync(`/proc/${pid}`);
    } catch {
      out.push(pid);
    }
  }
  return out;
}

/** Writes a store: `alive` pids with their real tokens, and `dead` pids nobody has. */
function writeStore(home: string, alive: number[], dead: number[]) {
  const dir = hostDir(home);
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const pid of alive) {
    Deno.writeTextFileSync(`${dir}/${pid}.json`, record(pid, starttime(pid)), { mode: 0o600 });
  }
  for (const pid of dead) {
    Deno.writeTextFileSync(`${dir}/${pid}.json`, record(pid, "1"), { mode: 0o600 });
  }
}

function fmt(ms: number): string {
  return ms.toFixed(1);
}

async function compileBinaries(dir: string, hello: string): Promise<Cmd | null> {
  const compile = async (src: string, out: string) =>
    (await new Deno.Command(Deno.execPath(), {
      args: ["compile", "-A", ...V8_FLAGS, "--quiet", "-o", out, src],
      stdout: "null",
      stderr: "null",
    }).output()).code === 0;
  if (!(await compile(hello, `${dir}/hello`)) || !(await compile(MAIN, `${dir}/roster`))) {
    return null;
  }
  return [`${dir}/hello`];
}

async function main() {
  const opts = options(Deno.args);
  const work = await Deno.makeTempDir({ prefix: "roster-bench-" });
  const sleepers = new Sleepers();
  const rows: string[] = [];
  const notes: string[] = [];
  try {
    const hello = `${work}/hello.ts`;
    Deno.writeTextFileSync(hello, 'console.log("hello");\n');
    const deno = Deno.execPath();
    const flavours: { label: string; floor: Cmd; roster: Cmd }[] = [
      // Both started the way roster ships: the same V8 flags as the compiled binaries.
      {
        label: "deno run",
        floor: [deno, "run", "-A", ...V8_FLAGS, hello],
        roster: [deno, "run", "-A", ...V8_FLAGS, MAIN],
      },
    ];
    const compiled = opts.startup ? null : await compileBinaries(work, hello);
    if (compiled) flavours.push({ label: "compiled", floor: compiled, roster: [`${work}/roster`] });
    else if (!opts.startup) {
      notes.push(
        "compiled: skipped, no `deno compile` base here (set DENORT_BIN where one exists)",
      );
    }

    const maxSize = Math.max(...opts.sizes, 1_000);
    const needAlive = Math.max(maxSize / 2, 500) + 50;
    await sleepers.start(needAlive);
    const aliveAll = sleepers.pids;
    const deadAll = freePids(maxSize, new Set(aliveAll));
    const spare = aliveAll.slice(-50); // owners for the contention run, never in a store

    rows.push("| case | runner | median ms | min | max | vs floor | target | met |");
    rows.push("|---|---|---:|---:|---:|---:|---|---|");
    const line = (c: string, runner: string, s: Stats, floor: Stats, target = "", met = "") =>
      rows.push(
        `| ${c} | ${runner} | ${fmt(s.median)} | ${fmt(s.min)} | ${fmt(s.max)} | ` +
          `${(s.median / floor.median).toFixed(2)}x | ${target} | ${met} |`,
      );

    for (const f of flavours) {
      const empty = `${work}/empty-${f.label.replace(" ", "-")}`;
      const reg = `${work}/reg-${f.label.replace(" ", "-")}`;
      const big = `${work}/big-${f.label.replace(" ", "-")}`;
      Deno.mkdirSync(empty);
      const owner = String(spare[0]);
      const storeAlive = aliveAll.slice(0, 500);
      const storeDead = deadAll.slice(0, 500);
      const restore = () => writeStore(big, storeAlive, storeDead);
      const startCases = (prefix: string, roster: Cmd, home: string) => [
        { name: `${prefix}version`, cmd: [...roster, "--version"] },
        { name: `${prefix}list`, cmd: [...roster, "list", "--json", "--home", empty] },
        {
          name: `${prefix}register`,
          cmd: [...roster, "register", "--pid", owner, "--home", home, "--quiet"],
        },
        {
          name: `${prefix}register1k`,
          cmd: [...roster, "register", "--pid", owner, "--home", big, "--quiet"],
          before: restore,
        },
      ];
      const baseline = opts.baseline !== null && f.label === "deno run"
        ? startCases(
          "baseline ",
          [deno, "run", "-A", ...V8_FLAGS, `${opts.baseline}/main.ts`],
          `${reg}-baseline`,
        )
        : [];
      const start = await interleaved([
        { name: "floor", cmd: f.floor },
        ...startCases("", f.roster, reg),
        ...baseline,
      ], opts.runs);
      const floor = start.get("floor")!;
      const ok = (s: Stats, limit: number) => (s.median / floor.median <= limit ? "yes" : "no");
      line("hello world (floor)", f.label, floor, floor);
      const startUp: [string, string][] = [
        ["version", "`roster --version`"],
        ["list", "`roster list --json` (empty home)"],
        ["register", "`roster register` (empty store)"],
      ];
      for (const [name, label] of startUp) {
        line(label, f.label, start.get(name)!, floor, "<= 1.3x", ok(start.get(name)!, 1.3));
        const before = start.get(`baseline ${name}`);
        if (before) line(`${label}, baseline`, f.label, before, floor);
      }
      const before1k = start.get("baseline register1k");
      if (before1k) line("`roster register` (1,000 records), baseline", f.label, before1k, floor);
      const r1k = start.get("register1k")!;
      const rRatio = r1k.median / start.get("register")!.median;
      line(
        "`roster register` (1,000 records: 500 alive, 500 dead)",
        f.label,
        r1k,
        floor,
        "<= 1.5x empty store",
        `${rRatio <= 1.5 ? "yes" : "no"} (${rRatio.toFixed(2)}x)`,
      );

      if (opts.startup) continue;
      const listEmpty = start.get("list")!;
      for (const n of opts.sizes) {
        const home = `${work}/list-${n}-${f.label.replace(" ", "-")}`;
        writeStore(home, aliveAll.slice(0, n / 2), deadAll.slice(0, n - n / 2));
        const s = (await interleaved([
          { name: "floor", cmd: f.floor },
          { name: "list", cmd: [...f.roster, "list", "--all", "--json", "--home", home] },
        ], opts.runs)).get("list")!;
        const perRecordUs = ((s.median - listEmpty.median) * 1000) / n;
        const target = n === 10_000 ? "<= 100 us/record" : "";
        const met = n === 10_000 ? (perRecordUs <= 100 ? "yes" : "no") : "";
        line(
          `\`roster list --all --json\`, ${n.toLocaleString("en")} records (${
            perRecordUs.toFixed(1)
          } us/record)`,
          f.label,
          s,
          floor,
          target,
          met,
        );
      }

      // Contention: 50 concurrent registers against a store of 1,000 records.
      const cont = `${work}/cont-${f.label.replace(" ", "-")}`;
      writeStore(cont, storeAlive, storeDead);
      const started = performance.now();
      const times = await Promise.all(
        spare.map((pid) =>
          runOnce([...f.roster, "register", "--pid", String(pid), "--home", cont, "--quiet"])
        ),
      );
      const wall = performance.now() - started;
      const present = spare.filter((pid) => {
        try {
          return Deno.statSync(`${hostDir(cont)}/${pid}.json`).isFile;
        } catch {
          return false;
        }
      }).length;
      rows.push(
        `| 50 concurrent \`register\`, 1,000 records | ${f.label} | wall ${fmt(wall)} | ` +
          `p50 ${fmt(percentile(times, 50))} | p95 ${fmt(percentile(times, 95))} | | ` +
          `all 50 present | ${present === 50 ? "yes" : `no (${present})`} |`,
      );

      // Peak memory against the floor's.
      const memHome = `${work}/mem-${f.label.replace(" ", "-")}`;
      writeStore(memHome, aliveAll.slice(0, 500), deadAll.slice(0, 500));
      const floorMem = await peakKiB(f.floor);
      const listMem = await peakKiB([...f.roster, "list", "--all", "--json", "--home", memHome]);
      const regMem = await peakKiB(
        [...f.roster, "register", "--pid", owner, "--home", big, "--quiet"],
        5,
        restore,
      );
      if (floorMem === null || listMem === null || regMem === null) {
        notes.push("peak memory: skipped, /usr/bin/time (GNU time) is not installed");
      } else {
        for (
          const [name, kib] of [["`list --all --json`", listMem], ["`register`", regMem]] as const
        ) {
          const ratio = kib / floorMem;
          rows.push(
            `| peak RSS, ${name}, 1,000 records | ${f.label} | ${
              (kib / 1024).toFixed(1)
            } MiB | | | ` +
              `${ratio.toFixed(2)}x (floor ${(floorMem / 1024).toFixed(1)} MiB) | <= 1.3x | ` +
              `${ratio <= 1.3 ? "yes" : "no"} |`,
          );
        }
      }
    }
    console.log(rows.join("\n"));
    console.log(
      `\nMedians of ${opts.runs} interleaved runs; ${Deno.build.target}, ` +
        `${navigator.hardwareConcurrency} cores, deno ${Deno.version.deno}.`,
    );
    for (const n of notes) console.log(`- ${n}`);
  } finally {
    await sleepers.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
