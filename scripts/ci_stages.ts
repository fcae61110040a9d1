/**
 * The test suite's stages, run one after another, each to its end even when one before it
 * failed: the gates (fmt, lint, type check, layers), the parallel run, tests/serial/, the real
 * harnesses, and the Windows tests under Wine. `deno task ok` runs them all, `deno task test`
 * the test stages; .ci/run runs `deno task ok`.
 *
 *   deno run -A scripts/ci_stages.ts [--tests] [--bound-scale N] [--stages FILE] [STAGE...]
 *
 * (--stages FILE: a JSON array of stages to run instead of STAGES, for tests of this runner.)
 *
 * Each stage has a time bound (scaled by --bound-scale or $ROSTER_CI_BOUND_SCALE, for a slow
 * host): when it is hit, the stage's processes are ended (its process group, then every process
 * that carries the stage's marker in its environment: tmux servers and wineserver leave the
 * group) and the tests it stopped in are named. Every stage's counts are printed, and the last
 * line is the total, `N passed, M failed` (Deno's test counts, plus one per gate); the exit
 * status is 1 when anything failed.
 */

export interface Stage {
  name: string;
  /** The command, as argv; `deno` is this Deno. */
  cmd: string[];
  /** How long it may run, in minutes, before it is ended (on a quiet machine it takes far less). */
  boundMin: number;
  /** A gate counts as one check; a test stage counts Deno's tests. */
  gate?: boolean;
}

export const STAGES: readonly Stage[] = [
  { name: "fmt", cmd: ["deno", "fmt", "--check"], boundMin: 5, gate: true },
  { name: "lint", cmd: ["deno", "lint"], boundMin: 5, gate: true },
  {
    name: "check",
    cmd: ["deno", "check", "main.ts", "scripts/", "tests/"],
    boundMin: 10,
    gate: true,
  },
  {
    name: "layers",
    cmd: ["deno", "run", "--allow-read", "scripts/layers.ts"],
    boundMin: 5,
    gate: true,
  },
  {
    name: "parallel",
    cmd: [
      "deno",
      "test",
      "--allow-all",
      "--parallel",
      "--ignore=tests/serial,tests/harness",
      "tests/",
    ],
    boundMin: 45,
  },
  { name: "serial", cmd: ["deno", "test", "--allow-all", "tests/serial/"], boundMin: 15 },
  {
    name: "harness",
    cmd: ["deno", "test", "--allow-all", "--parallel", "tests/harness/"],
    boundMin: 25,
  },
  { name: "wine", cmd: ["bash", "scripts/wine/test.sh"], boundMin: 20 },
];

export interface Counts {
  passed: number;
  failed: number;
}

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** A log's lines as a reader sees them: without colours or carriage returns. */
function plainLines(out: string): string[] {
  return out.replace(ANSI, "").replaceAll("\r", "").split("\n");
}

/** Deno's summaries in `out` ("ok | 41 passed (120 steps) | 0 failed (3s)"), summed; null if none. */
export function summaryCounts(out: string): Counts | null {
  let found = false;
  const sum = { passed: 0, failed: 0 };
  for (const line of plainLines(out)) {
    const m = /^(?:ok|FAILED) \| (\d+) passed(?: \([^)]*\))? \| (\d+) failed/.exec(line.trim());
    if (m === null) continue;
    found = true;
    sum.passed += Number(m[1]);
    sum.failed += Number(m[2]);
  }
  return found ? sum : null;
}

/**
 * A test's name and file from a header of Deno's ERRORS and FAILURES lists: "NAME =>
 * ./FILE:LINE:COL", or "./FILE (uncaught error)" for an error no test caught; else null.
 */
function failureHeader(line: string): string | null {
  const test = /^(.+) => (\S+):\d+:\d+$/.exec(line);
  if (test !== null) return `${test[1]} (${test[2].replace(/^\.\//, "")})`;
  const loose = /^(\S+) \(uncaught error\)$/.exec(line);
  return loose === null ? null : `uncaught error (${loose[1].replace(/^\.\//, "")})`;
}

/**
 * The tests Deno's FAILURES list in `out` names ("name => ./file:line:col"), each once: the
 * total's lines name them too, for a reader who sees only the end of the log. The list is the
 * last one in `out` (a stage runs Deno's test runner once): an error message that holds a
 * log of its own (a test of a test runner) comes before it.
 */
export function failedTests(out: string): string[] {
  const lines = plainLines(out).map((l) => l.trim());
  const at = lines.lastIndexOf("FAILURES");
  const names: string[] = [];
  for (const line of at < 0 ? [] : lines.slice(at + 1)) {
    if (/^(?:ok|FAILED) \| /.test(line)) break;
    const name = failureHeader(line);
    if (name !== null && !names.includes(name)) names.push(name);
  }
  return names;
}

/** How many lines of each failure's error the end of the log repeats. */
const ERROR_LINES = 12;

/**
 * The first lines of each error in Deno's ERRORS list in `out`, under its test's name: the
 * end of the log repeats them, so that a reader who sees only its tail (a CI page) still
 * learns why each test failed, not only which. Only the headers of the tests the FAILURES list
 * names (`failedNames`, failedTests of `out`: passed in where the caller has it) start an entry (a
 * header inside a message is the message's); stack frames and code excerpts are left out.
 */
export function failureMessages(
  out: string,
  failedNames: readonly string[] = failedTests(out),
): string[][] {
  const failed = new Set(failedNames);
  const lines = plainLines(out).map((l) => l.trimEnd());
  const start = lines.findIndex((l) => l.trim() === "ERRORS");
  const end = lines.findLastIndex((l) => l.trim() === "FAILURES");
  const found = new Map<string, string[]>();
  let current: string[] | null = null;
  let cut = false;
  for (const line of start < 0 || end < start ? [] : lines.slice(start + 1, end)) {
    const name = failureHeader(line.trim());
    if (name !== null && failed.has(name)) {
      current = [name];
      cut = false;
      found.set(name, current);
    } else if (current === null) continue;
    else if (/^\s+at /.test(line)) current = null; // the stack: where, not why
    else if (/^\s*\^$/.test(line)) {
      if (!cut) current.pop(); // the code excerpt above its caret
    } else if (current.length <= ERROR_LINES) current.push(line);
    else cut = true;
  }
  return [...found.values()].map((entry) => {
    while (entry.length > 1 && entry.at(-1)!.trim() === "") entry.pop();
    return entry;
  });
}

/**
 * The tests `out` shows started and not finished: Deno's "'NAME' has been running for over"
 * warnings (parallel runs print nothing else for a running test) without a later result line for
 * NAME, and the last line of a serial run that ends in "..." with no result (a test, or a step,
 * still running).
 */
export function unfinishedTests(out: string): string[] {
  const lines = plainLines(out);
  const running = new Map<string, number>();
  lines.forEach((line, i) => {
    const m = /^'(.*)' has been running for over/.exec(line.trim());
    if (m !== null) running.set(m[1], i);
  });
  const names: string[] = [];
  for (const [name, at] of running) {
    const done = lines.slice(at + 1).some((l) =>
      l.includes(`${name} ... ok`) || l.includes(`${name} ... FAILED`) ||
      l.includes(`${name} ... ignored`)
    );
    if (!done) names.push(name);
  }
  const last = lines.map((l) => l.trimEnd()).filter((l) => l.trim() !== "").at(-1) ?? "";
  if (/ \.\.\.$/.test(last)) {
    // A serial run prints the test's name, then each step's, as they start: name them all.
    const open: string[] = [];
    for (const l of lines.map((l) => l.trimEnd())) {
      const m = /^(\s*)(.*) \.\.\.$/.exec(l);
      if (m === null) continue;
      const depth = m[1].length / 2;
      open.length = Math.min(open.length, depth);
      open[depth] = m[2].replace(/^\.\/\S+ => /, "");
    }
    const chain = open.filter(Boolean).join(" > ");
    if (chain !== "" && !names.includes(chain)) names.push(chain);
  }
  return names;
}

/** Pids of processes whose environment holds `marker` (`NAME=VALUE`), from /proc; [] elsewhere. */
export function markedPids(marker: string): number[] {
  const needle = new TextEncoder().encode(`\0${marker}\0`);
  const out: number[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/proc")];
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    let env: Uint8Array;
    try {
      env = Deno.readFileSync(`/proc/${e.name}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    const padded = new Uint8Array(env.length + 1);
    padded.set(env, 1);
    if (indexOf(padded, needle) !== -1) out.push(Number(e.name));
  }
  return out;
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function kill(pid: number, signal: Deno.Signal) {
  try {
    Deno.kill(pid, signal);
  } catch { /* gone already */ }
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Ends every process carrying `marker`: SIGTERM (so Wine's script runs `wineserver -k`), then SIGKILL. */
async function endMarked(marker: string): Promise<number[]> {
  const first = markedPids(marker);
  for (const pid of first) kill(pid, "SIGTERM");
  for (let i = 0; i < 50 && markedPids(marker).length > 0; i++) await sleep(100);
  for (const pid of markedPids(marker)) kill(pid, "SIGKILL");
  return first;
}

export interface StageResult extends Counts {
  name: string;
  status: "ok" | "failed" | "timed out";
  seconds: number;
  unfinished: string[];
  failedTests: string[];
  /** failureMessages of the stage's output. */
  failures: string[][];
}

/** Runs one stage with its output shown as it comes; ends it at its bound. */
export async function runStage(stage: Stage, scale: number): Promise<StageResult> {
  const started = Date.now();
  const marker = `ROSTER_CI_STAGE=${stage.name}-${Deno.pid}-${started}`;
  const [name, ...args] = stage.cmd.map((a) => a === "deno" ? Deno.execPath() : a);
  const deno = Deno.execPath();
  const dir = deno.slice(0, Math.max(deno.lastIndexOf("/"), deno.lastIndexOf("\\")));
  // Its own process group where setsid exists, so that the whole tree can be ended at once.
  const useSetsid = Deno.build.os === "linux";
  const child = new Deno.Command(useSetsid ? "setsid" : name, {
    args: useSetsid ? [name, ...args] : args,
    // This Deno first on PATH: a `deno` the stage runs is the pinned one (scripts/deno).
    env: {
      [marker.split("=")[0]]: marker.split("=")[1],
      PATH: `${dir}${Deno.build.os === "windows" ? ";" : ":"}${Deno.env.get("PATH") ?? ""}`,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  // Deno's report (its ERRORS and FAILURES lists) is its stdout alone: what it writes on
  // stderr ("error: Test failed") lands in `out` anywhere between, even inside a line.
  let report = "";
  const pump = async (stream: ReadableStream<Uint8Array>, to: typeof Deno.stdout) => {
    const dec = new TextDecoder(); // one a stream: a character may span two chunks
    for await (const chunk of stream) {
      const text = dec.decode(chunk, { stream: true });
      out += text;
      if (to === Deno.stdout) report += text;
      await to.write(chunk).catch(() => {});
    }
  };
  const pumps = Promise.all([pump(child.stdout, Deno.stdout), pump(child.stderr, Deno.stderr)]);
  const boundMs = stage.boundMin * 60_000 * scale;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<null>((ok) => timer = setTimeout(() => ok(null), boundMs));
  const status = await Promise.race([child.status, expired]);
  clearTimeout(timer);
  let timedOut = false;
  let unfinished: string[] = [];
  if (status === null) {
    timedOut = true;
    unfinished = unfinishedTests(out);
    console.log(
      `\n${stage.name}: hit its bound of ${Math.round(boundMs / 60_000)} min; stopped in: ${
        unfinished.length > 0 ? unfinished.join("; ") : "(no test named in its output)"
      }`,
    );
    // The group first (SIGTERM lets scripts/wine/test.sh run wineserver -k), then stragglers.
    if (useSetsid) kill(-child.pid, "SIGTERM");
    else kill(child.pid, "SIGTERM");
    const done = await Promise.race([child.status, sleep(10_000).then(() => null)]);
    if (done === null) {
      if (useSetsid) kill(-child.pid, "SIGKILL");
      else kill(child.pid, "SIGKILL");
      await child.status;
    }
  }
  // Whatever the stage left running (a tmux server, a wineserver) ends with it.
  const left = await endMarked(marker);
  if (left.length > 0) {
    console.log(
      `${stage.name}: ended ${left.length} process(es) it left running: ${left.join(" ")}`,
    );
  }
  await Promise.race([pumps, sleep(2_000)]);
  const code = timedOut ? null : (status as Deno.CommandStatus).code;
  const seconds = Math.round((Date.now() - started) / 1000);
  let counts: Counts;
  if (stage.gate) counts = code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
  else {
    counts = summaryCounts(out) ?? { passed: 0, failed: 0 };
    // A run that failed without a failed test (it crashed, or stopped before its summary).
    if ((timedOut || code !== 0) && counts.failed === 0) counts.failed = 1;
  }
  const state = timedOut ? "timed out" : code === 0 && counts.failed === 0 ? "ok" : "failed";
  const failed = failedTests(report);
  return {
    name: stage.name,
    status: state,
    seconds,
    unfinished,
    failedTests: failed,
    failures: failureMessages(report, failed),
    ...counts,
  };
}

/**
 * The end of the log: why each test failed (the first lines of its error, by stage), each
 * stage's line, then the total, last.
 */
export function formatResults(results: readonly StageResult[]): string[] {
  const why = results.flatMap((r) =>
    r.failures.flatMap(([name, ...message]) => [
      `--- ${r.name}: ${name}`,
      ...message.map((l) => `    ${l}`.trimEnd()),
    ])
  );
  const lines = results.map((r) =>
    `stage ${r.name}: ${r.status}, ${r.passed} passed, ${r.failed} failed (${r.seconds}s)` +
    (r.unfinished.length > 0 ? `; stopped in: ${r.unfinished.join("; ")}` : "") +
    (r.failedTests.length > 0 ? `; failed: ${r.failedTests.join("; ")}` : "")
  );
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  const header = why.length > 0 ? ["=== why they failed (the first lines of each error)"] : [];
  return [...header, ...why, ...lines, `${passed} passed, ${failed} failed`];
}

export function parseArgs(argv: readonly string[]): { stages: Stage[]; scale: number } {
  let scale = Number(Deno.env.get("ROSTER_CI_BOUND_SCALE") ?? "1");
  let testsOnly = false;
  let all: readonly Stage[] = STAGES;
  const named: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--tests") testsOnly = true;
    else if (a === "--stages") all = JSON.parse(Deno.readTextFileSync(argv[++i])) as Stage[];
    else if (a === "--bound-scale") scale = Number(argv[++i]);
    else if (a.startsWith("--bound-scale=")) scale = Number(a.slice("--bound-scale=".length));
    else if (!a.startsWith("-")) named.push(a);
    else throw new Error(`unknown option: ${a}`);
  }
  if (!(scale > 0)) throw new Error("--bound-scale must be a positive number");
  const unknown = named.filter((n) => !all.some((s) => s.name === n));
  if (unknown.length > 0) {
    const names = all.map((s) => s.name).join(", ");
    throw new Error(`unknown stage: ${unknown.join(", ")} (stages: ${names})`);
  }
  const stages = all.filter((s) =>
    named.length > 0 ? named.includes(s.name) : !(testsOnly && s.gate)
  );
  return { stages, scale };
}

if (import.meta.main) {
  let parsed;
  try {
    parsed = parseArgs(Deno.args);
  } catch (err) {
    console.error(`ci_stages: ${(err as Error).message}`);
    Deno.exit(2);
  }
  const results: StageResult[] = [];
  for (const stage of parsed.stages) {
    console.log(`\n=== stage ${stage.name}: ${stage.cmd.join(" ")}`);
    results.push(await runStage(stage, parsed.scale));
  }
  console.log("");
  const lines = formatResults(results);
  for (const l of lines) console.log(l);
  Deno.exit(results.every((r) => r.status === "ok") ? 0 : 1);
}
