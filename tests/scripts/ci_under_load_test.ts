/**
 * scripts/ci_under_load.sh, the load drill, on a small scale: it starts the Codex-like server and
 * the fake Claude session (whose session file is only in the drill's own HOME), runs the stages
 * it is given, says how each run went, and leaves no process of its own behind.
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { cleanEnv, pidsMentioning, ROOT, run } from "../helpers.ts";

Deno.test({
  name:
    "the load drill runs its stages beside a codex app-server and a Claude session, and cleans up",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const tmp = Deno.makeTempDirSync({ prefix: "roster-drill-test-" });
    try {
      const env = {
        ...cleanEnv(),
        NO_COLOR: "1",
        TMPDIR: tmp,
        DRILL_LOAD: "1",
        DRILL_PROCS: "5",
        DRILL_WARMUP: "0",
      };
      const r = await run(
        "bash",
        [`${ROOT}scripts/ci_under_load.sh`, "--runs", "1", "layers"],
        env,
      );
      assertEquals(r.code, 0, r.stdout + r.stderr);
      assertMatch(r.stdout, /a codex app-server \(pid \d+\), a Claude session \(pid \d+\)/);
      assertMatch(
        r.stdout,
        /^ {2}run 1: passed in \d+m\d+s \(load min [\d.]+, mean [\d.]+, max [\d.]+\): 1 passed, 0 failed$/m,
      );
      assertMatch(r.stdout, /^1 of 1 runs passed$/m);
      assertEquals(pidsMentioning(tmp), [], "the drill left processes running");
      assertEquals([...Deno.readDirSync(tmp)], [], "the drill left its directory");
    } finally {
      Deno.removeSync(tmp, { recursive: true });
    }
  },
});
