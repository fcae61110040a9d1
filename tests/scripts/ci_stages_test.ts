/**
 * scripts/ci_stages.ts, what `deno task ok` and .ci/run run: every stage runs even after one
 * failed, each stage's counts and the total are printed (the total last), the exit status is 1 on
 * any failure, and a stage that hits its bound is ended with every process it started (those
 * that left its process group too) and names the test it stopped in.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { BOUND_SCALE, ROOT, run, tempDir, waitUntil } from "../helpers.ts";
import {
  failedTests,
  failureMessages,
  formatResults,
  markedPids,
  STAGES,
  summaryCounts,
  unfinishedTests,
} from "../../scripts/ci_stages.ts";

const RUNNER = `${ROOT}scripts/ci_stages.ts`;

Deno.test("Deno's summaries are counted, and a stopped run names its tests", async (t) => {
  await t.step("summaries of several runs add up; colours are ignored", () => {
    const out = [
      "\x1b[0m\x1b[32mok\x1b[0m | 41 passed (120 steps) | 0 failed \x1b[38;5;245m(3s)\x1b[0m",
      "FAILED | 40 passed | 2 failed (1m2s)",
    ].join("\n");
    assertEquals(summaryCounts(out), { passed: 81, failed: 2 });
    assertEquals(summaryCounts("error: Module not found"), null);
  });
  await t.step("a parallel run: the tests still running after a minute", () => {
    const out = [
      "'slow one' has been running for over (1m0s)",
      "'done one' has been running for over (1m0s)",
      "./a_test.ts => done one ... ok (70s)",
    ].join("\n");
    assertEquals(unfinishedTests(out), ["slow one"]);
  });
  await t.step("a serial run: the test and the step its last line opened", () => {
    const out = [
      "roster on Windows, end to end ...",
      "  a pid reused by another process reads as dead (pid-reused) ... ok (43s)",
      "  register, list alive, kill, list dead, prune ...",
    ].join("\n");
    assertEquals(unfinishedTests(out), [
      "roster on Windows, end to end > register, list alive, kill, list dead, prune",
    ]);
    assertEquals(unfinishedTests("a ... ok (1ms)\n"), []);
  });
  await t.step("the tests Deno's FAILURES list names, each once, steps included", () => {
    const out = [
      "\x1b[0m\x1b[1m\x1b[37m\x1b[41m ERRORS \x1b[0m",
      "",
      "slow one => ./tests/a_test.ts:3:6",
      "error: AssertionError: no",
      "",
      "\x1b[0m\x1b[1m\x1b[37m\x1b[41m FAILURES \x1b[0m",
      "",
      "slow one => ./tests/a_test.ts:3:6",
      "outer ... inner => ./tests/b_test.ts:9:11",
      "slow one => ./tests/a_test.ts:3:6",
      "",
      "FAILED | 1 passed | 2 failed (1s)",
      "later => ./not/a/failure.ts:1:1",
    ].join("\n");
    assertEquals(failedTests(out), [
      "slow one (tests/a_test.ts)",
      "outer ... inner (tests/b_test.ts)",
    ]);
    assertEquals(failedTests("ok | 1 passed | 0 failed (1s)\n"), []);
  });
  await t.step("each error's first lines, under its test's name, without stack or code", () => {
    // As Deno 2.9 prints a failed step and a failed test in a parallel run (colours cut).
    const out = [
      "./a_test.ts => outer ... inner ... FAILED (1ms)",
      "",
      "\x1b[0m\x1b[1m\x1b[37m\x1b[41m ERRORS \x1b[0m",
      "",
      "outer ... inner \x1b[0m\x1b[38;5;245m=> ./tests/a_test.ts:2:11\x1b[0m",
      "\x1b[0m\x1b[1m\x1b[31merror\x1b[0m: AssertionError: Values are not equal.",
      "",
      "    [Diff] Actual / Expected",
      "",
      "-   [1, 'a']",
      "+   [0, '']",
      "",
      '  await t.step("inner", () => { assertEquals(x, y); });',
      "\x1b[0m\x1b[31m                                      ^\x1b[0m",
      "    at file:///tmp/a_test.ts:2:39",
      "    at innerWrapped (ext:cli/40_test.js:300:11)",
      "",
      "two => ./tests/b_test.ts:4:6",
      "error: TypeError: boom",
      ...Array.from({ length: 30 }, (_, i) => `line ${i}`),
      "",
      " FAILURES ",
      "",
      "outer ... inner => ./tests/a_test.ts:2:11",
      "two => ./tests/b_test.ts:4:6",
      "",
      "FAILED | 0 passed | 2 failed (1 step) (8ms)",
    ].join("\n");
    const found = failureMessages(out);
    assertEquals(found[0], [
      "outer ... inner (tests/a_test.ts)",
      "error: AssertionError: Values are not equal.",
      "",
      "    [Diff] Actual / Expected",
      "",
      "-   [1, 'a']",
      "+   [0, '']",
    ]);
    // A long message is cut at its first lines.
    assertEquals(found[1].slice(0, 3), [
      "two (tests/b_test.ts)",
      "error: TypeError: boom",
      "line 0",
    ]);
    assertEquals(found.length, 2);
    assert(found[1].length < 20, `${found[1].length} lines`);
    assertEquals(failureMessages("ok | 1 passed | 0 failed (1s)\n"), []);
  });
  await t.step("an uncaught error, a log inside a message, and a message cut short", () => {
    // As Deno 2.9 prints them (colours cut): the second test's message holds a whole log of a
    // test runner's, as a test of one does; the third is longer than what is kept.
    const out = [
      "Uncaught error from ./tests/u_test.ts FAILED",
      "",
      " ERRORS ",
      "",
      "./tests/u_test.ts (uncaught error)",
      "error: Error: late boom",
      "setTimeout(() => { throw new Error('late boom'); }, 0);",
      "                         ^",
      "This error was not caught from a test and caused the test runner to fail.",
      "",
      "runs a runner => ./tests/r_test.ts:9:6",
      "error: AssertionError: Values are not equal: inner run said",
      " ERRORS ",
      "x => ./y_test.ts:1:2",
      "error: no",
      " FAILURES ",
      "x => ./y_test.ts:1:2",
      "FAILED | 0 passed | 1 failed (1ms)",
      "    at file:///tests/r_test.ts:9:20",
      "",
      "long => ./tests/l_test.ts:3:6",
      "error: Error: first",
      ...Array.from({ length: 14 }, (_, i) => `line ${i}`),
      "  throw new Error(text);",
      "        ^",
      "    at file:///tests/l_test.ts:3:20",
      "",
      " FAILURES ",
      "",
      "./tests/u_test.ts (uncaught error)",
      "runs a runner => ./tests/r_test.ts:9:6",
      "long => ./tests/l_test.ts:3:6",
      "",
      "FAILED | 1 passed | 3 failed (1s)",
    ].join("\n");
    assertEquals(failedTests(out), [
      "uncaught error (tests/u_test.ts)",
      "runs a runner (tests/r_test.ts)",
      "long (tests/l_test.ts)",
    ]);
    const found = failureMessages(out);
    assertEquals(found.map((f) => f[0]), failedTests(out));
    assertEquals(found[0].slice(1), [
      "error: Error: late boom",
      "This error was not caught from a test and caused the test runner to fail.",
    ]);
    // The inner log is the message's, its header no test of this run.
    assertEquals(found[1].slice(1, 4), [
      "error: AssertionError: Values are not equal: inner run said",
      " ERRORS",
      "x => ./y_test.ts:1:2",
    ]);
    // Cut after its first lines; the code excerpt above the caret was never kept, so nothing
    // else is dropped in its place.
    assertEquals(found[2], [
      "long (tests/l_test.ts)",
      "error: Error: first",
      ...Array.from({ length: 11 }, (_, i) => `line ${i}`),
    ]);
  });
  await t.step("why each test failed, each stage's line, then the total", () => {
    // A stage's result: the fields each line below leaves out are as here.
    const r = { passed: 0, failed: 0, seconds: 5, unfinished: [], failedTests: [], failures: [] };
    const y = ["y (tests/y_test.ts)"];
    const lines = formatResults([
      { ...r, name: "fmt", status: "ok", passed: 1, seconds: 1 },
      { ...r, name: "wine", status: "timed out", failed: 1, seconds: 9, unfinished: ["x"] },
      {
        ...r,
        name: "parallel",
        status: "failed",
        passed: 3,
        failed: 1,
        failedTests: y,
        failures: [[y[0], "error: no", "", "  more"]],
      },
    ]);
    assertEquals(lines, [
      "=== why they failed (the first lines of each error)",
      "--- parallel: y (tests/y_test.ts)",
      "    error: no",
      "",
      "      more",
      "stage fmt: ok, 1 passed, 0 failed (1s)",
      "stage wine: timed out, 0 passed, 1 failed (9s); stopped in: x",
      "stage parallel: failed, 3 passed, 1 failed (5s); failed: y (tests/y_test.ts)",
      "4 passed, 2 failed",
    ]);
  });
  await t.step("every stage is bounded, and the test stages are all there", () => {
    for (const s of STAGES) assert(s.boundMin > 0 && s.boundMin <= 60, s.name);
    assertEquals(STAGES.map((s) => s.name), [
      "fmt",
      "lint",
      "check",
      "layers",
      "parallel",
      "serial",
      "harness",
      "wine",
    ]);
  });
});

Deno.test({
  name: "a failed stage does not stop the next, and a hung one is ended with its processes",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir("roster-stages-");
    const tests = (name: string, body: string) => {
      Deno.writeTextFileSync(`${dir.path}/${name}_test.ts`, body);
      return `${dir.path}/${name}_test.ts`;
    };
    const pidFile = `${dir.path}/pids`;
    const failing = tests("failing", 'Deno.test("one fails", () => { throw new Error("no"); });\n');
    const passing = tests("passing", 'Deno.test("one passes", () => {});\n');
    // A test that hangs with a child in its group and one that left it (as a tmux server does).
    const hanging = tests(
      "hanging",
      `Deno.test("hangs with children", async () => {
        const a = new Deno.Command("sleep", { args: ["600"] }).spawn();
        const b = new Deno.Command("setsid", { args: ["sleep", "601"] }).spawn();
        Deno.writeTextFileSync(${JSON.stringify(pidFile)}, \`\${a.pid} \${b.pid}\`);
        await new Promise(() => {});
      });\n`,
    );
    // Not type-checked: the stuck stage's bound must pass inside its test, not while a loaded
    // machine is still checking it (seen once in six runs beside a CI run).
    const deno = (file: string) => ["deno", "test", "--allow-all", "--no-check", file];
    const stages = [
      { name: "first", cmd: deno(failing), boundMin: 5 },
      { name: "stuck", cmd: deno(hanging), boundMin: 0.25 * BOUND_SCALE },
      { name: "last", cmd: deno(passing), boundMin: 5 },
    ];
    Deno.writeTextFileSync(`${dir.path}/stages.json`, JSON.stringify(stages));
    const r = await run(Deno.execPath(), [
      "run",
      "--allow-all",
      RUNNER,
      "--stages",
      `${dir.path}/stages.json`,
    ], {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      NO_COLOR: "1",
    });
    assertEquals(r.code, 1, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assertEquals(lines.at(-1), "1 passed, 2 failed");
    assertMatch(r.stdout, /^stage first: failed, 0 passed, 1 failed/m);
    // The end of the log says why, not only which.
    const why = lines.findIndex((l) => /^--- first: one fails \(\S*failing_test\.ts\)$/.test(l));
    assert(why > lines.indexOf("=== why they failed (the first lines of each error)"), r.stdout);
    assertEquals(lines[why + 1], "    error: Error: no", r.stdout);
    assertMatch(
      r.stdout,
      /^stage stuck: timed out, 0 passed, 1 failed \(\d+s\); stopped in: hangs with children$/m,
    );
    assertMatch(r.stdout, /^stage last: ok, 1 passed, 0 failed/m);
    // Both children are gone: the one in the group and the one that left it.
    const pids = Deno.readTextFileSync(pidFile).split(" ").map(Number);
    await waitUntil(() => pids.every((p) => !alive(p)), `children ${pids} ended`);
    assertEquals(markedPids("ROSTER_CI_STAGE=none-such"), []);
  },
});

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}
