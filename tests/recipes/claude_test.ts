/**
 * The Claude Code recipe of docs/hooks.md, end to end: its SessionStart and SessionEnd commands
 * run through `sh -c` under a stand-in `claude` process, as Claude Code runs them.
 */
import { assert, assertEquals } from "../assert.ts";
import { rosterJson, tempDir, writeJson } from "../helpers.ts";
import type { Row } from "../../src/registry/record.ts";
import {
  atPid,
  canForcePid,
  Harness,
  hookCommands,
  installRoster,
  recipe,
  recipeEnv,
  standIn,
} from "./harness.ts";

const config = recipe("claude");
const [START] = hookCommands(config, "SessionStart");
const [END] = hookCommands(config, "SessionEnd");
const SESSION = "5f0c2b1e-0000-4000-8000-000000000001";

async function setUp() {
  const dir = await tempDir("roster-recipe-");
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  const claude = standIn(dir.path, "claude");
  const env = recipeEnv(dir.path, home, { CLAUDE_CODE_SESSION_ID: SESSION });
  const start = () => Harness.start(claude, env, dir.path);
  const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);
  return { dir, home, start, rows };
}

Deno.test("recipe: Claude Code SessionStart registers, SessionEnd unregisters", async (t) => {
  const { dir, start, rows } = await setUp();
  await using _dir = dir;
  await using claude = start();
  const input = JSON.stringify({ session_id: SESSION, hook_event_name: "SessionStart" });

  await t.step("SessionStart registers the claude process, found by walking up", async () => {
    const r = await claude.hook(START, input);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    const all = await rows();
    assertEquals(all.length, 1);
    const row = all[0];
    assertEquals(
      [row.session_pid, row.agent, row.pid_source, row.session_id, row.liveness, row.reason],
      [claude.pid, "claude", "ancestor", SESSION, "alive", "running"],
    );
  });

  await t.step("SessionStart firing again (resume) leaves one record", async () => {
    const r = await claude.hook(START, input);
    assertEquals(r.code, 0, r.stderr);
    const all = await rows();
    assertEquals(all.map((x) => x.session_pid), [claude.pid]);
  });

  await t.step("SessionEnd removes it", async () => {
    const r = await claude.hook(END, JSON.stringify({ hook_event_name: "SessionEnd" }));
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    assertEquals(await rows(), []);
  });

  await t.step("SessionEnd without a record exits 0 and says nothing", async () => {
    const r = await claude.hook(END);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
  });
});

Deno.test("recipe: Claude Code SessionEnd leaves a record whose start token differs", async () => {
  const { dir, home, start, rows } = await setUp();
  await using _dir = dir;
  await using claude = start();
  assertEquals((await claude.hook(START)).code, 0);
  const [row] = await rows();
  // A crash-restart of the same pid: the record names the earlier process's start token.
  writeJson(row.path, { ...row, start_token: String(Number(row.start_token) + 1) });
  const before = await rosterJson<Row[]>(home, ["list", "--all"]);
  assertEquals([before[0].liveness, before[0].reason], ["dead", "pid-reused"]);
  const r = await claude.hook(END);
  assertEquals(r.code, 0, r.stderr);
  const after = await rows();
  assertEquals(after.map((x) => [x.session_pid, x.start_token]), [[
    claude.pid,
    String(Number(row.start_token) + 1),
  ]]);
});

Deno.test({
  name: "recipe: Claude Code after a crash-restart on the same pid (real PID reuse)",
  ignore: !canForcePid(),
  async fn() {
    const { dir, start, rows } = await setUp();
    await using _dir = dir;
    for (let attempt = 0; attempt < 5; attempt++) {
      const first = start();
      assertEquals((await first.hook(START)).code, 0);
      const [old] = await rows();
      assertEquals(old.session_pid, first.pid);
      await first.crash(); // no SessionEnd
      const second = await atPid(first.pid, start);
      if (second === null) continue;
      await using _second = second;
      // The late end hook of the restarted process must not remove the crashed one's record...
      const r = await second.hook(END);
      assertEquals(r.code, 0, r.stderr);
      let all = await rows();
      assertEquals(all.map((x) => [x.start_token, x.reason]), [[old.start_token, "pid-reused"]]);
      // ...while its own start hook takes the pid over, and its end hook removes that.
      assertEquals((await second.hook(START)).code, 0);
      all = await rows();
      assertEquals(all.length, 1);
      assert(all[0].start_token !== old.start_token);
      assertEquals(all[0].reason, "running");
      assertEquals((await second.hook(END)).code, 0);
      assertEquals(await rows(), []);
      return;
    }
    throw new Error("Could not force PID reuse in 5 attempts");
  },
});
