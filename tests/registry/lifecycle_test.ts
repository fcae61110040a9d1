/**
 * The session lifecycle end to end, through the CLI as hooks and a restore engine run it:
 * ended rows kept for the retention window whatever registers meanwhile, a planned
 * continuation holding its row, park and resume with their links, model and native ids.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  exists,
  hostDir,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import { FACTS } from "../continuation/fixtures.ts";

type Row = Record<string, unknown> & {
  session_pid: number;
  liveness: string;
  reason: string;
  path: string;
};

/** A registered session whose process is then killed (and reaped). */
async function crashed(
  home: string,
  sid: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<number> {
  const s = spawnSleeper();
  await rosterJson(home, [
    "register",
    "--pid",
    String(s.pid),
    "--agent",
    "claude",
    "--session-id",
    sid,
    ...extra,
  ], { env });
  await s.kill();
  return s.pid;
}

const rows = (home: string, extra: string[] = []) =>
  rosterJson<Row[]>(home, ["list", "--all", ...extra]);

/** Backdates the end of a record, as if roster had first seen it dead `ms` ago. */
function endedAgo(home: string, pid: number, ms: number) {
  const path = `${hostDir(home)}/${pid}.json`;
  const record = JSON.parse(Deno.readTextFileSync(path));
  record.ended_at = new Date(Date.now() - ms).toISOString();
  record.ended_reason = "exited";
  writeJson(path, record);
}

const DAY = 86_400_000;

/** Finishes `key`: continuations on, its plan released, its one continue claimed. */
async function finishKey(home: string, key: string) {
  writeJson(`${home}/continuations/config.json`, { mode: "on" });
  await rosterJson(home, ["continuation-release", "--key", key]);
  const facts = { ...FACTS, pane_key: "%3", last_entry_id: null };
  const c = await roster(
    ["continuation-check", "--key", key, "--facts", "-", "--claim", "--home", home],
    { stdin: JSON.stringify(facts) },
  );
  assertEquals(c.code, 0, c.stdout + c.stderr);
}

Deno.test("ended sessions survive later registrations for the retention window", async (t) => {
  await using home = await tempDir();
  const dead: number[] = [];
  for (const sid of ["S1", "S2", "S3", "S4"]) dead.push(await crashed(home.path, sid));
  const live = spawnSleeper();
  try {
    await t.step("twenty registrations later, all four ended rows are there", async () => {
      for (let i = 0; i < 20; i++) {
        await rosterJson(home.path, ["register", "--pid", String(live.pid), "--agent", "codex"]);
      }
      const ended = (await rows(home.path)).filter((r) => dead.includes(r.session_pid));
      assertEquals(ended.length, 4, JSON.stringify(ended));
      for (const r of ended) {
        assertEquals([r.liveness, r.reason, r.agent], ["dead", "exited", "claude"]);
        assertMatch(String(r.ended_at), /^\d{4}-\d\d-\d\dT/, "register stamped when it ended");
        assertEquals(r.ended_reason, "exited");
      }
      const listed = await rosterJson<Row[]>(home.path, ["list", "--state", "dead"]);
      assertEquals(listed.length, 4);
    });

    await t.step("register removes only what is past retention", async () => {
      endedAgo(home.path, dead[0], 2 * DAY);
      await rosterJson(home.path, ["register", "--pid", String(live.pid)]);
      const left = (await rows(home.path)).map((r) => r.session_pid);
      assert(!left.includes(dead[0]), "past the 24 h default: removed");
      for (const pid of dead.slice(1)) assert(left.includes(pid), `${pid} kept`);
    });

    await t.step("ROSTER_RETENTION sets the window", async () => {
      endedAgo(home.path, dead[1], 2 * DAY);
      await rosterJson(home.path, ["register", "--pid", String(live.pid)], {
        env: { ROSTER_RETENTION: "3d" },
      });
      assert((await rows(home.path)).some((r) => r.session_pid === dead[1]), "3d keeps it");
      // A typo there must not unregister every session: the record is written, nothing ended
      // is removed (dead[1] is past the default day), and stderr names the variable.
      const bad = await roster(["register", "--pid", String(live.pid), "--home", home.path], {
        env: { ROSTER_RETENTION: "soon" },
      });
      assertEquals(bad.code, 0, bad.stderr);
      assertMatch(bad.stderr, /^roster: Invalid ROSTER_RETENTION: .*: nothing ended was removed\n/);
      assert((await rows(home.path)).some((r) => r.session_pid === dead[1]), "nothing removed");
      assert((await rows(home.path)).some((r) => r.session_pid === live.pid), "registered");
      // prune, whose whole work is removing, refuses it.
      const prune = await roster(["prune", "--home", home.path], {
        env: { ROSTER_RETENTION: "soon" },
      });
      assertEquals(prune.code, 2, prune.stderr);
    });

    await t.step("prune removes what is past retention, keeps what a restore needs", async () => {
      const r = await roster(["prune", "--home", home.path]);
      assertEquals(r.code, 0, r.stderr);
      assertMatch(r.stdout, /Removed 1 record \(1 dead, 0 unknown\)/);
      assertMatch(r.stdout, /2 crashed kept for roster restore/);
      assertMatch(r.stdout, new RegExp(`\\b${dead[1]}\\b`));
      const left = (await rows(home.path)).map((x) => x.session_pid);
      for (const pid of dead.slice(2)) assert(left.includes(pid), `${pid} kept`);
    });

    await t.step("--include-crashed removes every ended row, and says which", async () => {
      const r = await roster(["prune", "--include-crashed", "--home", home.path]);
      assertEquals(r.code, 0, r.stderr);
      assertMatch(r.stdout, /Removed 2 records \(2 dead, 0 unknown\)/);
      for (const pid of dead.slice(2)) assertMatch(r.stdout, new RegExp(`\\b${pid}\\b`));
    });
  } finally {
    await live.kill();
  }
});

Deno.test("a record of a reused pid is kept as an ended row, not overwritten", async () => {
  await using home = await tempDir();
  const live = spawnSleeper();
  try {
    // An earlier session that held this pid (another start token): it ended, and the pid
    // now belongs to a new session that registers.
    await rosterJson(home.path, ["register", "--pid", String(live.pid), "--session-id", "OLD"]);
    const path = `${hostDir(home.path)}/${live.pid}.json`;
    const old = JSON.parse(Deno.readTextFileSync(path));
    old.start_token = "1";
    writeJson(path, old);
    await rosterJson(home.path, ["register", "--pid", String(live.pid), "--session-id", "NEW"]);
    const all = await rows(home.path);
    const byId = Object.fromEntries(all.map((r) => [r.session_id, r]));
    assertEquals(Object.keys(byId).sort(), ["NEW", "OLD"]);
    assertEquals([byId.NEW.liveness, byId.OLD.liveness], ["alive", "dead"]);
    assertEquals(byId.OLD.reason, "pid-reused");
    assert(byId.OLD.path !== path, "moved aside");
  } finally {
    await live.kill();
  }
});

Deno.test("a planned continuation keeps its session's row until the key is finished", async () => {
  await using home = await tempDir();
  const pid = await crashed(home.path, "S1", [], { TMUX_PANE: "%3" });
  const plan = await roster([
    "continuation-plan",
    "--key",
    "k1",
    "--session",
    String(pid),
    "--spacing",
    "0s",
    "--home",
    home.path,
  ]);
  assertEquals(plan.code, 0, plan.stderr);
  endedAgo(home.path, pid, 3 * DAY);
  const p = await roster(["prune", "--home", home.path, "--json"]);
  assertEquals(p.code, 0, p.stderr);
  const pruned = JSON.parse(p.stdout);
  assertEquals([pruned.removed.length, pruned.held], [0, 1]);
  assert((await rows(home.path)).some((r) => r.session_pid === pid), "held by k1");
  // The key finishes: its continuation is claimed.
  await finishKey(home.path, "k1");
  const again = JSON.parse((await roster(["prune", "--home", home.path, "--json"])).stdout);
  assertEquals([again.removed.length, again.held], [1, 0]);
});

Deno.test("register's cleanup asks the ledger only for a row a continuation names", async () => {
  await using home = await tempDir();
  const pid = await crashed(home.path, "S1", [], { TMUX_PANE: "%3" });
  const plan = await roster(
    ["continuation-plan", "--key", "k1", "--session", String(pid), "--spacing", "0s"].concat(
      ["--home", home.path],
    ),
  );
  assertEquals(plan.code, 0, plan.stderr);
  endedAgo(home.path, pid, 3 * DAY);
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  // Its queued name comes up at the next register: past retention, but held by k1.
  await rosterJson(home.path, ["register", "--pid", String(a.pid)]);
  assert(exists(`${hostDir(home.path)}/${pid}.json`), "held by k1, kept by register");
  await finishKey(home.path, "k1");
  // The next round of the queue reaches it again: the key is finished, the row goes.
  await rosterJson(home.path, ["register", "--pid", String(b.pid)]);
  assert(!exists(`${hostDir(home.path)}/${pid}.json`), "removed once k1 finished");
});

Deno.test("register records model and the harness's native session id", async () => {
  await using home = await tempDir();
  const s = spawnSleeper();
  try {
    const row = await rosterJson<Row>(home.path, [
      "register",
      "--pid",
      String(s.pid),
      "--session-id",
      "S1",
      "--model",
      "claude-opus-4",
      "--native-session-id",
      "0f1e-native",
    ]);
    assertEquals([row.model, row.native_session_id], ["claude-opus-4", "0f1e-native"]);
    const env = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)], {
      env: { ROSTER_MODEL: "gpt-5", ROSTER_NATIVE_SESSION_ID: "n2" },
    });
    assertEquals([env.model, env.native_session_id], ["gpt-5", "n2"]);
    const bare = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    assertEquals([bare.model, bare.native_session_id], [null, null]);
  } finally {
    await s.kill();
  }
});

Deno.test("park and resume: parked is never live; resume links the chain", async (t) => {
  await using home = await tempDir();
  const first = spawnSleeper();
  const second = spawnSleeper();
  try {
    await rosterJson(home.path, ["register", "--pid", String(first.pid), "--session-id", "A"]);
    await rosterJson(home.path, ["register", "--pid", String(second.pid), "--session-id", "B"]);

    await t.step("park by session id: dead (parked), still addressable", async () => {
      const r = await roster(["park", "--session-id", "A", "--home", home.path]);
      assertEquals(r.code, 0, r.stderr);
      const row = (await rows(home.path)).find((x) => x.session_id === "A")!;
      assertEquals([row.liveness, row.reason], ["dead", "parked"]);
      assertMatch(String(row.parked_at), /^\d{4}-/);
      const live = await rosterJson<Row[]>(home.path, ["list"]);
      assert(!live.some((x) => x.session_id === "A"), "not listed as live");
      const check = await roster(["check", String(first.pid), "--home", home.path]);
      assertEquals(check.code, 3, "check: a parked session is not live");
    });

    await t.step("a parked session cannot be planned for a continuation", async () => {
      const r = await roster([
        "continuation-plan",
        "--key",
        "kp",
        "--session",
        String(first.pid),
        "--home",
        home.path,
      ]);
      assertEquals(r.code, 2);
      assertMatch(r.stderr, /parked/);
    });

    await t.step("a parked session survives register's cleanup and prune", async () => {
      endedAgo(home.path, first.pid, 3 * DAY);
      await rosterJson(home.path, [
        "register",
        "--pid",
        String(second.pid),
        "--session-id",
        "B",
      ]);
      await roster(["prune", "--home", home.path]);
      assert((await rows(home.path)).some((x) => x.session_id === "A"));
    });

    await t.step("resume links predecessor and successor", async () => {
      const r = await roster([
        "resume",
        "--session-id",
        "A",
        "--successor-pid",
        String(second.pid),
        "--home",
        home.path,
        "--json",
      ]);
      assertEquals(r.code, 0, r.stderr);
      const all = await rows(home.path);
      const a = all.find((x) => x.session_id === "A")!;
      const b = all.find((x) => x.session_id === "B")!;
      assertEquals([a.liveness, a.reason], ["dead", "resumed"]);
      assertEquals((a.successor as Record<string, unknown>).pid, second.pid);
      assertEquals((a.successor as Record<string, unknown>).session_id, "B");
      assertEquals((b.predecessor as Record<string, unknown>).session_id, "A");
      const table = await roster(["list", "--all", "--home", home.path]);
      assertMatch(table.stdout, /resumed → B|→ B/);
    });

    await t.step("park of an unknown session id is a usage error", async () => {
      const r = await roster(["park", "--session-id", "nope", "--home", home.path]);
      assertEquals(r.code, 2);
      assertMatch(r.stderr, /--session-id/);
    });
  } finally {
    await first.kill();
    await second.kill();
  }
});

Deno.test("prune --older-than ages an unknown row by its newest sign of life (retest F5)", async (t) => {
  await using home = await tempDir();
  await using s = spawnSleeper();
  const own = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
  // Another host's session sharing the home: unknown here, registered 8 days ago.
  const dir = `${home.path}/sessions/elsewhere`;
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const week = new Date(Date.now() - 8 * 86_400_000).toISOString();
  const plant = (pid: number, activity_at: string | null) => {
    const {
      liveness: _l,
      reason: _r,
      path: _p,
      malformed: _m,
      detail: _d,
      predecessor: _q,
      ...rec
    } = own;
    writeJson(`${dir}/${pid}.json`, {
      ...rec,
      session_pid: pid,
      host: "elsewhere",
      registered_at: week,
      activity: activity_at === null ? null : "working",
      activity_at,
    });
  };
  plant(4_200_001, new Date().toISOString());
  plant(4_200_002, week);
  plant(4_200_003, null);
  await t.step("a working one is kept; idle ones as old as the bound are removed", async () => {
    const r = await rosterJson<{ removed: Row[] }>(home.path, ["prune", "--older-than", "7d"]);
    assertEquals(r.removed.map((x) => x.session_pid).sort(), [4_200_002, 4_200_003]);
    assert(exists(`${dir}/4200001.json`));
  });
});
