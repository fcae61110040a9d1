/**
 * Real PID reuse: these tests rewind the machine-wide pid counter (/proc/sys/kernel/ns_last_pid)
 * so that a new process gets a pid that was just freed. Run in parallel with other tests, that
 * rewind hands their new processes pids that those tests freed and expect to stay dead, so this
 * directory runs on its own, after the parallel run (deno.json's `ok` and `test` tasks).
 */
import { assert, assertEquals } from "../assert.ts";
import { canForcePid, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/record.ts";
import { atPid } from "../recipes/harness.ts";
import { END, setUp, START } from "../recipes/claude.ts";

const rowOf = (rows: Row[], pid: number) => rows.find((r) => r.session_pid === pid);

Deno.test({
  name: "real PID reuse through ns_last_pid is dead/pid-reused",
  ignore: !canForcePid(),
  async fn() {
    await using home = await tempDir();
    for (let attempt = 0; attempt < 8; attempt++) {
      const first = spawnSleeper();
      const pid = first.pid;
      const row = await rosterJson<Row>(home.path, ["register", "--pid", String(pid)]);
      assertEquals(row.reason, "running");
      await first.kill();
      Deno.writeTextFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
      await using second = spawnSleeper();
      if (second.pid !== pid) continue; // another fork won the race: try again
      // The stale record now names a live process, but not the one that registered.
      const r = rowOf(await rosterJson<Row[]>(home.path, ["list", "--all"]), pid);
      assertEquals([r?.liveness, r?.reason], ["dead", "pid-reused"]);
      return;
    }
    throw new Error("Could not force PID reuse in 8 attempts");
  },
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
