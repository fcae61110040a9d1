/**
 * The Claude Code recipe of docs/hooks.md, end to end: its SessionStart and SessionEnd commands
 * run through `sh -c` under a stand-in `claude` process, as Claude Code runs them.
 */
import { assertEquals } from "../assert.ts";
import { rosterJson, writeJson } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { END, SESSION, setUp, START } from "./claude.ts";

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
