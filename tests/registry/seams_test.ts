/**
 * Where the registry, the lifecycle and the ledger meet (issue 22), through the CLI as hooks
 * and a restore engine run it: resume finds the ended predecessor of a successor that kept its
 * session id, a link is never replaced, re-registering keeps a parked session parked.
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { hostDir, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";

type Row = Record<string, unknown> & {
  session_pid: number;
  session_id: string | null;
  liveness: string;
  reason: string;
  path: string;
  successor: { pid: number; session_id: string | null } | null;
};

const rows = (home: string) => rosterJson<Row[]>(home, ["list", "--all"]);

/** Registers a sleeper as a session of `sid`; with `crash`, kills it (and reaps it). */
async function session(home: string, sid: string, crash: boolean) {
  const s = spawnSleeper();
  await rosterJson(home, [
    "register",
    "--pid",
    String(s.pid),
    "--agent",
    "claude",
    "--session-id",
    sid,
  ]);
  if (crash) await s.kill();
  return s;
}

Deno.test("resume --session-id picks the ended predecessor, not the live successor", async () => {
  await using home = await tempDir();
  // `claude --resume S` keeps the id: the crashed session and its successor share it.
  const old = await session(home.path, "S", true);
  await using next = await session(home.path, "S", false);
  const r = await roster([
    "resume",
    "--session-id",
    "S",
    "--successor-pid",
    String(next.pid),
    "--home",
    home.path,
    "--json",
  ]);
  assertEquals(r.code, 0, r.stderr);
  const resumed = JSON.parse(r.stdout) as Row;
  assertEquals([resumed.session_pid, resumed.reason], [old.pid, "resumed"]);
  assertEquals(resumed.successor?.pid, next.pid);
  const live = (await rows(home.path)).find((x) => x.session_pid === next.pid)!;
  assertEquals([live.liveness, live.successor], ["alive", null]);
});

Deno.test("resume never replaces a link: an identical retry passes, another successor fails", async (t) => {
  await using home = await tempDir();
  const old = await session(home.path, "S", true);
  await using first = await session(home.path, "S", false);
  await using second = await session(home.path, "T", false);
  const resume = (successor: number, by = ["--pid", String(old.pid)]) =>
    roster(["resume", ...by, "--successor-pid", String(successor), "--home", home.path]);
  assertEquals((await resume(first.pid)).code, 0);
  const before = Deno.readTextFileSync(`${hostDir(home.path)}/${old.pid}.json`);

  await t.step("the same successor again: accepted, nothing written", async () => {
    const again = await resume(first.pid);
    assertEquals(again.code, 0, again.stderr);
    const bySid = await resume(first.pid, ["--session-id", "S"]);
    assertEquals(bySid.code, 0, bySid.stderr);
    assertEquals(Deno.readTextFileSync(`${hostDir(home.path)}/${old.pid}.json`), before);
  });

  await t.step("another successor: exit 2 naming the existing link, the link kept", async () => {
    const other = await resume(second.pid);
    assertEquals(other.code, 2, other.stderr);
    assertMatch(other.stderr, new RegExp(`already resumed by pid ${first.pid} \\(S\\)`));
    assertEquals(Deno.readTextFileSync(`${hostDir(home.path)}/${old.pid}.json`), before);
    const all = await rows(home.path);
    const next = all.find((x) => x.session_pid === first.pid)!;
    assertEquals((next.predecessor as { pid: number }).pid, old.pid, "first keeps its predecessor");
  });
});

Deno.test("a parked session stays parked when its hooks register it again", async (t) => {
  await using home = await tempDir();
  await using s = await session(home.path, "P", false);
  const register = () =>
    rosterJson<Row>(home.path, ["register", "--pid", String(s.pid), "--session-id", "P"]);
  assertEquals((await roster(["park", "--pid", String(s.pid), "--home", home.path])).code, 0);

  await t.step("register again (resume, /clear, compaction): still parked", async () => {
    const row = await register();
    assertEquals([row.liveness, row.reason], ["dead", "parked"]);
    const listed = (await rows(home.path)).find((x) => x.session_pid === s.pid)!;
    assertEquals([listed.liveness, listed.reason], ["dead", "parked"]);
    assertMatch(String(listed.parked_at), /^\d{4}-/);
    const check = await roster(["check", String(s.pid), "--home", home.path]);
    assertEquals(check.code, 3, "check: still not live");
  });

  await t.step("park --undo: judged by its process again, and a register keeps that", async () => {
    const r = await roster(["park", "--undo", "--pid", String(s.pid), "--home", home.path]);
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, /^Un-parked/);
    const row = await register();
    assertEquals([row.liveness, row.reason, row.parked_at], ["alive", "running", null]);
  });
});
