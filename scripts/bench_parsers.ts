/**
 * Measures what each candidate argument parser adds to a cold `deno run`, the cost every hook
 * call pays (docs/decisions.md, "Argument parser"). Each candidate is a tiny entry file in a
 * temp dir that parses the same argv and prints one line; a hello world is the floor.
 *
 *   deno run -A scripts/bench_parsers.ts [--runs N]
 *
 * npm packages are run with --no-config/--no-lock so they never enter roster's deno.json or
 * deno.lock: roster itself has no dependencies.
 */
import { median } from "./stats.ts";

const ROSTER_ARGS = new URL("../src/cli/args.ts", import.meta.url).href;
const ARGV = ["list", "--state", "dead", "--json", "--home", "/tmp/x"];
/** What every candidate must print, so a broken entry cannot pass for a fast one. */
const EXPECTED = JSON.stringify({ command: "list", state: ["dead"], json: true, home: "/tmp/x" });
const FLOOR = "hello world";

interface Candidate {
  name: string;
  source: string;
}

function candidates(): Candidate[] {
  const argv = JSON.stringify(ARGV);
  const print = "console.log(JSON.stringify({ command, state, json, home }));";
  return [
    { name: FLOOR, source: `console.log(${JSON.stringify(EXPECTED)});\n` },
    {
      name: "roster src/cli/args.ts",
      source: `import { parseArgs } from ${JSON.stringify(ROSTER_ARGS)};
const p = parseArgs(${argv});
const command = p.command?.name, state = p.all("state"), json = p.has("json"), home = p.get("home");
${print}
`,
    },
    {
      name: "node:util parseArgs",
      source: `import { parseArgs } from "node:util";
const { values, positionals } = parseArgs({
  args: ${argv},
  allowPositionals: true,
  options: {
    state: { type: "string", multiple: true },
    json: { type: "boolean" },
    home: { type: "string" },
  },
});
const command = positionals[0], state = values.state, json = values.json, home = values.home;
${print}
`,
    },
    {
      name: "npm:commander@15.1.0",
      source: `import { Command } from "npm:commander@15.1.0";
const program = new Command("roster");
program
  .command("list")
  .option("--state <state>", "", (v: string, prev: string[]) => [...prev, v], [] as string[])
  .option("--json")
  .option("--home <dir>")
  .action((o: { state: string[]; json: boolean; home: string }) => {
    const command = "list", state = o.state, json = o.json, home = o.home;
    ${print}
  });
program.parse(${argv}, { from: "user" });
`,
    },
    {
      name: "npm:mri@1.2.0",
      source: `import mri from "npm:mri@1.2.0";
const a = mri(${argv}, { boolean: ["json"], string: ["state", "home"] });
const command = a._[0], state = [a.state].flat(), json = a.json, home = a.home;
${print}
`,
    },
    {
      name: "npm:yargs-parser@22.0.0",
      source: `import parser from "npm:yargs-parser@22.0.0";
const a = parser(${argv}, { boolean: ["json"], string: ["home"], array: ["state"] });
const command = a._[0], state = a.state, json = a.json, home = a.home;
${print}
`,
    },
  ];
}

function parseRuns(args: string[]): number {
  const i = args.indexOf("--runs");
  if (i === -1) return 15;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--runs: expected a positive integer`);
  return n;
}

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** One cold run, checked: a candidate that prints the wrong thing aborts the benchmark. */
async function timeRun(c: Candidate, file: string): Promise<number> {
  const start = performance.now();
  const r = await deno(["run", "--no-lock", "--no-config", "-A", file]);
  const ms = performance.now() - start;
  if (r.code !== 0 || r.stdout.trim() !== EXPECTED) {
    throw new Error(`${c.name}: exit ${r.code}, printed ${JSON.stringify(r.stdout)}\n${r.stderr}`);
  }
  return ms;
}

async function main(): Promise<void> {
  const runs = parseRuns(Deno.args);
  const dir = await Deno.makeTempDir({ prefix: "roster-bench-parsers-" });
  try {
    const list = candidates();
    const files = list.map((_, i) => `${dir}/entry${i}.ts`);
    for (const [i, c] of list.entries()) {
      await Deno.writeTextFile(files[i], c.source);
      const r = await deno(["cache", "--no-lock", "--no-config", files[i]]);
      if (r.code !== 0) throw new Error(`deno cache ${c.name} failed:\n${r.stderr}`);
    }
    // One untimed round fills V8's code cache, so every timed run is equally warm on disk.
    for (const [i, c] of list.entries()) await timeRun(c, files[i]);
    const samples: number[][] = list.map(() => []);
    // Round-robin, so drift in machine load spreads over all candidates alike.
    for (let r = 0; r < runs; r++) {
      for (const [i, c] of list.entries()) samples[i].push(await timeRun(c, files[i]));
    }
    const floor = median(samples[0]);
    const f = (x: number) => x.toFixed(1);
    console.log(
      `deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, ${runs} cold runs each, ` +
        `interleaved; argv: ${ARGV.join(" ")}\n`,
    );
    console.log("| parser | median ms | min ms | max ms | median - floor ms |");
    console.log("| --- | ---: | ---: | ---: | ---: |");
    for (const [i, c] of list.entries()) {
      const s = samples[i];
      const m = median(s);
      const extra = i === 0 ? "(floor)" : f(m - floor);
      console.log(
        `| ${c.name} | ${f(m)} | ${f(Math.min(...s))} | ${f(Math.max(...s))} | ${extra} |`,
      );
    }
    console.log(
      "\n@cliffy/command is not measured: it is published on JSR only, which this network " +
        "cannot reach.",
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  try {
    await main();
  } catch (err) {
    console.error(`bench_parsers: ${err instanceof Error ? err.message : err}`);
    Deno.exit(1);
  }
}
