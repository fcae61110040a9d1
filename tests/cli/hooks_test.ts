/**
 * unregister, check, token and whoami: their pure decisions, then the CLI run as a hook runs
 * it, against real processes and a temp home.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  exists as existsPath,
  hostDir,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import { bareVerdict, type Reason } from "../../src/identity/liveness.ts";
import { checkExitCode } from "../../src/cli/commands/check.ts";
import { formatToken, verifyToken } from "../../src/identity/token.ts";
import { mayUnregister } from "../../src/registry/store_remove.ts";
import type { Row } from "../../src/registry/row.ts";
import type { Probe, ProcessInfo, TokenMatch } from "../../src/process/types.ts";
import { exactTokens } from "../../src/process/types.ts";
import { Harness, installRoster, recipeEnv, standIn } from "../recipes/harness.ts";

const info = (over: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid: 42,
  ppid: 1,
  startToken: "100",
  startedAtMs: 1,
  zombie: false,
  name: "x",
  ...over,
});
const exists = (over: Partial<ProcessInfo> = {}): Probe => ({ kind: "exists", info: info(over) });
const GONE: Probe = { kind: "gone" };
const UNSUPPORTED: Probe = { kind: "unsupported" };

function row(reason: Reason, over: Partial<Row> = {}): Row {
  const liveness = ["running", "pid-only"].includes(reason)
    ? "alive"
    : ["exited", "zombie", "pid-reused", "rebooted"].includes(reason)
    ? "dead"
    : "unknown";
  return { liveness, reason, malformed: reason === "malformed" } as Row & typeof over;
}

Deno.test("mayUnregister: only the process's own record, or one nobody holds", async (t) => {
  const cases: [string, Row, Probe, boolean][] = [
    ["same pid and token", row("running"), exists(), true],
    ["the process exited", row("exited"), GONE, true],
    ["the process is a zombie", row("zombie"), exists({ zombie: true }), true],
    ["another process holds the pid", row("pid-reused"), exists(), false],
    ["a record from another boot", row("rebooted"), exists(), false],
    ["no token on either side", row("pid-only"), exists({ startToken: null }), true],
    ["no token recorded, one readable now", row("pid-only"), exists(), false],
    ["cannot tell", row("unverifiable"), exists({ startToken: null }), false],
    ["unsupported", row("unsupported"), UNSUPPORTED, false],
    ["another host", row("other-host"), exists(), false],
    ["malformed", row("malformed"), exists(), false],
  ];
  for (const [name, r, probe, want] of cases) {
    await t.step(name, () => assertEquals(mayUnregister(r, probe), want));
  }
});

Deno.test("bareVerdict and checkExitCode", async (t) => {
  await t.step("a bare pid is alive while a process holds it", () => {
    assertEquals(bareVerdict(exists()), { liveness: "alive", reason: "running" });
    assertEquals(bareVerdict(GONE), { liveness: "dead", reason: "exited" });
    assertEquals(bareVerdict(exists({ zombie: true })), { liveness: "dead", reason: "zombie" });
    assertEquals(bareVerdict(UNSUPPORTED), { liveness: "unknown", reason: "unsupported" });
  });
  await t.step("0 all alive, 3 any dead, 4 any unknown and none dead", () => {
    const a = { liveness: "alive", reason: "running" } as const;
    const d = { liveness: "dead", reason: "exited" } as const;
    const u = { liveness: "unknown", reason: "unverifiable" } as const;
    assertEquals(checkExitCode([a, a]), 0);
    assertEquals(checkExitCode([a, u]), 4);
    assertEquals(checkExitCode([u, d, a]), 3);
    assertEquals(checkExitCode([d]), 3);
  });
});

Deno.test("formatToken and verifyToken", async (t) => {
  const boot = "b00t";
  const uncertain = (): TokenMatch => "uncertain";
  const v = (given: string, probe: Probe, compare = exactTokens) =>
    verifyToken(given, probe, boot, compare);
  await t.step("the token carries the boot where there is one", () => {
    assertEquals(formatToken("100", boot), "100@b00t");
    assertEquals(formatToken("darwin:1.000002", null), "darwin:1.000002");
  });
  await t.step("same process, same boot: same", () => {
    assertEquals(v(formatToken("100", boot), exists()), "same");
  });
  await t.step("a record's bare start_token is accepted too", () => {
    assertEquals(v("100", exists()), "same");
  });
  await t.step("another start token, or another boot: different", () => {
    assertEquals(v("101@b00t", exists()), "different");
    assertEquals(v("100@other-boot", exists()), "different");
  });
  await t.step("gone or zombie: gone", () => {
    assertEquals(v("100@b00t", GONE), "gone");
    assertEquals(v("100@b00t", exists({ zombie: true })), "gone");
  });
  await t.step("no way to tell: unknown", () => {
    assertEquals(v("100@b00t", UNSUPPORTED), "unknown");
    assertEquals(v("100@b00t", exists({ startToken: null })), "unknown");
    assertEquals(v("100@b00t", exists(), uncertain), "unknown");
  });
});

/** /proc/<pid>/stat starttime and this boot's id: what `roster token` must print on Linux. */
function linuxToken(pid: number): string {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const starttime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  const boot = Deno.readTextFileSync("/proc/sys/kernel/random/boot_id").trim();
  return `${starttime}@${boot}`;
}

const linux = Deno.build.os === "linux";

Deno.test("roster unregister", async (t) => {
  await using home = await tempDir();
  await using s = spawnSleeper();
  const args = (...more: string[]) => ["unregister", "--home", home.path, ...more];

  await t.step("no record: exit 0, and the store is not created", async () => {
    const r = await roster(args("--pid", String(s.pid)));
    assertEquals([r.code, r.stdout, r.stderr], [
      0,
      `No record for pid ${s.pid}: nothing to unregister\n`,
      "",
    ]);
    assertEquals([...Deno.readDirSync(home.path)], []);
  });
  await t.step("its own record is removed", async () => {
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    const r = await rosterJson<{ pid: number; outcome: string; row: Row }>(home.path, [
      "unregister",
      "--pid",
      String(s.pid),
    ]);
    assertEquals([r.pid, r.outcome, r.row.path], [s.pid, "removed", row.path]);
    assert(!existsPath(row.path));
  });
  await t.step("a record with another start token is kept (exit 0)", async () => {
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    writeJson(row.path, { ...row, start_token: "1" });
    const r = await roster(args("--pid", String(s.pid)));
    assertEquals(r.code, 0, r.stderr);
    assertEquals(
      r.stdout,
      `Kept the record of pid ${s.pid}: it is not this process's (dead: pid-reused)\n`,
    );
    assert(existsPath(row.path));
  });
  await t.step("a malformed record is kept", async () => {
    const path = `${hostDir(home.path)}/${s.pid}.json`;
    writeJson(path, { not: "a record" });
    const r = await rosterJson<{ outcome: string; row: Row }>(home.path, [
      "unregister",
      "--pid",
      String(s.pid),
    ]);
    assertEquals([r.outcome, r.row.reason], ["kept", "malformed"]);
    assert(existsPath(path));
    Deno.removeSync(path);
  });
  await t.step("ROSTER_SESSION_PID names the owner; --quiet prints nothing", async () => {
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    const r = await roster(args("--quiet"), { env: { ROSTER_SESSION_PID: String(s.pid) } });
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    assert(!existsPath(row.path));
  });
  await t.step("a named pid whose process is gone: its record is removed, exit 0", async () => {
    const gone = spawnSleeper();
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(gone.pid)]);
    await gone.kill();
    const r = await roster(args("--pid", String(gone.pid)));
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, `Unregistered anonymous session ${gone.pid} (dead: exited)\n`);
    assert(!existsPath(row.path));
    const again = await roster(args("--pid", String(gone.pid)));
    assertEquals([again.code, again.stdout], [
      0,
      `No record for pid ${gone.pid}: nothing to unregister\n`,
    ]);
  });
  await t.step("an invalid pid is a usage error", async () => {
    const r = await roster(args("--pid", "abc"));
    assertEquals([r.code, r.stdout], [2, ""]);
    assertMatch(r.stderr, /^roster: Invalid --pid: expected a positive integer process id/);
  });
});

Deno.test("roster check", async (t) => {
  await using home = await tempDir();
  await using live = spawnSleeper();
  await using bare = spawnSleeper();
  const dead = spawnSleeper();
  await rosterJson(home.path, ["register", "--pid", String(live.pid), "--agent", "a"]);
  await rosterJson(home.path, ["register", "--pid", String(dead.pid), "--agent", "d"]);
  await dead.kill();
  const gone = spawnSleeper();
  await gone.kill();
  const check = (...pids: number[]) => roster(["check", ...pids.map(String), "--home", home.path]);

  await t.step("all alive: exit 0, one line each", async () => {
    const r = await check(live.pid, bare.pid);
    assertEquals([r.code, r.stderr], [0, ""]);
    assertEquals(
      r.stdout,
      `a session ${live.pid} (alive: running)\npid ${bare.pid} (alive: running), not registered\n`,
    );
  });
  await t.step("any dead: exit 3, whether registered or bare", async () => {
    assertEquals((await check(live.pid, dead.pid)).code, 3);
    assertEquals((await check(gone.pid)).code, 3);
  });
  await t.step("any unknown and none dead: exit 4; unknown and dead: 3", async () => {
    writeJson(`${hostDir(home.path)}/${bare.pid}.json`, { bad: true });
    assertEquals((await check(live.pid, bare.pid)).code, 4);
    assertEquals((await check(bare.pid, dead.pid)).code, 3);
    Deno.removeSync(`${hostDir(home.path)}/${bare.pid}.json`);
  });
  await t.step("--json prints the rows on stdout only, with the same exit code", async () => {
    const r = await roster([
      "check",
      String(live.pid),
      String(gone.pid),
      "--home",
      home.path,
      "--json",
    ]);
    assertEquals([r.code, r.stderr], [3, ""]);
    const rows = JSON.parse(r.stdout) as (Row & { registered: boolean })[];
    assertEquals(
      rows.map((x) => [x.session_pid, x.registered, x.liveness, x.reason, x.agent]),
      [[live.pid, true, "alive", "running", "a"], [gone.pid, false, "dead", "exited", null]],
    );
  });
  await t.step({
    name: "a bare pid's row carries its current start token",
    ignore: !linux,
    fn: async () => {
      const r = await roster(["check", String(bare.pid), "--home", home.path, "--json"]);
      const [x] = JSON.parse(r.stdout) as Row[];
      assertEquals(`${x.start_token}@${x.boot_id}`, linuxToken(bare.pid));
    },
  });
  await t.step("a pid that is not a number is a usage error", async () => {
    const r = await roster(["check", "12", "x1", "--home", home.path]);
    assertEquals([r.code, r.stdout], [2, ""]);
    assertMatch(r.stderr, /^roster: Invalid PID: expected a positive integer process id, got "x1"/);
  });
});

Deno.test("roster token", async (t) => {
  await using s = spawnSleeper();
  const gone = spawnSleeper();
  await gone.kill();

  await t.step({
    name: "prints the start token with the boot",
    ignore: !linux,
    fn: async () => {
      const r = await roster(["token", String(s.pid)]);
      assertEquals([r.code, r.stdout, r.stderr], [0, linuxToken(s.pid) + "\n", ""]);
    },
  });
  await t.step("--json adds its parts", async () => {
    const r = await roster(["token", String(s.pid), "--json"]);
    const j = JSON.parse(r.stdout);
    assertEquals(j.pid, s.pid);
    assertEquals(j.token, j.boot_id === null ? j.start_token : `${j.start_token}@${j.boot_id}`);
  });
  await t.step("no such process: exit 3", async () => {
    const r = await roster(["token", String(gone.pid)]);
    assertEquals([r.code, r.stdout, r.stderr], [3, "", `roster: No such process: ${gone.pid}\n`]);
  });
  await t.step("--verify: 0 when it matches, silent", async () => {
    const tok = (await roster(["token", String(s.pid)])).stdout.trim();
    const r = await roster(["token", "--verify", String(s.pid), tok]);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    const j = await roster(["token", "--verify", String(s.pid), tok, "--json"]);
    assertEquals([j.code, JSON.parse(j.stdout)], [0, { pid: s.pid, token: tok, verdict: "same" }]);
  });
  await t.step("--verify: 3 when the token differs or the process is gone", async () => {
    const tok = (await roster(["token", String(s.pid)])).stdout.trim();
    const [start, boot] = tok.split("@");
    const other = `${Number(start) + 1}` + (boot === undefined ? "" : `@${boot}`);
    assertEquals((await roster(["token", "--verify", String(s.pid), other])).code, 3);
    assertEquals((await roster(["token", "--verify", String(gone.pid), tok])).code, 3);
  });
  await t.step({
    name: "--verify: 3 for the same token from another boot",
    ignore: !linux,
    fn: async () => {
      const [start] = linuxToken(s.pid).split("@");
      const r = await roster(["token", "--verify", String(s.pid), `${start}@another-boot`]);
      assertEquals(r.code, 3);
    },
  });
  await t.step("--verify accepts a record's bare start_token", async () => {
    await using home = await tempDir();
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    const r = await roster(["token", "--verify", String(s.pid), row.start_token!]);
    assertEquals(r.code, 0, r.stderr);
  });
  await t.step("usage: exactly PID, or --verify PID TOKEN", async () => {
    for (
      const [argv, re] of [
        [["token", "--verify", "1"], /^roster: Missing TOKEN for token --verify/],
        [["token", "1", "2"], /^roster: Unexpected argument for token: 2/],
        [["token", "--verify", "1", ""], /^roster: Invalid TOKEN: /],
        [["token", "0"], /^roster: Invalid PID: /],
      ] as [string[], RegExp][]
    ) {
      const r = await roster(argv);
      assertEquals([r.code, r.stdout], [2, ""], argv.join(" "));
      assertMatch(r.stderr, re);
    }
  });
});

Deno.test("roster whoami", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  const env = recipeEnv(dir.path, home);
  // The chain: this test process > a long-lived bash > sh -c > roster whoami.
  await using shell = Harness.start(standIn(dir.path, "shell"), env, dir.path);
  const whoami = () => shell.hook("roster whoami --json");
  await rosterJson(home, ["register", "--pid", String(Deno.pid), "--agent", "outer"]);
  await t.step("a record someone else wrote for an ancestor is passed over", async () => {
    // Registered from outside the shell: pid_verified is false, so it is not the shell's own.
    const other = await rosterJson<Row>(home, [
      "register",
      "--pid",
      String(shell.pid),
      "--agent",
      "x",
    ]);
    assertEquals(other.pid_verified, false);
    const r = await whoami();
    assertEquals(r.code, 0, r.stderr);
    assertEquals((JSON.parse(r.stdout) as Row).agent, "outer");
  });
  // The shell registers itself, as a session-start hook would.
  const reg = await shell.hook(`roster register --pid ${shell.pid} --agent inner --json`);
  assertEquals(reg.code, 0, reg.stderr);
  const inner = JSON.parse(reg.stdout) as Row;
  assertEquals(inner.pid_verified, true);

  await t.step("the nearest ancestor that registered itself wins", async () => {
    const r = await whoami();
    assertEquals(r.code, 0, r.stderr);
    const me = JSON.parse(r.stdout) as Row;
    assertEquals([me.session_pid, me.agent, me.reason], [shell.pid, "inner", "running"]);
  });
  await t.step("a record whose start token is not the process's is passed over", async () => {
    writeJson(inner.path, { ...inner, start_token: "1" });
    const r = await shell.hook("roster whoami");
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout.startsWith(`outer session ${Deno.pid} (alive: running), in `), true);
  });
  await t.step("none: exit 3 (not found) with a message, nothing on stdout", async () => {
    await rosterJson(home, ["unregister", "--pid", String(Deno.pid)]);
    const r = await whoami();
    assertEquals([r.code, r.stdout], [3, ""]);
    assertMatch(r.stderr, /^roster: No registered live session owns this process/);
  });
});
