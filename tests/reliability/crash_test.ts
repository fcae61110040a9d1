/**
 * Crash: SIGKILL `register` and `prune` at random moments (100 rounds) and at each named
 * pause point. Afterwards no record is torn or partial, every record that existed and was
 * not meant to be removed still exists, and the next call succeeds.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  cliArgs,
  exists,
  hostDir,
  NO_PID,
  roster,
  rosterJson,
  type Sleeper,
  spawnSleeper,
  tempDir,
  waitUntil,
  writeJson,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { assertWhole, snapshot } from "./store_check.ts";

function spawnRoster(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: cliArgs(args),
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A store with live records, another host's records and dead records. */
async function seed(home: string, live: Sleeper[]) {
  let row: Row | null = null;
  for (const s of live) row = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)]);
  Deno.mkdirSync(`${home}/sessions/other-host`, { recursive: true });
  for (let i = 0; i < 5; i++) {
    writeJson(`${home}/sessions/other-host/${7000 + i}.json`, {
      ...row,
      session_pid: 7000 + i,
      host: "other-host",
    });
  }
  return row!;
}

function addDead(home: string, row: Row, pids: number[]) {
  for (const pid of pids) {
    writeJson(`${hostDir(home)}/${pid}.json`, { ...row, session_pid: pid, start_token: "1" });
  }
}

Deno.test("crash: 100 rounds of SIGKILL at random moments", async () => {
  await using home = await tempDir();
  const live = Array.from({ length: 10 }, () => spawnSleeper());
  const extra: Sleeper[] = [];
  try {
    const row = await seed(home.path, live);
    const otherBefore = snapshot(home.path, `${home.path}/sessions/other-host`);
    for (let round = 0; round < 100; round++) {
      if (round % 10 === 0) addDead(home.path, row, [NO_PID + 2 * round, NO_PID + 2 * round + 1]);
      const isRegister = round % 2 === 0;
      let args: string[];
      if (isRegister) {
        const s = round % 4 === 0 ? spawnSleeper() : live[round % live.length];
        if (round % 4 === 0) extra.push(s);
        args = ["register", "--pid", String(s.pid), "--home", home.path, "--quiet"];
      } else {
        args = ["prune", "--home", home.path];
      }
      const child = spawnRoster(args);
      await sleep(Math.random() * 60);
      try {
        child.kill("SIGKILL");
      } catch { /* it already finished */ }
      await child.status;
      // After every crash: nothing torn (temp files from the killed writer may remain).
      assertWhole(home.path, { tempsAllowed: true });
    }
    const pids = assertWhole(home.path, { tempsAllowed: true });
    for (const s of live) assert(pids.includes(s.pid), `live record ${s.pid} was lost`);
    const otherAfter = snapshot(home.path, `${home.path}/sessions/other-host`);
    otherAfter.delete(".lock"); // prune locks that directory too
    otherAfter.delete(".lock.gate");
    assertEquals(otherAfter, otherBefore);
    // The next call succeeds, and a prune clears crashed writers' temp files.
    const p = await roster(["prune", "--home", home.path, "--json"]);
    assertEquals(p.code, 0, p.stderr);
    const after = assertWhole(home.path);
    for (const s of live) assert(after.includes(s.pid));
    const rows = await rosterJson<Row[]>(home.path, ["list", "--all"]);
    assert(rows.every((r) => !r.malformed));
  } finally {
    await Promise.all([...live, ...extra].map((s) => s.kill()));
  }
});

const POINTS: [point: string, command: "register" | "prune"][] = [
  ["register:after-lock", "register"],
  ["register:before-rename", "register"],
  ["register:before-cleanup", "register"],
  ["prune:after-lock", "prune"],
  ["prune:before-remove", "prune"],
];

Deno.test("crash: SIGKILL at each named pause point", async (t) => {
  for (const [point, command] of POINTS) {
    await t.step(point, async () => {
      await using home = await tempDir();
      await using a = spawnSleeper();
      await using b = spawnSleeper();
      const row = await seed(home.path, [a]);
      addDead(home.path, row, [NO_PID + 500]);
      const before = snapshot(home.path);
      const args = command === "register"
        ? ["register", "--pid", String(a.pid), "--home", home.path, "--quiet"]
        : ["prune", "--home", home.path];
      const child = spawnRoster(args, { ROSTER_TEST_PAUSE_AT: point });
      const marker = `${home.path}/.pause-${point}-${child.pid}`;
      await waitUntil(() => exists(marker), `never reached ${point}`);
      child.kill("SIGKILL");
      await child.status;
      Deno.removeSync(marker);
      // The record that existed is whole: the old content or the new, never a mix.
      const pids = assertWhole(home.path, { tempsAllowed: point === "register:before-rename" });
      assert(pids.includes(a.pid), "the live record survived");
      if (point === "register:before-rename") {
        assertEquals(snapshot(home.path).get(`${a.pid}.json`), before.get(`${a.pid}.json`));
      }
      // The lock died with its holder: the next calls go through (a stale lock would end them
      // in a lock timeout, exit 1, however fast or slow the host).
      const r = await roster(["register", "--pid", String(b.pid), "--home", home.path, "--quiet"]);
      assertEquals(r.code, 0, r.stderr);
      const p = await roster(["prune", "--home", home.path]);
      assertEquals(p.code, 0, p.stderr);
      assertEquals(assertWhole(home.path), [a.pid, b.pid].sort((x, y) => x - y));
    });
  }
});

Deno.test("crash: a register paused inside the lock holds up no other register", async () => {
  // Registers hold the lock together (shared): a burst of sessions starting at once must not
  // queue behind one slow holder. Prune, which removes records, still waits for it.
  await using home = await tempDir();
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  const point = "register:after-lock";
  const paused = spawnRoster(
    ["register", "--pid", String(a.pid), "--home", home.path, "--quiet"],
    { ROSTER_TEST_PAUSE_AT: point },
  );
  const marker = `${home.path}/.pause-${point}-${paused.pid}`;
  try {
    await waitUntil(() => exists(marker), `never reached ${point}`);
    const r = await roster(["register", "--pid", String(b.pid), "--home", home.path, "--quiet"]);
    assertEquals(r.code, 0, r.stderr);
    // In order, not in time: the first is still paused inside the lock, so the second got
    // through beside it (waiting for it would have ended in a lock timeout, exit 1).
    assert(exists(marker), "the first register is still paused inside the lock");
    assertEquals(await Promise.race([paused.status, sleep(0).then(() => null)]), null);
    const prune = spawnRoster(["prune", "--home", home.path]);
    await sleep(1_000);
    const early = await Promise.race([prune.status, sleep(0).then(() => null)]);
    assertEquals(early, null, "prune waited for the register's write");
    Deno.removeSync(marker);
    assertEquals((await paused.status).code, 0);
    assertEquals((await prune.status).code, 0);
    assertEquals(assertWhole(home.path), [a.pid, b.pid].sort((x, y) => x - y));
  } finally {
    try {
      paused.kill("SIGKILL");
    } catch { /* finished */ }
    await paused.status;
  }
});

Deno.test("crash: two registers of one new session at once move the ended record aside once", async () => {
  // Two hooks of one session firing together after the pid was reused: both hold the lock
  // shared and both find the ended session in `<pid>.json`; they move it to one name, not two.
  await using home = await tempDir();
  await using a = spawnSleeper();
  const row = await rosterJson<Row>(home.path, ["register", "--pid", String(a.pid)]);
  writeJson(row.path, {
    ...JSON.parse(Deno.readTextFileSync(row.path)),
    start_token: "1",
    registered_at: "2026-11-30T00:00:00.000Z",
  });
  const point = "register:before-rename";
  const args = ["register", "--pid", String(a.pid), "--home", home.path, "--quiet"];
  const both = [
    spawnRoster(args, { ROSTER_TEST_PAUSE_AT: point }),
    spawnRoster(args, {
      ROSTER_TEST_PAUSE_AT: point,
    }),
  ];
  try {
    const markers = both.map((c) => `${home.path}/.pause-${point}-${c.pid}`);
    await waitUntil(() => markers.every(exists), `never reached ${point} twice`);
    for (const m of markers) Deno.removeSync(m);
    for (const c of both) assertEquals((await c.status).code, 0);
  } finally {
    for (const c of both) {
      try {
        c.kill("SIGKILL");
      } catch { /* finished */ }
      await c.status;
    }
  }
  const names = [...Deno.readDirSync(hostDir(home.path))].map((e) => e.name)
    .filter((n) => n.endsWith(".json")).sort();
  assertEquals(names.length, 2, `${names}`);
  const rows = await rosterJson<Row[]>(home.path, ["list", "--all"]);
  assertEquals(rows.map((r) => r.reason).sort(), ["pid-reused", "running"]);
});
