/**
 * `roster activity` end to end, as a hook runs it: what it writes into the session's record,
 * what list, list --json, register and wait --activity make of it, and that concurrent hooks
 * (parallel tool calls, a register at the same time) lose no call and tear no record.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { hostDir, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";

interface ActivityRow {
  session_pid: number;
  activity: string | null;
  activity_at: string | null;
  open_tool_calls: { id: string; name: string | null; started_at: string }[];
}

Deno.test("roster activity", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  await using s = spawnSleeper();
  const pid = String(s.pid);
  const at = ["--home", home, "--pid", pid];
  const row = async () =>
    (await rosterJson<ActivityRow[]>(home, ["list", "--all"])).find((r) =>
      r.session_pid === s.pid
    )!;
  await roster(["register", ...at, "--agent", "claude", "--session-id", "S1", "-q"]);

  await t.step("a record before any hook said: null activity, no open calls", async () => {
    const r = await row();
    assertEquals([r.activity, r.activity_at, r.open_tool_calls], [null, null, []]);
    const table = await roster(["list", "--home", home]);
    assert(!table.stdout.includes("ACTIVITY"), table.stdout);
  });

  await t.step("working, then tool calls from flags and from the hook's JSON", async () => {
    assertEquals((await roster(["activity", "working", ...at, "-q"])).code, 0);
    assertEquals((await row()).activity, "working");
    const hook = JSON.stringify({
      session_id: "S1",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "sleep 60" },
      tool_use_id: "toolu_01",
    });
    const r = await roster(["activity", "--tool-start", "-", ...at, "--json"], { stdin: hook });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout).outcome, "recorded");
    await roster(["activity", "--tool-start", "t2", "--tool-name", "Read", ...at, "-q"]);
    const calls = (await row()).open_tool_calls.map((c) => [c.id, c.name]);
    assertEquals(calls, [["toolu_01", "Bash"], ["t2", "Read"]]);
    const table = await roster(["list", "--home", home]);
    assertMatch(table.stdout, /ACTIVITY/);
    assertMatch(table.stdout, /working \(2 tools\)/);
  });

  await t.step("the same call started twice is open once; an end takes it out", async () => {
    await roster(["activity", "--tool-start", "t2", "--tool-name", "Read", ...at, "-q"]);
    assertEquals((await row()).open_tool_calls.length, 2);
    const post = JSON.stringify({
      tool_name: "Bash",
      tool_response: "x".repeat(100_000),
      tool_use_id: "toolu_01",
    });
    await roster(["activity", "--tool-end", "-", ...at, "-q"], { stdin: post });
    assertEquals((await row()).open_tool_calls.map((c) => c.id), ["t2"]);
  });

  await t.step("calls without ids are known by their tool's name, duplicates kept", async () => {
    for (let i = 0; i < 2; i++) {
      await roster(["activity", "--tool-start", "-", ...at, "-q"], {
        stdin: JSON.stringify({ tool_name: "run_shell_command" }),
      });
    }
    await roster(["activity", "--tool-end", "-", ...at, "-q"], {
      stdin: JSON.stringify({ tool_name: "run_shell_command" }),
    });
    assertEquals((await row()).open_tool_calls.map((c) => c.id), ["t2", "run_shell_command"]);
  });

  await t.step("an end whose id is not open, or cut off, leaves the others open", async () => {
    await roster(["activity", "--tool-start", "toolu_A", "--tool-name", "Bash", ...at, "-q"]);
    const before = (await row()).open_tool_calls.map((c) => c.id);
    await roster(["activity", "--tool-end", "-", ...at, "-q"], {
      stdin: JSON.stringify({ tool_name: "Bash", tool_use_id: "toolu_B" }),
    });
    assertEquals((await row()).open_tool_calls.map((c) => c.id), before);
    // Over the 64 MiB read: the id after the cut is not known, so no Bash call is closed.
    const big = `{"tool_name":"Bash","tool_response":"${"x".repeat(65 * 1024 * 1024)}",` +
      `"tool_use_id":"toolu_A"}`;
    const r = await roster(["activity", "--tool-end", "-", ...at, "-q"], { stdin: big });
    assertEquals(r.code, 0, r.stderr);
    assertEquals((await row()).open_tool_calls.map((c) => c.id), before);
    await roster(["activity", "--tool-end", "toolu_A", ...at, "-q"]);
  });

  await t.step(
    "an id cut to 256 keeps whole characters: list --json stays strict JSON",
    async () => {
      const id = `${"a".repeat(255)}\u{1F600}`;
      await roster(["activity", "--tool-start", "-", ...at, "-q"], {
        stdin: JSON.stringify({ tool_name: "Bash", tool_use_id: id }),
      });
      const calls = (await row()).open_tool_calls;
      const kept = calls.find((c) => c.id.startsWith("aaa"))!;
      assertEquals(kept.id, "a".repeat(255));
      const list = await roster(["list", "--all", "--json", "--home", home]);
      assert(!/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i.test(list.stdout), "no lone surrogate");
      await roster(["activity", "--tool-end", kept.id, ...at, "-q"]);
    },
  );

  await t.step("waiting keeps the open calls; a register refresh keeps all of it", async () => {
    await roster(["activity", "waiting", ...at, "-q"]);
    await roster(["register", ...at, "--agent", "claude", "--session-id", "S1", "-q"]);
    const r = await row();
    assertEquals(r.activity, "waiting");
    assertEquals(r.open_tool_calls.length, 2);
  });

  await t.step("idle closes every open call", async () => {
    await roster(["activity", "idle", ...at, "-q"]);
    const r = await row();
    assertEquals([r.activity, r.open_tool_calls], ["idle", []]);
  });

  await t.step("no state and no tool flag is a usage error", async () => {
    const r = await roster(["activity", ...at]);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /Missing activity/);
  });

  await t.step("a pid without a record: nothing written, exit 0, said on stderr", async () => {
    await using other = spawnSleeper();
    const r = await roster(["activity", "idle", "--home", home, "--pid", String(other.pid)]);
    assertEquals(r.code, 0);
    assertMatch(r.stderr, /Nothing recorded: no record for pid/);
    const q = await roster(["activity", "idle", "--home", home, "--pid", String(other.pid), "-q"]);
    assertEquals([q.code, q.stderr], [0, ""]);
  });

  await t.step(
    "a record near the read cap drops its oldest calls, never grows past it",
    async () => {
      // 256-character ids and names not in ASCII: 64 calls of them are more than the 64 KiB the
      // store reads, and a record it cannot read is lost (malformed) to every later hook.
      const path = `${hostDir(home)}/${pid}.json`;
      const before = JSON.parse(Deno.readTextFileSync(path));
      const wide = "工".repeat(250);
      const calls: { id: string; name: string; started_at: string }[] = [];
      const size = () =>
        new TextEncoder().encode(JSON.stringify({ ...before, open_tool_calls: calls }, null, 2))
          .length;
      while (size() < 64 * 1024 - 2_000) {
        calls.push({ id: `${calls.length}${wide}`, name: wide, started_at: before.registered_at });
      }
      Deno.writeTextFileSync(path, JSON.stringify({ ...before, open_tool_calls: calls }, null, 2));
      const r = await roster([
        "activity",
        ...at,
        "--tool-start",
        `new${wide}`,
        "--tool-name",
        wide,
      ]);
      assertEquals(r.code, 0, r.stderr);
      // With room left for what the lifecycle adds later (an ended stamp, a park, a hold).
      assert(Deno.statSync(path).size <= 58 * 1024, `${Deno.statSync(path).size} bytes`);
      const after = await row();
      assertEquals(after.activity, "working");
      const ids = after.open_tool_calls.map((c) => c.id);
      assertEquals(ids.at(-1), `new${wide}`);
      assert(!ids.includes(`0${wide}`), "the oldest call is dropped");
      // The newest of the old calls are kept, the oldest dropped.
      assertEquals(ids.slice(0, -1), calls.slice(1 - ids.length).map((c) => c.id));
      const idle = await roster(["activity", "idle", ...at, "--json"]);
      assertEquals(JSON.parse(idle.stdout).outcome, "recorded");
    },
  );

  await t.step("a home that is a file, or no home at all: exit 1, never 2", async () => {
    // Claude Code and Codex read 2 from a tool or stop hook as "block": a bad home fails the
    // hook without blocking its session.
    const cases: Record<string, string>[] = [
      { ROSTER_HOME: "/dev/null" },
      { ROSTER_HOME: "", HOME: "", XDG_STATE_HOME: "" },
    ];
    for (const env of cases) {
      const r = await roster(["activity", "idle", "--pid", pid], { env });
      assertEquals(r.code, 1, r.stderr);
      assertMatch(r.stderr, /^roster: (Invalid ROSTER_HOME: not a directory|Cannot find a home)/);
    }
  });

  await t.step("a record of another process under the pid is left as it was", async () => {
    const path = `${hostDir(home)}/${pid}.json`;
    const before = JSON.parse(Deno.readTextFileSync(path));
    const stale = { ...before, start_token: "1", activity: "working" };
    Deno.writeTextFileSync(path, JSON.stringify(stale, null, 2) + "\n");
    const r = await roster(["activity", "idle", ...at, "--json"]);
    assertEquals(r.code, 0);
    assertEquals(JSON.parse(r.stdout).outcome, "not-this-process");
    assertEquals(JSON.parse(Deno.readTextFileSync(path)).activity, "working");
    Deno.writeTextFileSync(path, JSON.stringify(before, null, 2) + "\n");
  });
});

Deno.test("roster activity: 12 parallel tool calls and a register at once lose nothing", async () => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  await using s = spawnSleeper();
  const at = ["--home", home, "--pid", String(s.pid)];
  await roster(["register", ...at, "--agent", "claude", "-q"]);
  const starts = Array.from(
    { length: 12 },
    (_, i) => roster(["activity", "--tool-start", `call-${i}`, ...at, "-q"]),
  );
  const registers = Array.from(
    { length: 3 },
    () => roster(["register", ...at, "--agent", "claude", "-q"]),
  );
  for (const r of await Promise.all([...starts, ...registers])) assertEquals(r.code, 0, r.stderr);
  const rows = await rosterJson<ActivityRow[]>(home, ["list", "--all"]);
  const ids = rows[0].open_tool_calls.map((c) => c.id).sort();
  assertEquals(ids, Array.from({ length: 12 }, (_, i) => `call-${i}`).sort());
});

Deno.test("roster wait --activity", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  await using s = spawnSleeper();
  const at = ["--home", home, "--pid", String(s.pid)];
  await roster(["register", ...at, "--agent", "claude", "--session-id", "W1", "-q"]);
  await roster(["activity", "working", ...at, "-q"]);
  const wait = (...more: string[]) =>
    roster(["wait", "--activity", "idle", "--session-id", "W1", "--home", home, ...more]);

  await t.step("times out (124) while the session works", async () => {
    const r = await wait("--timeout", "300ms");
    assertEquals(r.code, 124);
    assertMatch(r.stderr, /not idle: \d+ \(working\)/);
  });

  await t.step("returns once the session's hook says idle", async () => {
    const waiting = wait("--json", "--timeout", "60s");
    await new Promise((ok) => setTimeout(ok, 300));
    await roster(["activity", "idle", ...at, "-q"]);
    const r = await waiting;
    assertEquals(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assertEquals([out.outcome, out.sessions[0].activity], ["reached", "idle"]);
  });

  await t.step("no such live session, or PIDs given: 3 and 2", async () => {
    const none = await roster([
      "wait",
      "--activity",
      "idle",
      "--session-id",
      "nope",
      "--home",
      home,
    ]);
    assertEquals(none.code, 3);
    const pids = await roster(["wait", "--activity", "idle", String(s.pid), "--home", home]);
    assertEquals(pids.code, 2);
  });

  await t.step("a session that ends before it gets there: 3", async () => {
    await roster(["activity", "working", ...at, "-q"]);
    const waiting = wait("--timeout", "60s");
    await new Promise((ok) => setTimeout(ok, 300));
    await s.kill();
    const r = await waiting;
    // 3 either way: ended while it waited, or (a slow start) before its first look.
    assertEquals(r.code, 3);
    assertMatch(r.stderr, /ended before it was idle|No live session with --session-id W1/);
  });
});
