/**
 * Cloned machines share a place (issue 24 item 7): two clones of one VM image, one hostname and
 * one /etc/machine-id, sharing a home over NFS, called each other's live sessions
 * `dead (rebooted)` and pruned them. A record of another boot is a reboot only where this
 * machine's boot history (registry/boots.ts, on its own disk) holds that boot; else it is
 * `unknown (other-host)`, and `doctor` says another machine shares the machine id. The clone
 * is faked by its record's boot id, the history by $ROSTER_BOOT_HISTORY.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  BOOT_HISTORY,
  NO_PID,
  recordOf,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

const CLONE_BOOT = "c1c1c1c1-0000-4000-8000-000000000001";
const PAST_BOOT = "9a9a9a9a-0000-4000-8000-000000000002";

Deno.test({
  name: "a clone's live session sharing the place is unknown, kept, and doctor says why",
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const history = `${dir.path}/boots`;
    const env = { ROSTER_BOOT_HISTORY: history };
    await using s = spawnSleeper();
    const own = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)], { env });
    await t.step("register notes this boot in the machine's history", () => {
      assertEquals(Deno.readTextFileSync(history), `${own.boot_id}\n`);
      assert(BOOT_HISTORY !== history);
    });
    // The clone's session: the same host, machine id and pid namespace, its own boot. Its pid
    // is one no process here holds, as a clone's pids are.
    const place = own.path.slice(0, own.path.lastIndexOf("/"));
    const clone = { ...recordOf(own), session_pid: NO_PID, boot_id: CLONE_BOOT };
    writeJson(`${place}/${NO_PID}.json`, clone);
    // And one of a boot this machine did run before, written then: that one rebooted.
    const past = {
      ...recordOf(own),
      session_pid: NO_PID + 1,
      boot_id: PAST_BOOT,
      registered_at: "2001-01-01T00:00:00.000Z",
    };
    writeJson(`${place}/${NO_PID + 1}.json`, past);
    Deno.writeTextFileSync(history, `${PAST_BOOT}\n${own.boot_id}\n`);

    /** The clone's session under `pid`, in the usual file of that pid. */
    const cloneAt = (pid: number) =>
      writeJson(`${place}/${pid}.json`, {
        ...recordOf(own),
        session_pid: pid,
        boot_id: CLONE_BOOT,
      });
    const judged = async () =>
      (await rosterJson<Row[]>(home, ["list", "--all"], { env }))
        .map((r) => [r.session_pid, r.liveness, r.reason])
        .sort();
    await t.step(
      "the clone's record is unknown (other-host); this machine's past rebooted",
      async () => {
        assertEquals(
          await judged(),
          [
            [NO_PID, "unknown", "other-host"],
            [NO_PID + 1, "dead", "rebooted"],
            [s.pid, "alive", "running"],
          ].sort(),
        );
      },
    );
    await t.step("prune and prune --older-than 7d keep the clone's record", async () => {
      for (const args of [["prune"], ["prune", "--older-than", "7d"]]) {
        const r = await roster([...args, "--home", home], { env });
        assertEquals(r.code, 0, r.stderr);
      }
      assertEquals((await judged()).filter(([pid]) => pid === NO_PID), [
        [NO_PID, "unknown", "other-host"],
      ]);
    });
    await t.step(
      "a session here under a clone's pid: the clone's record is kept beside it",
      async () => {
        await using here = spawnSleeper();
        cloneAt(here.pid);
        const r = await roster(["register", "--pid", String(here.pid), "--home", home], { env });
        assertEquals(r.code, 0, r.stderr);
        assertEquals((await judged()).filter(([pid]) => pid === here.pid), [
          [here.pid, "alive", "running"],
          [here.pid, "unknown", "other-host"],
        ]);
        const rows = await rosterJson<Row[]>(home, ["list", "--all"], { env });
        const kept = rows.find((row) => row.session_pid === here.pid && row.liveness === "unknown");
        assertEquals([kept?.boot_id, kept?.ended_at ?? null], [CLONE_BOOT, null]);
      },
    );
    await t.step(
      "this session's record, moved aside by a clone's: its end hook finds it",
      async () => {
        await using mine = spawnSleeper();
        const r = await roster(["register", "--pid", String(mine.pid), "--home", home], { env });
        assertEquals(r.code, 0, r.stderr);
        // What the clone's register does with it: its own record under the usual name, this
        // one under a name of its own.
        Deno.renameSync(`${place}/${mine.pid}.json`, `${place}/${mine.pid}.zz0000.json`);
        cloneAt(mine.pid);
        const u = await roster(["unregister", "--pid", String(mine.pid), "--home", home], { env });
        assertEquals(u.code, 0, u.stderr);
        assertEquals((await judged()).filter(([pid]) => pid === mine.pid), [
          [mine.pid, "unknown", "other-host"],
        ]);
      },
    );
    await t.step("doctor warns that another machine shares this machine id", async () => {
      const r = await roster(["doctor", "--json", "--home", home], { env });
      const report = JSON.parse(r.stdout) as { problems: { what: string; advice: string }[] };
      const p = report.problems.find((p) => p.what.startsWith("Another machine shares"));
      assert(p !== undefined, r.stdout);
      assert(p.what.includes(CLONE_BOOT), p.what);
      assert(!p.what.includes(PAST_BOOT), p.what);
      assert(p.advice.includes("systemd-machine-id-setup"), p.advice);
    });
    await t.step(
      "without a history to prove it, the clone's record is still not dead",
      async () => {
        Deno.removeSync(history);
        const rows = await rosterJson<Row[]>(home, ["list", "--all"], {
          env: { ROSTER_BOOT_HISTORY: `${dir.path}/none/boots` },
        });
        const row = rows.find((r) => r.session_pid === NO_PID);
        assertEquals([row?.liveness, row?.reason], ["unknown", "other-host"]);
      },
    );
  },
});

Deno.test({
  name: "a disk copied from a running machine: its live boot in the history is not a reboot",
  ignore: Deno.build.os !== "linux", // why: the boot's start is Linux's btime
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const history = `${dir.path}/boots`;
    const env = { ROSTER_BOOT_HISTORY: history };
    await using s = spawnSleeper();
    const own = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)], { env });
    // The copy carries the other machine's history: its boot then, running still, is in it.
    Deno.writeTextFileSync(history, `${CLONE_BOOT}\n${own.boot_id}\n`);
    const place = own.path.slice(0, own.path.lastIndexOf("/"));
    const theirs = (pid: number, registered_at: string) =>
      writeJson(`${place}/${pid}.json`, {
        ...recordOf(own),
        session_pid: pid,
        boot_id: CLONE_BOOT,
        agent: "claude",
        session_id: `0000000${pid % 10}-1111-4222-8333-444444444444`,
        registered_at,
      });
    // Registered there since this machine booted: it may well run there.
    theirs(NO_PID, new Date().toISOString());
    // Written before this boot began: this machine's own past, crashed by the reboot.
    theirs(NO_PID + 1, "2001-01-01T00:00:00.000Z");
    await t.step("written since this boot: unknown (other-host), kept, not restored", async () => {
      const rows = await rosterJson<Row[]>(home, ["list", "--all"], { env });
      assertEquals(
        rows.filter((r) => r.session_pid !== s.pid).map((r) => [r.session_pid, r.reason]).sort(),
        [[NO_PID, "other-host"], [NO_PID + 1, "rebooted"]],
      );
      const prune = await roster(["prune", "--older-than", "7d", "--home", home], { env });
      assertEquals(prune.code, 0, prune.stderr);
      assert(Deno.statSync(`${place}/${NO_PID}.json`).isFile);
      const r = await roster(["restore", "--dry-run", "--json", "--home", home], { env });
      assertEquals(r.code, 0, r.stderr);
      const plan = JSON.parse(r.stdout) as { session_pid: number }[];
      assertEquals(plan.map((p) => p.session_pid), [NO_PID + 1], r.stdout);
    });
  },
});

Deno.test({
  name: "an older roster's records of another boot: a reboot only if proven (retest F1)",
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const env = { ROSTER_BOOT_HISTORY: `${dir.path}/boots` };
    await using s = spawnSleeper();
    const own = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)], { env });
    // Where roster e5ac3c4 files this place (sessions/<host>~<machine>.<pid ns>/): its records
    // carry no `os` and no boot it ran is in this machine's history.
    const place = own.path.slice(0, own.path.lastIndexOf("/"));
    const older = place.replace("/places/", "/sessions/");
    Deno.mkdirSync(older, { recursive: true, mode: 0o700 });
    const { os: _os, ...base } = recordOf(own);
    const session = (pid: number, registered_at: string) => ({
      ...base,
      session_pid: pid,
      boot_id: CLONE_BOOT,
      agent: "claude",
      session_id: `0000000${pid % 10}-1111-4222-8333-444444444444`,
      registered_at,
    });
    // A clone's session, registered since this machine booted: it may well run there.
    writeJson(`${older}/${NO_PID}.json`, session(NO_PID, new Date().toISOString()));
    // This machine's crashed session from before an upgrade and a reboot: written before boot.
    writeJson(`${older}/${NO_PID + 1}.json`, session(NO_PID + 1, "2001-01-01T00:00:00.000Z"));
    const judged = async () =>
      (await rosterJson<Row[]>(home, ["list", "--all"], { env }))
        .filter((r) => r.session_pid !== s.pid)
        .map((r) => [r.session_pid, r.liveness, r.reason])
        .sort();
    await t.step("written since this boot: unknown (other-host), kept by prune", async () => {
      assertEquals(await judged(), [
        [NO_PID, "unknown", "other-host"],
        [NO_PID + 1, "dead", "rebooted"],
      ]);
      for (const args of [["prune"], ["prune", "--older-than", "7d"]]) {
        const r = await roster([...args, "--home", home], { env });
        assertEquals(r.code, 0, r.stderr);
      }
      assert(Deno.statSync(`${older}/${NO_PID}.json`).isFile);
    });
    await t.step("written before this boot: rebooted, and restore finds it", async () => {
      const r = await roster(["restore", "--dry-run", "--json", "--home", home], { env });
      assertEquals(r.code, 0, r.stderr);
      // Found (relaunched, or skipped where the harness is not on PATH), and only that one.
      const plan = JSON.parse(r.stdout) as { session_pid: number }[];
      assertEquals(plan.map((p) => p.session_pid), [NO_PID + 1], r.stdout);
    });
  },
});

Deno.test({
  name: "a boot history roster cannot use is named by doctor, not blamed on a clone (retest F4)",
  // Another user's file is made with chown, which only root may do.
  ignore: Deno.build.os !== "linux" || Deno.uid() !== 0,
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const history = `${dir.path}/boots`;
    await using s = spawnSleeper();
    const own = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)], {
      env: { ROSTER_BOOT_HISTORY: history },
    });
    // A session of an earlier boot of this very machine, and the history that proves it.
    const place = own.path.slice(0, own.path.lastIndexOf("/"));
    writeJson(`${place}/${NO_PID}.json`, {
      ...recordOf(own),
      session_pid: NO_PID,
      boot_id: PAST_BOOT,
    });
    Deno.writeTextFileSync(history, `${PAST_BOOT}\n${own.boot_id}\n`);
    const doctor = async (env: Record<string, string>) => {
      const r = await roster(["doctor", "--json", "--home", home], { env });
      return (JSON.parse(r.stdout) as { problems: { what: string; advice: string }[] }).problems;
    };
    const past = async (env: Record<string, string>) =>
      (await rosterJson<Row[]>(home, ["list", "--all"], { env }))
        .filter((r) => r.session_pid === NO_PID).map((r) => [r.liveness, r.reason]);

    await t.step(
      "another user's file where the history goes: named, with its removal",
      async () => {
        // Another local user made it first (the default is in the shared /var/tmp).
        Deno.chownSync(history, 65534, 65534);
        const env = { ROSTER_BOOT_HISTORY: history };
        assertEquals(await past(env), [["unknown", "other-host"]], "never dead unproven");
        const problems = await doctor(env);
        const p = problems.find((p) => p.what.startsWith("The boot history cannot be used: "));
        assert(p !== undefined, JSON.stringify(problems));
        assert(p.what.startsWith(`The boot history cannot be used: ${history}: `), p.what);
        assert(p.advice.startsWith(`Remove it with: rm -- '${history}'`), p.advice);
        assertEquals(problems.filter((p) => p.what.startsWith("Another machine shares")), []);
      },
    );
    await t.step(
      "a relative ROSTER_BOOT_HISTORY: no history kept, and doctor says so",
      async () => {
        const env = { ROSTER_BOOT_HISTORY: "boots" };
        assertEquals(await past(env), [["unknown", "other-host"]]);
        const problems = await doctor(env);
        assert(
          problems.some((p) =>
            p.what.startsWith("ROSTER_BOOT_HISTORY is not an absolute path: boots;")
          ),
          JSON.stringify(problems),
        );
        assertEquals(problems.filter((p) => p.what.startsWith("Another machine shares")), []);
      },
    );
    await t.step("the file once removed, the next register writes it again", async () => {
      Deno.removeSync(history);
      const env = { ROSTER_BOOT_HISTORY: history };
      const r = await roster(["register", "--pid", String(s.pid), "--home", home, "-q"], { env });
      assertEquals(r.code, 0, r.stderr);
      assertEquals((await doctor(env)).filter((p) => p.what.includes("boot history")), []);
    });
  },
});
