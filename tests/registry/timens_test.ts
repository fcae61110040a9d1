/**
 * Time namespaces (`unshare --time`, LXC time offsets, CRIU restores): the kernel shows
 * /proc/<pid>/stat starttime shifted by the READER's boottime offset. The same process must
 * have the same start token read from any time namespace.
 */
import { assertEquals } from "../assert.ts";
import {
  canUnshareTime,
  cleanEnv,
  cliArgs,
  rosterJson,
  run,
  spawnSleeper,
  tempDir,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

/** roster run from inside a new time namespace whose boottime is `offset` seconds ahead. */
function inTimeNs(offset: number, args: string[]) {
  return run(
    "unshare",
    ["--time", "--boottime", String(offset), Deno.execPath(), ...cliArgs(args)],
    { ...cleanEnv(), NO_COLOR: "1" },
  );
}

/** `roster register --pid PID --json` from inside a time namespace `offset` seconds ahead. */
function registerInside(offset: number, pid: number, home: string) {
  return inTimeNs(offset, ["register", "--pid", String(pid), "--json", "--home", home]);
}

Deno.test({
  name: "a start token is the same from another time namespace",
  ignore: !canUnshareTime(),
  async fn(t) {
    await using sleeper = spawnSleeper();
    await using home = await tempDir();
    const outside = await rosterJson<{ token: string; start_token: string }>(home.path, [
      "token",
      String(sleeper.pid),
    ]);
    await t.step("roster token agrees inside and outside", async () => {
      const r = await inTimeNs(1000, ["token", String(sleeper.pid), "--json"]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals(JSON.parse(r.stdout).start_token, outside.start_token);
    });
    await t.step("token --verify from inside: the same process (exit 0)", async () => {
      const r = await inTimeNs(1000, ["token", "--verify", String(sleeper.pid), outside.token]);
      assertEquals(r.code, 0, r.stderr);
    });
    await t.step("a record registered outside is alive judged from inside", async () => {
      await rosterJson<Row>(home.path, ["register", "--pid", String(sleeper.pid)]);
      const r = await inTimeNs(3600, ["list", "--all", "--json", "--home", home.path]);
      assertEquals(r.code, 0, r.stderr);
      const row = (JSON.parse(r.stdout) as Row[]).find((x) => x.session_pid === sleeper.pid);
      assertEquals([row?.liveness, row?.reason], ["alive", "running"]);
    });
    await t.step("prune and register's cleanup from inside keep it", async () => {
      await using other = spawnSleeper();
      const reg = await registerInside(3600, other.pid, home.path);
      assertEquals(reg.code, 0, reg.stderr);
      const p = await inTimeNs(3600, ["prune", "--json", "--home", home.path]);
      assertEquals(p.code, 0, p.stderr);
      assertEquals((JSON.parse(p.stdout) as { removed: Row[] }).removed, []);
      const rows = await rosterJson<Row[]>(home.path, ["list", "--all"]);
      assertEquals(rows.some((x) => x.session_pid === sleeper.pid && x.reason === "running"), true);
    });
    await t.step("and the other way round", async () => {
      await using other = spawnSleeper();
      const reg = await registerInside(500, other.pid, home.path);
      assertEquals(reg.code, 0, reg.stderr);
      const row = (await rosterJson<Row[]>(home.path, ["list", "--all"]))
        .find((x) => x.session_pid === other.pid);
      assertEquals([row?.liveness, row?.reason], ["alive", "running"]);
    });
  },
});
