/**
 * `deno task bench`: roster against its floors, every figure a ratio to a floor measured in
 * the same run: start-up against a hello world started the same way (from the bundle that
 * `deno compile` embeds, scripts/bundle.ts, built fresh into this run's work dir so it cannot be
 * stale, and, for information, from the sources; `activity`'s system calls also alone, from
 * scripts/floor/activity_floor.ts, to show what of a hook's cost is its I/O), `list` and `prune`
 * against small C programs (scripts/floor/*.c, built here with the system compiler) that read
 * the same files and /proc entries, and against the same calls made from Deno through FFI
 * (scripts/floor/*_ffi.ts: the runtime's own floor), each floor checked to judge the store as
 * roster does (a floor that disagrees is reported invalid, not as a ratio), `register` in a
 * big store against a store of one record,
 * and peak memory at 100,000 records against 1,000. Timings are medians of interleaved runs,
 * so a noisy machine moves roster and its floor together: compare ratios, not times. A ratio of
 * two cases of one run (a hook against the hello world, `register` in a big store against one)
 * is the median of their ratios round by round (pairedRatio); a per-record figure is a
 * difference of medians. Each run goes through scripts/floor/cputime.c, and the figures are CPU
 * time (user + system, from wait4's rusage), which a loaded shared machine moves far less than
 * the wall clock; without a C compiler they are wall-clock times.
 *
 * Flags: --runs N (start-up and register runs, default 15), --big-runs N (runs per store size,
 * default 5),
 * --sizes 1000,10000,100000, --quick (runs 5, big runs 3, sizes 1000,10000), --startup (only
 * the start-up rows: a hook command's figure in a few minutes).
 */
import { linuxBackend } from "../src/process/linux.ts";
import { parseStat } from "../src/process/linux_proc.ts";
import { placeDirName } from "../src/registry/layout.ts";
import { V8_FLAGS } from "./build.ts";
import { bundle, ENTRY } from "./bundle.ts";
import {
  activityFloor,
  aliveCount,
  buildFloors,
  ffiFloor,
  recordNames,
  stdoutOf,
} from "./floor/floors.ts";
import { median, pairedRatio } from "./stats.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** Live processes behind "alive" records: half the store, at most this many. */
const ALIVE_CAP = 5_000;
const CONCURRENT = 200;

interface Options {
  runs: number;
  bigRuns: number;
  sizes: number[];
  startupOnly: boolean;
}

function options(argv: string[]): Options {
  const opts: Options = {
    runs: 15,
    bigRuns: 5,
    sizes: [1_000, 10_000, 100_000],
    startupOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--runs") opts.runs = Math.max(3, Number(argv[++i]));
    else if (argv[i] === "--big-runs") opts.bigRuns = Math.max(1, Number(argv[++i]));
    else if (argv[i] === "--sizes") opts.sizes = argv[++i].split(",").map(Number);
    else if (argv[i] === "--startup") opts.startupOnly = true;
    else if (argv[i] === "--quick") {
      Object.assign(opts, { runs: 5, bigRuns: 3, sizes: [1_000, 10_000] });
    } else throw new Error(`Unknown flag: ${argv[i]}`);
  }
  return opts;
}

/** One command line: the program and its arguments. */
type Cmd = string[];

interface Case {
  name: string;
  cmd: Cmd;
  /** Untimed, before every run of this case (to restore a store). */
  before?: () => void;
  /** Exit codes that are answers, not failures (check's 3, continuation-check's 10-13). */
  codes?: number[];
}

/** scripts/floor/cputime.c once built: every run goes through it. */
let stopwatch: string | null = null;

/** One run's figures: CPU ms (wall ms without the stopwatch), wall ms, peak RSS KiB. */
interface Measured {
  ms: number;
  wallMs: number;
  rssKiB: number | null;
}

async function measure(c: Case): Promise<Measured> {
  const started = performance.now();
  const cmd = stopwatch === null ? c.cmd : [stopwatch, ...c.cmd];
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: "null",
    stdout: stopwatch === null ? "null" : "piped",
    stderr: "piped",
  }).output();
  const wallMs = performance.now() - started;
  if (!(c.codes ?? [0]).includes(out.code)) {
    throw new Error(
      `${c.cmd.join(" ")} exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  if (stopwatch === null) return { ms: wallMs, wallMs, rssKiB: null };
  const [wall, cpu, rss] = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
  return { ms: cpu / 1000, wallMs: wall / 1000, rssKiB: rss };
}

/**
 * Medians of interleaved runs: `get` the measure (CPU ms with the stopwatch), `wall` the clock;
 * `ratio` and `wallRatio` one case's against another's, round by round (pairedRatio).
 */
interface Timings {
  get(name: string): number | undefined;
  wall(name: string): number;
  ratio(name: string, base: string): number;
  wallRatio(name: string, base: string): number;
}

/** Median ms of each case, run round-robin so drift on a shared machine hits them alike. */
async function interleaved(cases: Case[], runs: number): Promise<Timings> {
  const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  const clocks = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (const c of cases) {
    c.before?.();
    await measure(c); // warm-up: module cache, page cache
  }
  for (let r = 0; r < runs; r++) {
    for (const c of cases) {
      c.before?.();
      const m = await measure(c);
      samples.get(c.name)!.push(m.ms);
      clocks.get(c.name)!.push(m.wallMs);
    }
  }
  const measured = new Map([...samples].map(([k, v]) => [k, median(v)]));
  const clock = new Map([...clocks].map(([k, v]) => [k, median(v)]));
  return {
    get: (name) => measured.get(name),
    wall: (name) => clock.get(name)!,
    ratio: (name, base) => pairedRatio(samples.get(name)!, samples.get(base)!),
    wallRatio: (name, base) => pairedRatio(clocks.get(name)!, clocks.get(base)!),
  };
}

/**
 * Peak resident memory in KiB, median of `runs`: from the stopwatch, else through GNU time;
 * null with neither.
 */
async function peakKiB(cmd: Cmd, runs: number): Promise<number | null> {
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (stopwatch !== null) {
      const m = await measure({ name: "rss", cmd });
      if (m.rssKiB === null) return null;
      values.push(m.rssKiB);
      continue;
    }
    try {
      const out = await new Deno.Command("/usr/bin/time", {
        args: ["-f", "%M", ...cmd],
        stdout: "null",
        stderr: "piped",
      }).output();
      const lines = new TextDecoder().decode(out.stderr).trim().split("\n");
      const kib = Number(lines[lines.length - 1]);
      if (!out.success || !Number.isFinite(kib)) return null;
      values.push(kib);
    } catch {
      return null;
    }
  }
  return median(values);
}

/**
 * Live processes to stand behind "alive" records: scripts/floor/sleepers.c forks them (its
 * children die with it), or where there is no C compiler, one bash that starts `sleep`s.
 */
class Sleepers {
  pids: number[] = [];
  #parent: Deno.ChildProcess | null = null;

  async start(n: number, forker: string | null) {
    if (n === 0) return;
    this.#parent = new Deno.Command(forker ?? "bash", {
      args: forker
        ? [String(n)]
        : ["-c", `for i in $(seq ${n}); do sleep 3600 & echo $!; done; wait`],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = this.#parent.stdout.pipeThrough(new TextDecoderStream()).getReader();
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
    if (this.pids.length < n) throw new Error(`Started ${this.pids.length} of ${n} processes`);
  }

  async stop() {
    for (const pid of this.pids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    if (this.#parent) {
      try {
        this.#parent.kill("SIGKILL");
      } catch { /* gone */ }
      await this.#parent.status;
      await this.#parent.stdout.cancel().catch(() => {});
    }
  }
}

const host = Deno.hostname();
const linux = linuxBackend();
const bootId = linux.bootId();
const machineId = linux.machineId();
const pidNs = linux.pidNamespace();
/** Where roster writes this process's records (registry/layout.ts): its place's directory. */
const hostDir = (home: string) =>
  `${home}/places/${placeDirName({ host, machineId, pidNs, os: Deno.build.os })}`;
const encoder = new TextEncoder();

/** The start token roster records for a live pid: starttime from /proc/<pid>/stat. */
function starttime(pid: number): string {
  const stat = parseStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
  if (stat === null) throw new Error(`Cannot parse /proc/${pid}/stat`);
  return stat.starttime;
}

/** A record as `register` writes it (pretty-printed), registered `ageS` seconds ago. */
function record(pid: number, token: string, ageS: number, verified = false) {
  return JSON.stringify(
    {
      schema: 1,
      session_pid: pid,
      pid_source: "flag",
      pid_verified: verified,
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
      registered_at: new Date(Date.now() - ageS * 1000).toISOString(),
      registrar: { pid: Deno.pid, version: "bench", path: "bench" },
    },
    null,
    2,
  ) + "\n";
}

/**
 * Pids no process holds, for "dead" records: free ones below pid_max first (as real dead
 * pids are), then pids above it (valid names no process can ever hold).
 */
function freePids(n: number, avoid: Set<number>): number[] {
  const used = new Set(avoid);
  for (const e of Deno.readDirSync("/proc")) if (/^\d+$/.test(e.name)) used.add(Number(e.name));
  const pidMax = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());
  const out: number[] = [];
  for (let pid = pidMax - 1; out.length < n && pid > 300; pid--) if (!used.has(pid)) out.push(pid);
  for (let pid = pidMax + 1; out.length < n; pid++) out.push(pid);
  return out;
}

function writeRecords(home: string, alive: number[], dead: number[]) {
  const dir = hostDir(home);
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let age = 0;
  for (const pid of alive) {
    Deno.writeFileSync(`${dir}/${pid}.json`, encoder.encode(record(pid, starttime(pid), age++)), {
      mode: 0o600,
    });
  }
  for (const pid of dead) {
    Deno.writeFileSync(`${dir}/${pid}.json`, encoder.encode(record(pid, "1", age++)), {
      mode: 0o600,
    });
  }
}

const fmt = (x: number, digits = 1) => x.toFixed(digits);
const ratio = (x: number) => `${x.toFixed(2)}x`;
const n = (x: number) => x.toLocaleString("en");
const verdict = (value: number, limit: number) =>
  value <= limit ? "yes" : `no (${((value / limit - 1) * 100).toFixed(0)}% over)`;

async function main() {
  const opts = options(Deno.args);
  const loadStart = Deno.loadavg().map((x) => x.toFixed(1)).join(" ");
  const work = await Deno.makeTempDir({ prefix: "roster-bench-" });
  const sleepers = new Sleepers();
  const rows: string[] = [];
  const notes: string[] = [];
  const row = (...cells: string[]) => {
    // Rows without a wall-clock ratio (memory, counts) leave that column empty.
    if (cells.length === 6) cells.splice(4, 0, "");
    rows.push(`| ${cells.join(" | ")} |`);
    console.error(`bench: ${cells.join("  ")}`); // progress: a full run takes minutes
  };
  /** A floor that judged the store otherwise than roster: said once; its ratios withheld. */
  const invalid = (why: string) => {
    const line = `invalid floor: ${why}; its ratios are not reported`;
    console.error(`bench: ${line}`);
    notes.push(line);
  };
  const INVALID = "invalid: the floor disagrees with roster";
  /**
   * The rows of one per-record case (cases `name` and `empty` for roster, `c`/`cEmpty` and
   * `ffi`/`ffiEmpty` for the floors): roster against the C floor (the target's ratio), the Deno
   * FFI floor against the C floor (the runtime's own cost for the same calls), and roster
   * against the FFI floor (what roster's own JavaScript adds). `ok.c` is null without a C
   * compiler, else whether the C floor agreed with roster; `ok.ffi` likewise.
   */
  const compareFloors = (
    t: Timings,
    size: number,
    label: string,
    detail: string,
    [name, empty]: [string, string],
    ok: { c: boolean | null; ffi: boolean; target: number | null },
  ) => {
    const per = (a: string, aEmpty: string) => ((t.get(a)! - t.get(aEmpty)!) * 1000) / size;
    const wallRatio = (a: string, aEmpty: string, b: string, bEmpty: string) =>
      ratio((t.wall(a) - t.wall(aEmpty)) / (t.wall(b) - t.wall(bEmpty)));
    const us = per(name, empty);
    const ffiUs = per("ffi", "ffiEmpty");
    const target = ok.target === null ? "" : `<= ${ok.target.toFixed(1)}x`;
    if (ok.c === null) {
      row(`${label} (${detail}), per record`, `${fmt(us)} us`, "", "", "", target, "");
    } else {
      const cUs = per("c", "cEmpty");
      row(
        `${label} (${detail}), per record`,
        `${fmt(us)} us`,
        `${fmt(cUs)} us`,
        ok.c ? ratio(us / cUs) : "invalid",
        ok.c ? wallRatio(name, empty, "c", "cEmpty") : "",
        target,
        !ok.c ? INVALID : ok.target === null ? "" : verdict(us / cUs, ok.target),
      );
      const both = ok.c && ok.ffi;
      row(
        `${label}: the Deno FFI floor against the C floor, per record`,
        `${fmt(ffiUs)} us`,
        `${fmt(cUs)} us`,
        both ? ratio(ffiUs / cUs) : "invalid",
        both ? wallRatio("ffi", "ffiEmpty", "c", "cEmpty") : "",
        "",
        both ? "" : INVALID,
      );
    }
    row(
      `${label}: roster against the Deno FFI floor, per record`,
      `${fmt(us)} us`,
      `${fmt(ffiUs)} us`,
      ok.ffi ? ratio(us / ffiUs) : "invalid",
      ok.ffi ? wallRatio(name, empty, "ffi", "ffiEmpty") : "",
      "",
      ok.ffi ? "" : INVALID,
    );
  };
  try {
    Deno.mkdirSync(`${work}/bin`);
    const floors = await buildFloors(`${work}/bin`);
    if (typeof floors === "string") {
      notes.push(`C floors and CPU times: skipped, ${floors}; figures are wall-clock times`);
    } else stopwatch = floors.cputime;
    // The bundle first: a bench of a tree whose bundle fails measures nothing.
    const bundled = `${work}/bundle`;
    await bundle({ out: bundled, verbose: false, help: false });
    const hello = `${work}/hello.ts`;
    Deno.writeTextFileSync(hello, 'console.log("hello");\n');
    const deno = Deno.execPath();
    // Both started the way roster ships: the same V8 flags as the compiled binaries.
    const floorCmd: Cmd = [deno, "run", "-A", ...V8_FLAGS, hello];
    const roster = (...args: string[]): Cmd => [deno, "run", "-A", ...V8_FLAGS, MAIN, ...args];
    const fromBundle = (...args: string[]): Cmd => [
      deno,
      "run",
      "-A",
      ...V8_FLAGS,
      `${bundled}/${ENTRY}`,
      ...args,
    ];

    // One case a size: two of one name would be one case's samples, paired with themselves.
    const sizes = [...new Set(opts.sizes)].sort((a, b) => a - b);
    const maxSize = sizes[sizes.length - 1];
    const aliveFor = (size: number) => Math.min(Math.floor(size / 2), ALIVE_CAP);
    // Start-up alone needs only the two spare owners.
    const aliveMax = opts.startupOnly ? 0 : aliveFor(Math.max(maxSize, 10_000));
    await sleepers.start(
      aliveMax + (opts.startupOnly ? 0 : CONCURRENT) + 2,
      typeof floors === "string" ? null : floors.sleepers,
    );
    const aliveAll = sleepers.pids.slice(0, aliveMax);
    const spare = sleepers.pids.slice(aliveAll.length); // owners never in a store
    const deadAll = freePids(maxSize, new Set(sleepers.pids));

    rows.push("| case | roster | floor | ratio | ratio (wall) | target | met |");
    rows.push("|---|---:|---:|---:|---:|---|---|");

    // ---- Start-up of the hook commands against a hello world -------------------------------
    const one = `${work}/one`;
    writeRecords(one, [spare[0]], []);
    // whoami's caller is this process's child: this process is the registered session.
    Deno.writeTextFileSync(
      `${hostDir(one)}/${Deno.pid}.json`,
      record(Deno.pid, starttime(Deno.pid), 0, true),
      { mode: 0o600 },
    );
    const unreg = spare[1];
    const unregRecord = record(unreg, starttime(unreg), 0);
    const restoreUnreg = () =>
      Deno.writeTextFileSync(`${hostDir(one)}/${unreg}.json`, unregRecord, { mode: 0o600 });
    // Each hook command twice, from the bundle and from the sources, in the same rounds.
    const verdicts = [0, 10, 11, 12, 13]; // continuation-check's answers
    const hooks: [string, string, string[], number[]?][] = [
      ["version", "`roster --version`", ["--version"]],
      ["register", "`register --quiet`", ["register", "--pid", `${spare[0]}`, "--home", one, "-q"]],
      ["unregister", "`unregister --quiet`", [
        "unregister",
        "--pid",
        `${unreg}`,
        "--home",
        one,
        "-q",
      ]],
      ["check", "`check PID`", ["check", `${spare[0]}`, "--home", one]],
      ["whoami", "`whoami`", ["whoami", "--home", one]],
      // The same call again each run: its record is rewritten, the call not added twice.
      ["activity", "`activity --tool-start ID --quiet`", [
        "activity",
        "--tool-start",
        "bench",
        "--pid",
        `${spare[0]}`,
        "--home",
        one,
        "-q",
      ]],
      ["continuation-check", "`continuation-check --key K`", [
        "continuation-check",
        "--key",
        "bench",
        "--home",
        one,
      ], verdicts],
    ];
    const start = await interleaved([
      { name: "floor", cmd: floorCmd },
      // activity's own calls with none of roster's code: what of its cost is the I/O it does.
      { name: "activity I/O", cmd: activityFloor(hostDir(one), spare[0], "bench") },
      ...hooks.flatMap(([name, _label, args, codes]): Case[] => {
        const before = name === "unregister" ? restoreUnreg : undefined;
        return [
          { name: `bundle ${name}`, cmd: fromBundle(...args), before, codes },
          { name: `source ${name}`, cmd: roster(...args), before, codes },
        ];
      }),
    ], opts.runs);
    const floor = start.get("floor")!;
    notes.push(
      `hello world: ${fmt(start.wall("floor"))} ms wall clock, ${fmt(floor)} ms ` +
        `${stopwatch === null ? "wall" : "CPU"} (median); load average at the start ${loadStart}`,
    );
    row("hello world, `deno run` (start-up floor)", `${fmt(floor)} ms`, "", "", "", "");
    // The target's rows: the bundle is what `deno compile` embeds (scripts/build.ts).
    for (const [name, label] of hooks) {
      const r = start.ratio(`bundle ${name}`, "floor");
      row(
        `start-up: ${label}, the bundle (what \`deno compile\` embeds)`,
        `${fmt(start.get(`bundle ${name}`)!)} ms`,
        `${fmt(floor)} ms`,
        ratio(r),
        ratio(start.wallRatio(`bundle ${name}`, "floor")),
        "<= 1.25x",
        verdict(r, 1.25),
      );
    }
    row(
      "start-up: `activity`'s system calls alone, from a minimal script (its I/O floor)",
      `${fmt(start.get("activity I/O")!)} ms`,
      `${fmt(floor)} ms`,
      ratio(start.ratio("activity I/O", "floor")),
      ratio(start.wallRatio("activity I/O", "floor")),
      "",
      "",
    );
    notes.push(
      `\`activity\` from the bundle against its I/O floor: ` +
        `${ratio(start.ratio("bundle activity", "activity I/O"))} (roster's own code: loading it ` +
        "and running it)",
    );
    // The same rows as the ratio of the two medians, the figure before pairedRatio: beside it,
    // a reader sees what pairing the rounds moved (the middle, or only the spread).
    notes.push(
      "the bundle's rows as a ratio of the two medians: " +
        hooks.map(([name]) => `${name} ${ratio(start.get(`bundle ${name}`)! / floor)}`).join(", "),
    );
    // For information: `deno run main.ts`, the TypeScript sources (tests, `deno task roster`).
    for (const [name, label] of hooks) {
      row(
        `start-up: ${label}, from the sources`,
        `${fmt(start.get(`source ${name}`)!)} ms`,
        `${fmt(floor)} ms`,
        ratio(start.ratio(`source ${name}`, "floor")),
        ratio(start.wallRatio(`source ${name}`, "floor")),
        "",
        "",
      );
    }

    const report = () => {
      console.log(rows.join("\n"));
      console.log(
        `\n${stopwatch === null ? "Wall-clock" : "CPU (user + system)"} medians of ${opts.runs} ` +
          `interleaved runs for start-up and register, ${opts.bigRuns} ` +
          `for list and prune (3 at 100,000); \`deno task bench ${Deno.args.join(" ")}\`; ` +
          `${Deno.build.target}, ` +
          `${navigator.hardwareConcurrency} cores, deno ${Deno.version.deno}, ` +
          `load average ${Deno.loadavg().map((x) => x.toFixed(1)).join(" ")} at the end.`,
      );
      for (const note of notes) console.log(`- ${note}`);
    };
    if (opts.startupOnly) return report();

    // ---- Stores of every size -------------------------------------------------------------
    const emptyHome = `${work}/empty`;
    Deno.mkdirSync(hostDir(emptyHome), { recursive: true, mode: 0o700 });
    const stores = new Map<number, string>();
    for (const size of sizes) {
      const home = `${work}/s${size}`;
      const alive = aliveFor(size);
      writeRecords(home, aliveAll.slice(0, alive), deadAll.slice(0, size - alive));
      stores.set(size, home);
    }

    // ---- list --all --json, per record against the C floor and the Deno FFI floor ---------
    for (const size of sizes) {
      const home = stores.get(size)!;
      const cases: Case[] = [
        { name: "empty", cmd: roster("list", "--all", "--json", "--home", emptyHome) },
        { name: "list", cmd: roster("list", "--all", "--json", "--home", home) },
        { name: "ffiEmpty", cmd: ffiFloor("list", hostDir(emptyHome)) },
        { name: "ffi", cmd: ffiFloor("list", hostDir(home)) },
      ];
      if (typeof floors !== "string") {
        cases.push({ name: "cEmpty", cmd: [floors.list, hostDir(emptyHome)] });
        cases.push({ name: "c", cmd: [floors.list, hostDir(home)] });
      }
      const t = await interleaved(
        cases,
        size >= 100_000 ? Math.min(opts.bigRuns, 3) : opts.bigRuns,
      );
      const label = `\`list --all --json\`, ${n(size)} records`;
      // A floor must call alive what roster calls alive: one run of each, outside the timings.
      const rosterAlive = aliveCount(
        await stdoutOf(roster("list", "--all", "--json", "--home", home)),
      );
      const agrees = async (floor: string, cmd: Cmd) => {
        const alive = aliveCount(await stdoutOf(cmd));
        if (alive === rosterAlive) return true;
        invalid(`${floor} (${label}) calls ${n(alive)} records alive, roster ${n(rosterAlive)}`);
        return false;
      };
      const ffiOk = await agrees("the Deno FFI list floor", ffiFloor("list", hostDir(home)));
      const cOk = typeof floors !== "string" &&
        await agrees("the C list floor", [floors.list, hostDir(home)]);
      compareFloors(t, size, label, `${n(aliveFor(size))} alive`, ["list", "empty"], {
        c: typeof floors === "string" ? null : cOk,
        ffi: ffiOk,
        target: size >= 10_000 ? 2.0 : null,
      });
    }

    // ---- list printing nothing: every row filtered out --------------------------------------
    {
      const home = stores.get(maxSize)!;
      const t = await interleaved([
        { name: "empty", cmd: roster("list", "--all", "--json", "--home", emptyHome) },
        { name: "none", cmd: roster("list", "--agent", "nobody", "--home", home) },
      ], Math.min(opts.bigRuns, 3));
      const us = ((t.get("none")! - t.get("empty")!) * 1000) / maxSize;
      row(
        `\`list --agent nobody\` (prints nothing), ${n(maxSize)} records, per record`,
        `${fmt(us)} us`,
        "",
        "",
        "",
        "",
      );
    }

    // ---- register in a big store against a store of one record ------------------------------
    {
      const cases: Case[] = [
        { name: "one", cmd: roster("register", "--pid", `${spare[0]}`, "--home", one, "-q") },
      ];
      for (const size of sizes) {
        cases.push({
          name: `${size}`,
          cmd: roster("register", "--pid", `${spare[2]}`, "--home", stores.get(size)!, "-q"),
        });
      }
      const t = await interleaved(cases, opts.runs);
      for (const size of sizes) {
        const r = t.ratio(`${size}`, "one");
        const target = size === maxSize ? "<= 1.2x" : "";
        row(
          `\`register --quiet\`, ${n(size)} records, against 1 record`,
          `${fmt(t.get(`${size}`)!)} ms`,
          `${fmt(t.get("one")!)} ms`,
          ratio(r),
          ratio(t.wallRatio(`${size}`, "one")),
          target,
          target ? verdict(r, 1.2) : "",
        );
      }
    }

    // ---- prune at 10,000 records, half dead, per record against the C and Deno FFI floors --
    {
      const size = 10_000;
      const alive = aliveAll.slice(0, size / 2);
      const dead = deadAll.slice(0, size / 2);
      const home = `${work}/prune`;
      const cHome = `${work}/prune-c`;
      const ffiHome = `${work}/prune-ffi`;
      for (const h of [home, cHome, ffiHome]) writeRecords(h, alive, dead);
      const deadBytes = dead.map((pid, i) => [pid, encoder.encode(record(pid, "1", i))] as const);
      const restore = (h: string) => () => {
        for (const [pid, bytes] of deadBytes) {
          Deno.writeFileSync(`${hostDir(h)}/${pid}.json`, bytes, { mode: 0o600 });
        }
      };
      const cases: Case[] = [
        { name: "empty", cmd: roster("prune", "--home", emptyHome) },
        { name: "prune", cmd: roster("prune", "--home", home), before: restore(home) },
        { name: "ffiEmpty", cmd: ffiFloor("prune", hostDir(emptyHome)) },
        { name: "ffi", cmd: ffiFloor("prune", hostDir(ffiHome)), before: restore(ffiHome) },
      ];
      if (typeof floors !== "string") {
        cases.push({ name: "cEmpty", cmd: [floors.prune, hostDir(emptyHome)] });
        cases.push({ name: "c", cmd: [floors.prune, hostDir(cHome)], before: restore(cHome) });
      }
      const t = await interleaved(cases, opts.bigRuns);
      // After the last round every store has been pruned: a floor must have kept exactly what
      // roster kept (the live half), or its later runs removed fewer records than the bench
      // divides by.
      const label = "`prune`, 10,000 records";
      const kept = recordNames(hostDir(home));
      const live = alive.map((pid) => `${pid}.json`).sort();
      if (kept.join() !== live.join()) {
        notes.push(`roster's prune kept ${n(kept.length)} records of the ${n(live.length)} live`);
      }
      const agrees = (floor: string, h: string) => {
        const floorKept = recordNames(hostDir(h));
        if (floorKept.join() === kept.join()) return true;
        const missing = kept.filter((name) => !floorKept.includes(name)).length;
        invalid(
          `${floor} (${label}) kept ${n(floorKept.length)} records, roster ${n(kept.length)} ` +
            `(${n(missing)} of roster's missing)`,
        );
        return false;
      };
      compareFloors(t, size, label, "half dead", ["prune", "empty"], {
        c: typeof floors === "string" ? null : agrees("the C prune floor", cHome),
        ffi: agrees("the Deno FFI prune floor", ffiHome),
        target: 2.0,
      });
    }

    // ---- peak memory -------------------------------------------------------------------------
    {
      const memRuns = 3;
      const floorKiB = await peakKiB(floorCmd, memRuns);
      const kib = new Map<number, number | null>();
      for (const size of sizes) {
        kib.set(
          size,
          await peakKiB(roster("list", "--all", "--json", "--home", stores.get(size)!), memRuns),
        );
      }
      const none = await peakKiB(
        roster("list", "--agent", "nobody", "--home", stores.get(maxSize)!),
        memRuns,
      );
      if (floorKiB === null || [...kib.values()].includes(null) || none === null) {
        notes.push("peak memory: skipped, /usr/bin/time (GNU time) is not installed");
      } else {
        const mib = (k: number) => `${fmt(k / 1024)} MiB`;
        row("peak RSS, hello world (floor)", mib(floorKiB), "", "", "", "");
        const base = kib.get(sizes[0])!;
        for (const size of sizes) {
          const r = kib.get(size)! / base;
          const target = size === maxSize && size !== sizes[0] ? "<= 1.3x" : "";
          row(
            `peak RSS, \`list --all --json\`, ${n(size)} records, against ${n(sizes[0])}`,
            mib(kib.get(size)!),
            mib(base),
            ratio(r),
            target,
            target ? verdict(r, 1.3) : "",
          );
        }
        row(
          `peak RSS, \`list --agent nobody\`, ${n(maxSize)} records, against ${n(sizes[0])} listed`,
          mib(none),
          mib(base),
          ratio(none / base),
          "",
          "",
        );
      }
    }

    // ---- contention ---------------------------------------------------------------------------
    {
      const home = `${work}/contention`;
      writeRecords(home, aliveAll.slice(0, 500), deadAll.slice(0, 500));
      const owners = spare.slice(2, 2 + CONCURRENT);
      const started = performance.now();
      const results = await Promise.all(owners.map(async (pid) => {
        const out = await new Deno.Command(deno, {
          args: roster("register", "--pid", `${pid}`, "--home", home, "-q").slice(1),
          stdin: "null",
          stdout: "null",
          stderr: "piped",
        }).output();
        return { code: out.code, stderr: new TextDecoder().decode(out.stderr).trim() };
      }));
      const wall = performance.now() - started;
      const failures = results.filter((r) => r.code !== 0);
      const failed = failures.length;
      if (failed > 0) notes.push(`first concurrent register failure: ${failures[0].stderr}`);
      const names = new Set<string>();
      for (const e of Deno.readDirSync(hostDir(home))) names.add(e.name);
      const lost = owners.filter((pid) => !names.has(`${pid}.json`)).length;
      row(
        `${CONCURRENT} concurrent \`register\`, 1,000 records`,
        `wall ${fmt(wall / 1000, 2)} s`,
        "",
        "",
        "0 failures, 0 lost",
        failed === 0 && lost === 0 ? "yes" : `no (${failed} failed, ${lost} lost)`,
      );
    }

    report();
  } finally {
    await sleepers.stop();
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await main();
