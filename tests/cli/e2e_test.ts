/**
 * End to end: the CLI run exactly as a hook runs it (`deno run ... main.ts ...`), against
 * real processes and a temp home.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  BOOT_HISTORY,
  cleanEnv,
  cliArgs,
  exists,
  hostDir,
  roster,
  rosterJson,
  spawnSleeper,
  spawnWritten,
  spawnZombie,
  tempDir,
  writeJson,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { assertSchema } from "../schema.ts";

type Prune = { removed: Row[]; dead_removed: number; unknown_removed: number; kept: number };

const rowOf = (rows: Row[], pid: number) => rows.find((r) => r.session_pid === pid);

Deno.test("liveness of real processes", async (t) => {
  await using home = await tempDir();
  await t.step("a live child is alive/running", async () => {
    await using s = spawnSleeper();
    const row = await rosterJson<Row>(home.path, [
      "register",
      "--pid",
      String(s.pid),
      "--agent",
      "t",
    ]);
    assertEquals([row.liveness, row.reason, row.pid_source, row.pid_verified], [
      "alive",
      "running",
      "flag",
      false,
    ]);
    const rows = await rosterJson<Row[]>(home.path, ["list"]);
    assertEquals(rowOf(rows, s.pid)?.reason, "running");
  });
  await t.step(
    "killed and reaped it is dead/exited, hidden by default, shown with --all",
    async () => {
      const s = spawnSleeper();
      await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
      await s.kill();
      assertEquals(rowOf(await rosterJson<Row[]>(home.path, ["list"]), s.pid), undefined);
      const all = await rosterJson<Row[]>(home.path, ["list", "--all"]);
      assertEquals([rowOf(all, s.pid)?.liveness, rowOf(all, s.pid)?.reason], ["dead", "exited"]);
      const dead = await rosterJson<Row[]>(home.path, ["list", "--state", "dead"]);
      assert(dead.every((r) => r.liveness === "dead") && rowOf(dead, s.pid) !== undefined);
    },
  );
  await t.step("a zombie child is dead/zombie", async () => {
    await using zombie = await spawnZombie();
    // A zombie cannot be registered (it is not running): plant its record by hand.
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(Deno.pid)]);
    const path = `${hostDir(home.path)}/${zombie.pid}.json`;
    writeJson(path, { ...row, session_pid: zombie.pid, start_token: null });
    const all = await rosterJson<Row[]>(home.path, ["list", "--all"]);
    const r = rowOf(all, zombie.pid);
    assertEquals([r?.liveness, r?.reason], ["dead", "zombie"]);
  });
  await t.step("another boot id is dead/rebooted", async () => {
    await using s = spawnSleeper();
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    // Written in a boot this machine ran before (registry/boots.ts), before this one started:
    // only then is another boot a reboot.
    writeJson(row.path, {
      ...row,
      boot_id: "00000000-0000-0000-0000-000000000000",
      registered_at: "2001-01-01T00:00:00.000Z",
    });
    Deno.writeTextFileSync(BOOT_HISTORY, "00000000-0000-0000-0000-000000000000\n", {
      append: true,
    });
    const r = rowOf(await rosterJson<Row[]>(home.path, ["list", "--all"]), s.pid);
    assertEquals([r?.liveness, r?.reason], ["dead", "rebooted"]);
  });
  await t.step(
    "another host's record is unknown/other-host and survives a plain prune",
    async () => {
      await using s = spawnSleeper();
      const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
      Deno.mkdirSync(`${home.path}/sessions/elsewhere`, { recursive: true });
      const other = `${home.path}/sessions/elsewhere/${s.pid}.json`;
      writeJson(other, { ...row, host: "elsewhere" });
      const r = (await rosterJson<Row[]>(home.path, ["list"])).find((x) => x.path === other);
      assertEquals([r?.liveness, r?.reason], ["unknown", "other-host"]);
      await s.kill();
      const p = await rosterJson<Prune>(home.path, ["prune"]);
      assert(p.removed.every((x) => x.path !== other));
      assert(Deno.statSync(other).isFile);
    },
  );
});

Deno.test("register finds a fake harness named claude among its ancestors", async () => {
  await using dir = await tempDir();
  await using home = await tempDir();
  const fake = `${dir.path}/claude`;
  Deno.copyFileSync("/bin/bash", fake);
  Deno.chmodSync(fake, 0o755);
  const cmd = [Deno.execPath(), ...cliArgs(["register", "--home", home.path, "--json"])]
    .map((a) => `'${a}'`).join(" ");
  const env = cleanEnv();
  // `; true` keeps the fake harness from exec-ing into its child.
  const child2 = await spawnWritten(
    new Deno.Command(fake, {
      args: ["-c", `${cmd}; true`],
      stdout: "piped",
      stderr: "piped",
      env,
      clearEnv: true,
    }),
  );
  const out2 = await child2.output();
  assertEquals(out2.code, 0, new TextDecoder().decode(out2.stderr));
  assertSchema(["register", "--json"], new TextDecoder().decode(out2.stdout));
  const row = JSON.parse(new TextDecoder().decode(out2.stdout)) as Row;
  assertEquals(row.session_pid, child2.pid);
  assertEquals([row.pid_source, row.pid_verified, row.agent], ["ancestor", true, "claude"]);
});

Deno.test("20 concurrent register+prune pairs leave exactly the live records, each whole", async () => {
  await using home = await tempDir();
  const sleepers = Array.from({ length: 20 }, () => spawnSleeper());
  try {
    const results = await Promise.all(sleepers.flatMap((s) => [
      roster(["register", "--pid", String(s.pid), "--home", home.path, "--quiet"]),
      roster(["prune", "--home", home.path, "--json"]),
    ]));
    for (const r of results) assertEquals(r.code, 0, r.stderr);
    // The cleanup queue's files (.sweep, .sweep.next) are hints beside the records, and the
    // lock's gate (.lock.gate) is there once a register has passed it.
    const names = [...Deno.readDirSync(hostDir(home.path))].map((e) => e.name)
      .filter((n) => !n.startsWith(".sweep") && n !== ".lock.gate").sort();
    assertEquals(names, [".lock", ...sleepers.map((s) => `${s.pid}.json`)].sort());
    const rows = await rosterJson<Row[]>(home.path, ["list"]);
    assertEquals(rows.length, 20);
    assert(rows.every((r) => r.liveness === "alive" && !r.malformed));
  } finally {
    for (const s of sleepers) await s.kill();
  }
});

Deno.test("register: owner precedence and refresh", async (t) => {
  await using home = await tempDir();
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  await t.step("--pid beats ROSTER_SESSION_PID beats CLAUDE_PID", async () => {
    const env = { ROSTER_SESSION_PID: String(a.pid), CLAUDE_PID: String(b.pid) };
    let row = await rosterJson<Row>(home.path, ["register", "--pid", String(b.pid)], { env });
    assertEquals([row.session_pid, row.pid_source], [b.pid, "flag"]);
    row = await rosterJson<Row>(home.path, ["register"], { env });
    assertEquals([row.session_pid, row.pid_source], [a.pid, "ROSTER_SESSION_PID"]);
    row = await rosterJson<Row>(home.path, ["register"], { env: { CLAUDE_PID: String(b.pid) } });
    assertEquals([row.session_pid, row.pid_source], [b.pid, "CLAUDE_PID"]);
  });
  await t.step("a set but invalid value is an error, never a fall-through", async () => {
    for (const bad of ["", "0", "-1", "abc", "1e3", " 42", "42abc", "99999999999"]) {
      const r = await roster(["register", "--home", home.path], {
        env: { ROSTER_SESSION_PID: bad, CLAUDE_PID: String(a.pid) },
      });
      assertEquals(r.code, 2, bad);
      assertMatch(r.stderr, /^roster: Invalid ROSTER_SESSION_PID: /);
      assertEquals(r.stdout, "");
    }
  });
  await t.step("a pid that is not running is an error", async () => {
    const s = spawnSleeper();
    await s.kill();
    const r = await roster(["register", "--home", home.path, "--pid", String(s.pid)]);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /Invalid --pid: no running process has pid/);
  });
  await t.step("re-registering refreshes one file", async () => {
    const r1 = await rosterJson<Row>(home.path, [
      "register",
      "--pid",
      String(a.pid),
      "--agent",
      "x",
    ]);
    const r2 = await rosterJson<Row>(home.path, [
      "register",
      "--pid",
      String(a.pid),
      "--agent",
      "y",
    ], {
      env: { ROSTER_SESSION_ID: "s-1", TMUX_PANE: "%3" },
    });
    assertEquals(r1.path, r2.path);
    const rows = await rosterJson<Row[]>(home.path, ["list", "--agent", "y"]);
    assertEquals(rows.map((r) => [r.session_pid, r.session_id, r.tmux_pane]), [[
      a.pid,
      "s-1",
      "%3",
    ]]);
    assertEquals((await rosterJson<Row[]>(home.path, ["list", "--agent", "x"])).length, 0);
  });
  await t.step("register removes ended records past retention, never unknown ones", async () => {
    const dead = spawnSleeper();
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(dead.pid)]);
    await dead.kill();
    const bogus = `${hostDir(home.path)}/777777.json`;
    Deno.writeTextFileSync(bogus, "{}");
    Deno.chmodSync(bogus, 0o600);
    // Within retention: kept, stamped with when it was first seen ended.
    await rosterJson(home.path, ["register", "--pid", String(a.pid)]);
    assert(exists(row.path));
    assertMatch(JSON.parse(Deno.readTextFileSync(row.path)).ended_at, /^\d{4}-/);
    // With no retention: removed by the next registration.
    await rosterJson(home.path, ["register", "--pid", String(a.pid)], {
      env: { ROSTER_RETENTION: "0s" },
    });
    assert(!exists(row.path));
    assert(exists(bogus));
  });
  await t.step("quiet prints nothing; plain prints one line", async () => {
    const q = await roster(["register", "--home", home.path, "--pid", String(a.pid), "--quiet"]);
    assertEquals([q.code, q.stdout, q.stderr], [0, "", ""]);
    const p = await roster([
      "register",
      "--home",
      home.path,
      "--pid",
      String(a.pid),
      "--agent",
      "zed",
    ]);
    assertEquals(p.stdout, `Registered zed session ${a.pid} (alive: running)\n`);
  });
  await t.step("--cwd must exist and is stored as its real path", async () => {
    const bad = await roster([
      "register",
      "--home",
      home.path,
      "--pid",
      String(a.pid),
      "--cwd",
      "/no/such",
    ]);
    assertEquals(bad.code, 2);
    assertMatch(bad.stderr, /Invalid --cwd: no such directory: \/no\/such/);
    const row = await rosterJson<Row>(home.path, [
      "register",
      "--pid",
      String(a.pid),
      "--cwd",
      "/tmp/../tmp",
    ]);
    assertEquals(row.cwd, Deno.realPathSync("/tmp"));
  });
});

Deno.test("review fixes, end to end", async (t) => {
  await using home = await tempDir();
  await using s = spawnSleeper();
  await t.step(
    "a thread id is not a process: register refuses it, token says no such process",
    async () => {
      const tid = [...Deno.readDirSync(`/proc/${Deno.pid}/task`)].map((e) => Number(e.name))
        .find((x) => x !== Deno.pid)!;
      const r = await roster(["register", "--pid", String(tid), "--home", home.path]);
      assertEquals(r.code, 2);
      assertMatch(r.stderr, /^roster: Invalid --pid: no running process has pid /);
      const tok = await roster(["token", String(tid)]);
      assertEquals(tok.code, 3, tok.stderr);
    },
  );
  await t.step(
    "a record filed under another host's directory is malformed, never judged",
    async () => {
      const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
      Deno.mkdirSync(`${home.path}/sessions/other`, { recursive: true });
      const misfiled = `${home.path}/sessions/other/999998.json`;
      writeJson(misfiled, { ...row, session_pid: 999998 });
      const rows = await rosterJson<Row[]>(home.path, ["list", "--all"]);
      const r = rows.find((x) => x.path === misfiled);
      assertEquals([r?.reason, r?.detail], ["malformed", "host differs from its directory: other"]);
      const p = await rosterJson<{ removed: Row[] }>(home.path, ["prune"]);
      assertEquals(p.removed, []);
    },
  );
  await t.step({
    name: "a prune in another pid namespace (a container) keeps this host's live records",
    ignore: !canUnshare(),
    fn: async () => {
      const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
      assert(row.pid_ns !== null);
      const out = await new Deno.Command("unshare", {
        args: [
          "-p",
          "-f",
          "--mount-proc",
          Deno.execPath(),
          ...cliArgs(["prune", "--home", home.path, "--json"]),
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      assertSchema(["prune", "--json"], new TextDecoder().decode(out.stdout));
      assertEquals(JSON.parse(new TextDecoder().decode(out.stdout)).removed, []);
      const again = (await rosterJson<Row[]>(home.path, ["list"])).find((x) => x.path === row.path);
      assertEquals(again?.reason, "running");
    },
  });
  await t.step("--version --json prints JSON", async () => {
    const r = await roster(["--version", "--json"]);
    assertEquals(JSON.parse(r.stdout).name, "roster");
  });
  await t.step("a reader that goes away is not a failure", async () => {
    const sh = await new Deno.Command("bash", {
      args: [
        "-c",
        `${
          [Deno.execPath(), ...cliArgs(["list", "--all", "--json", "--home", home.path])].map((a) =>
            `'${a}'`
          ).join(" ") + " | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}"
        }`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(new TextDecoder().decode(sh.stderr), "");
    assertEquals(new TextDecoder().decode(sh.stdout).trim(), "0");
  });
  await t.step("unregister with no session to find exits 0 with a note", async () => {
    const r = await roster(["unregister", "--home", home.path]);
    assertEquals([r.code, r.stdout], [0, ""]);
    assertMatch(r.stderr, /^roster: Nothing to unregister: Cannot tell which session this is/);
  });
  await t.step("a missing value for a flag with choices lists them", async () => {
    const r = await roster(["list", "--state"]);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /Missing value for --state: expected one of alive, dead, unknown/);
  });
});

function canUnshare(): boolean {
  try {
    const ok = new Deno.Command("unshare", { args: ["-p", "-f", "--mount-proc", "true"] })
      .outputSync().success;
    if (!ok) console.log("skipped: cannot make a pid namespace here (needs root)");
    return ok;
  } catch {
    console.log("skipped: unshare is not installed");
    return false;
  }
}
