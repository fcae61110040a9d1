/**
 * The store layout per place (issue 10, case 5): records from two pid namespaces that share a
 * home and a hostname (a container with the host's name, a sandbox) and hold the same pid
 * number never overwrite each other; the layout before it (one directory per host) is still
 * read, and a session registered again moves out of it. The namespaces are private ones
 * (tests/pidns.ts): the host's pid counter is never touched.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  exists,
  hostDir,
  oldHostDir,
  recordOf,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import { canUnsharePid, inPrivatePidNs } from "../pidns.ts";
import type { Row } from "../../src/registry/row.ts";
import { placeDirName } from "../../src/registry/layout.ts";
import { waitFor } from "../harness/rig.ts";

const SIDE = new URL("./place_ns.ts", import.meta.url).pathname;
const PID = 4321;

const summary = (rows: Row[]) =>
  rows.filter((r) => r.session_pid === PID)
    .map((r) => [r.session_id, r.liveness, r.reason])
    .sort();

Deno.test({
  name: "two pid namespaces, one home, one hostname, the same pid: two records",
  ignore: !canUnsharePid(),
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const sides = ["s-a", "s-b"].map((id) =>
      inPrivatePidNs(SIDE, [home, String(PID), id, dir.path])
    );
    try {
      for (const id of ["s-a", "s-b"]) {
        await waitFor(`${id} to register`, () => exists(`${dir.path}/${id}.ready`), 60_000, 100);
      }
      await t.step("both records are kept, each in its place's directory", async () => {
        const rows = await rosterJson<Row[]>(home, ["list", "--all"]);
        assertEquals(summary(rows), [
          ["s-a", "unknown", "other-pid-ns"],
          ["s-b", "unknown", "other-pid-ns"],
        ]);
        const dirs = rows.filter((r) => r.session_pid === PID).map((r) => r.path.split("/").at(-2));
        assertEquals(new Set(dirs).size, 2);
        for (const r of rows.filter((r) => r.session_pid === PID)) {
          assertEquals(
            r.path.split("/").at(-2),
            placeDirName({
              host: r.host!,
              machineId: r.machine_id,
              pidNs: r.pid_ns,
            }),
          );
        }
      });
    } finally {
      Deno.writeTextFileSync(`${dir.path}/go`, "");
    }
    const [a, b] = await Promise.all(sides);
    await t.step("from inside, each sees its own running and the other's unknown", () => {
      for (const [r, own, other] of [[a, "s-a", "s-b"], [b, "s-b", "s-a"]] as const) {
        assertEquals(r.code, 0, r.stderr);
        const rows = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Row[];
        assertEquals(
          summary(rows),
          [
            [own, "alive", "running"],
            [other, "unknown", "other-pid-ns"],
          ].sort(),
        );
      }
    });
  },
});

Deno.test("the layout before places: read, unregistered from, and moved out of", async (t) => {
  await using dir = await tempDir();
  const home = dir.path;
  await using s = spawnSleeper();
  await using t2 = spawnSleeper();
  const row = await rosterJson<Row>(home, [
    "register",
    "--pid",
    String(s.pid),
    "--session-id",
    "x",
  ]);
  const other = await rosterJson<Row>(home, ["register", "--pid", String(t2.pid)]);
  // Both as an older roster wrote them: sessions/<host>/<pid>.json.
  const old = oldHostDir(home);
  assert(old !== hostDir(home), "this system has no pid namespaces to name places by");
  Deno.mkdirSync(old, { recursive: true, mode: 0o700 });
  for (const r of [row, other]) {
    writeJson(`${old}/${r.session_pid}.json`, recordOf(r));
    Deno.removeSync(r.path);
  }

  await t.step("old records read as before", async () => {
    const rows = await rosterJson<Row[]>(home, ["list"]);
    assertEquals(
      rows.map((r) => [r.session_pid, r.reason, r.path.startsWith(`${old}/`)]).sort(),
      [[s.pid, "running", true], [t2.pid, "running", true]].sort(),
    );
  });
  await t.step("unregister finds a session registered before the upgrade", async () => {
    const r = await roster(["unregister", "--pid", String(t2.pid), "--home", home]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(exists(`${old}/${t2.pid}.json`), false);
  });
  await t.step("registering again moves the session to its place's directory", async () => {
    const again = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)]);
    assertEquals(again.path, `${hostDir(home)}/${s.pid}.json`);
    assertEquals(exists(`${old}/${s.pid}.json`), false);
    const rows = await rosterJson<Row[]>(home, ["list", "--all"]);
    assertEquals(rows.map((r) => r.session_pid), [s.pid]);
  });
  await t.step("a record in another place's directory is not taken for that place's", async () => {
    const planted = `${home}/sessions/${
      placeDirName({ host: row.host!, machineId: "f00", pidNs: "pid:[1]" })
    }`;
    Deno.mkdirSync(planted, { mode: 0o700 });
    writeJson(`${planted}/${s.pid}.json`, recordOf(row));
    const rows = await rosterJson<Row[]>(home, ["list", "--all"]);
    const bad = rows.find((r) => r.path.startsWith(`${planted}/`));
    assertEquals([bad?.reason, bad?.host], ["malformed", row.host]);
  });
});

Deno.test("a register that gives up on the lock keeps the session's record from before places", async () => {
  // The old copy is retired only once the new record is written: a register that failed used
  // to remove it anyway, and the live session then had no record at all.
  await using dir = await tempDir();
  const home = dir.path;
  await using s = spawnSleeper();
  const row = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)]);
  const old = oldHostDir(home);
  assert(old !== hostDir(home), "this system has no pid namespaces to name places by");
  Deno.mkdirSync(old, { recursive: true, mode: 0o700 });
  writeJson(`${old}/${s.pid}.json`, recordOf(row));
  Deno.removeSync(row.path);
  // A holder of the place's lock that hangs (flock(1) holds it alone until killed).
  const holder = new Deno.Command("flock", {
    args: ["-x", `${hostDir(home)}/.lock`, "sleep", "60"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await new Promise((ok) => setTimeout(ok, 300));
    const r = await roster(["register", "--pid", String(s.pid), "--home", home, "--quiet"]);
    assertEquals(r.code, 1, r.stderr);
    assert(r.stderr.includes("Could not take the store lock"), r.stderr);
    assert(exists(`${old}/${s.pid}.json`), "the record from before places is still there");
  } finally {
    holder.kill("SIGKILL");
    await holder.status;
  }
  const rows = await rosterJson<Row[]>(home, ["list"]);
  assertEquals(rows.map((r) => [r.session_pid, r.reason]), [[s.pid, "running"]]);
});
