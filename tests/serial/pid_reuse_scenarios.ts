/**
 * The real PID-reuse scenarios, run by pid_reuse_test.ts as the first process of a private pid
 * namespace (tests/pidns.ts): `deno run -A pid_reuse_scenarios.ts <name>` exits 0 when the
 * scenario holds and throws (exit 1, with the assertion) when it does not.
 */
import { assert, assertEquals } from "../assert.ts";
import { rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { atPid } from "../pidns.ts";
import { END, setUp, START } from "../recipes/claude.ts";

const rowOf = (rows: Row[], pid: number) => rows.find((r) => r.session_pid === pid);

/** A stale record whose pid now names another live process is dead/pid-reused. */
async function reusedPid(): Promise<void> {
  await using home = await tempDir();
  for (let attempt = 0; attempt < 8; attempt++) {
    const first = spawnSleeper();
    const pid = first.pid;
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(pid)]);
    assertEquals(row.reason, "running");
    await first.kill();
    const second = await atPid(pid, () => spawnSleeper());
    if (second === null) continue; // another fork won the race: try again
    await using _second = second;
    const r = rowOf(await rosterJson<Row[]>(home.path, ["list", "--all"]), pid);
    assertEquals([r?.liveness, r?.reason], ["dead", "pid-reused"]);
    return;
  }
  throw new Error("Could not force PID reuse in 8 attempts");
}

/** Claude Code crashes and a new one starts on the same pid: its hooks act on its own record. */
async function claudeRestart(): Promise<void> {
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
    // ...while its own start hook takes the pid over and its end hook removes that; the crashed
    // session's ended row is kept beside it (the session lifecycle: what a restore needs).
    assertEquals((await second.hook(START)).code, 0);
    all = await rows();
    const running = all.filter((x) => x.reason === "running");
    assertEquals(running.length, 1);
    assert(running[0].start_token !== old.start_token);
    assertEquals(
      all.filter((x) => x !== running[0]).map((x) => [x.start_token, x.reason]),
      [[old.start_token, "pid-reused"]],
    );
    assertEquals((await second.hook(END)).code, 0);
    all = await rows();
    assertEquals(all.map((x) => [x.start_token, x.reason]), [[old.start_token, "pid-reused"]]);
    return;
  }
  throw new Error("Could not force PID reuse in 5 attempts");
}

export const SCENARIOS: Record<string, () => Promise<void>> = { reusedPid, claudeRestart };

if (import.meta.main) {
  const name = Deno.args[0];
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(`No such scenario: ${name}`);
  await scenario();
  console.log(`scenario ${name}: ok`);
}
