/**
 * The benchmark's floors (scripts/floor/): built as the bench builds them, run over a small
 * store of real processes, they must judge each record as roster does (a floor that calls a
 * live record dead skips work and halves its own cost), and prune must remove exactly the dead.
 * activity's I/O floor must change a record as `roster activity` does.
 */
import { assertEquals } from "../assert.ts";
import {
  hostDir,
  NO_PID,
  roster,
  rosterJson,
  spawnSleeper,
  spawnZombie,
  tempDir,
} from "../helpers.ts";
import {
  activityFloor,
  aliveCount,
  buildFloors,
  ffiFloor,
  recordNames,
  stdoutOf,
} from "../../scripts/floor/floors.ts";

/** Each record's liveness in a list floor's output (`"liveness": "...", "path": ".../N.json"`). */
function floorLiveness(listing: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of listing.matchAll(/"liveness": "(\w+)", "path": "[^"]*\/(\d+\.json)"/g)) {
    out[m[2]] = m[1];
  }
  return out;
}

Deno.test("floor programs judge liveness as roster does", async (t) => {
  await using tmp = await tempDir("roster-floor-");
  const floors = await buildFloors(tmp.path);
  if (typeof floors === "string") throw new Error(`Cannot build the floors: ${floors}`);
  await using live = spawnSleeper();
  await using reused = spawnSleeper(); // alive, but under another start token
  await using zombie = await spawnZombie();
  const gone = spawnSleeper();
  await gone.kill();

  // The live record as roster writes it (pretty-printed); the others compact, from its fields.
  const home = `${tmp.path}/home`;
  const reg = await roster(["register", "--pid", `${live.pid}`, "--home", home, "-q"]);
  assertEquals(reg.code, 0, reg.stderr);
  const dir = hostDir(home);
  const base = JSON.parse(Deno.readTextFileSync(`${dir}/${live.pid}.json`));
  const write = (pid: number, token: string) => {
    const path = `${dir}/${pid}.json`;
    Deno.writeTextFileSync(path, JSON.stringify({ ...base, session_pid: pid, start_token: token }));
    Deno.chmodSync(path, 0o600);
  };
  write(reused.pid, "1");
  const zombieToken = Deno.readTextFileSync(`/proc/${zombie.pid}/stat`).split(") ")[1]
    .split(" ")[19];
  write(zombie.pid, zombieToken); // its own token: dead for being a zombie
  write(gone.pid, base.start_token);
  write(NO_PID, base.start_token);
  const expected: Record<string, string> = {
    [`${live.pid}.json`]: "alive",
    [`${reused.pid}.json`]: "dead",
    [`${zombie.pid}.json`]: "dead",
    [`${gone.pid}.json`]: "dead",
    [`${NO_PID}.json`]: "dead",
  };

  await t.step("roster's own judgement, the reference", async () => {
    const rows = await rosterJson<{ path: string; liveness: string }[]>(home, ["list", "--all"]);
    const judged = Object.fromEntries(rows.map((r) => [r.path.split("/").pop()!, r.liveness]));
    assertEquals(judged, expected);
  });

  const lists: [string, string[]][] = [["C", [floors.list, dir]], [
    "Deno FFI",
    ffiFloor("list", dir),
  ]];
  for (const [label, cmd] of lists) {
    await t.step(`${label} list floor: the live process alive, the rest dead`, async () => {
      const listing = await stdoutOf(cmd);
      assertEquals(floorLiveness(listing), expected);
      assertEquals(aliveCount(listing), 1);
    });
  }

  for (const [label, program] of [["C", floors.prune], ["Deno FFI", null]] as const) {
    await t.step(`${label} prune floor: removes the dead records, keeps the live one`, async () => {
      const copy = `${tmp.path}/prune-${program === null ? "ffi" : "c"}`;
      Deno.mkdirSync(copy, { mode: 0o700 });
      for (const name of recordNames(dir)) {
        Deno.copyFileSync(`${dir}/${name}`, `${copy}/${name}`);
        Deno.chmodSync(`${copy}/${name}`, 0o600);
      }
      const out = await stdoutOf(program === null ? ffiFloor("prune", copy) : [program, copy]);
      assertEquals(recordNames(copy), [`${live.pid}.json`]);
      assertEquals(out.trim().split("\n").pop(), "Removed 4 records; kept 1.");
      const named = [...out.matchAll(/^ {2}(\d+) {2}dead {2}(\S+)$/gm)].map((m) => [m[1], m[2]]);
      assertEquals(
        named.map(([pid]) => pid).sort(),
        [reused.pid, zombie.pid, gone.pid, NO_PID].map(String).sort(),
      );
      for (const [pid, path] of named) assertEquals(path, `${copy}/${pid}.json`);
    });
  }
});

Deno.test("activity's I/O floor changes a record as roster activity does", async () => {
  await using tmp = await tempDir("roster-floor-");
  await using ours = spawnSleeper();
  await using floors = spawnSleeper();
  const home = `${tmp.path}/home`;
  const dir = hostDir(home);
  for (const pid of [ours.pid, floors.pid]) {
    const reg = await roster(["register", "--pid", `${pid}`, "--home", home, "-q"]);
    assertEquals(reg.code, 0, reg.stderr);
  }
  // Twice each: the second call finds the call already open and must not add it again.
  for (let i = 0; i < 2; i++) {
    const r = await roster([
      "activity",
      "--tool-start",
      "call-1",
      "--pid",
      `${ours.pid}`,
      "--home",
      home,
      "-q",
    ]);
    assertEquals(r.code, 0, r.stderr);
    await stdoutOf(activityFloor(dir, floors.pid, "call-1"));
  }
  // What differs between two sessions' records, and the times of the change.
  const comparable = (pid: number) => {
    const r = JSON.parse(Deno.readTextFileSync(`${dir}/${pid}.json`));
    for (const f of ["session_pid", "start_token", "process_started_at", "registered_at"]) {
      delete r[f];
    }
    delete r.registrar.pid;
    assertEquals(typeof r.activity_at, "string");
    delete r.activity_at;
    for (const c of r.open_tool_calls) delete c.started_at;
    return r;
  };
  const floorsRecord = comparable(floors.pid);
  assertEquals(floorsRecord.open_tool_calls, [{ id: "call-1", name: null }]);
  assertEquals(floorsRecord, comparable(ours.pid));
  // roster reads the floor's record as one of its own.
  const rows = await rosterJson<{ session_pid: number; activity: string }[]>(home, ["list"]);
  assertEquals(rows.find((r) => r.session_pid === floors.pid)?.activity, "working");
  assertEquals(Deno.readDirSync(dir).filter((e) => e.name.endsWith(".tmp")).toArray(), []);
});
