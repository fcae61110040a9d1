/**
 * Two OSes, one home, one hostname (issue 22 item 7): WSL2 beside Windows, whose hostnames match
 * by default. A record of another OS is another host's, `unknown (other-host)`, and prune keeps
 * it; Windows records go to a place of their own, never to the host directory this Linux reads
 * as its older layout. The Windows half runs under Wine (tests/windows/other_os_test.ts).
 */
import { assertEquals } from "../assert.ts";
import {
  hostDir,
  hostName,
  NO_PID,
  oldHostDir,
  recordOf,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import { placeDirName } from "../../src/registry/layout.ts";
import type { Row } from "../../src/registry/row.ts";

Deno.test({
  name: "a Windows record beside Linux ones under one hostname: other-host, kept",
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    await using home = await tempDir();
    await using s = spawnSleeper();
    const own = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    await t.step("register writes its OS, in its place's directory under places/", () => {
      assertEquals(own.os, "linux");
      assertEquals(JSON.parse(Deno.readTextFileSync(own.path)).os, "linux");
      assertEquals(own.path, `${hostDir(home.path)}/${s.pid}.json`);
    });
    // As a Windows roster writes them: no boot, machine or pid namespace; a FILETIME token. One
    // holds the pid of the live Linux session, one a pid no Linux process holds.
    const windows = (pid: number) => ({
      ...recordOf(own),
      session_pid: pid,
      pid_source: "flag",
      start_token: "windows:134080000000000000",
      boot_id: null,
      machine_id: null,
      pid_ns: null,
      host: hostName(),
      cwd: "C:\\work",
      registered_at: new Date().toISOString(),
      os: "windows",
    });
    const winDir = `${home.path}/places/${placeDirName({ host: hostName(), os: "windows" })}`;
    assertEquals(winDir, `${home.path}/places/${hostName()}~windows`);
    Deno.mkdirSync(winDir, { mode: 0o700 });
    writeJson(`${winDir}/${NO_PID}.json`, windows(NO_PID));
    writeJson(`${winDir}/${s.pid}.json`, windows(s.pid));
    // And one as a Windows roster before the os field wrote it: in the host's directory of the
    // first layout, which this Linux reads as its own older one.
    const { os: _os, ...older } = windows(NO_PID + 1);
    Deno.mkdirSync(oldHostDir(home.path), { recursive: true, mode: 0o700 });
    writeJson(`${oldHostDir(home.path)}/${NO_PID + 1}.json`, older);

    const judged = async () =>
      (await rosterJson<Row[]>(home.path, ["list", "--all"]))
        .map((r) => [r.session_pid, r.os, r.liveness, r.reason, r.malformed])
        .sort((a, b) => `${a}` < `${b}` ? -1 : 1);
    const expected = [
      [NO_PID, "windows", "unknown", "other-host", false],
      [NO_PID + 1, null, "unknown", "other-host", false],
      [s.pid, "linux", "alive", "running", false],
      [s.pid, "windows", "unknown", "other-host", false],
    ].sort((a, b) => `${a}` < `${b}` ? -1 : 1);
    await t.step("each Windows record is other-host, the Linux one running", async () => {
      assertEquals(await judged(), expected);
    });
    await t.step("prune, and prune --older-than 7d, keep them all", async () => {
      for (const args of [["prune"], ["prune", "--older-than", "7d"]]) {
        const r = await roster([...args, "--home", home.path]);
        assertEquals(r.code, 0, r.stderr);
      }
      assertEquals(await judged(), expected);
    });
  },
});
