/**
 * The pure halves of `roster restore`: the resume-command table (src/registry/owner.ts) and
 * which sessions are relaunched and why the others are not (src/cli/restore/select.ts).
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { isValidKey } from "../../src/continuation/schema.ts";
import { resumeCommand } from "../../src/registry/owner.ts";
import { NO_LIFECYCLE } from "../../src/registry/record.ts";
import type { Row } from "../../src/registry/row.ts";
import { relaunchEnv } from "../../src/cli/restore/flow.ts";
import { type Attempts, restoreKey, selectSessions } from "../../src/cli/restore/select.ts";

const NOW = Date.parse("2026-12-02T06:00:00Z");

function row(over: Partial<Row>): Row {
  return {
    schema: 1,
    session_pid: 100,
    pid_source: "ancestor",
    pid_verified: true,
    hosted: false,
    start_token: "5000",
    process_started_at: null,
    boot_id: "b",
    machine_id: "m",
    pid_ns: "ns",
    host: "h",
    agent: "claude",
    runtime: null,
    session_id: "sid-1",
    cwd: "/w",
    tmux_pane: "%1",
    registered_at: "2026-12-02T05:00:00Z",
    registrar: null,
    ...NO_LIFECYCLE,
    ended_at: "2026-12-02T05:30:00Z",
    ended_reason: "exited",
    os: null,
    liveness: "dead",
    reason: "exited",
    path: `/s/${over.session_pid ?? 100}.json`,
    malformed: false,
    detail: null,
    ...over,
  };
}

function select(rows: Row[], extra: Partial<Parameters<typeof selectSessions>[1]> = {}) {
  return selectSessions(rows, {
    agents: [],
    sessionIds: [],
    now: NOW,
    retentionMs: 24 * 3_600_000,
    maxFailures: 3,
    attempts: () => null,
    onPath: () => true,
    isDirectory: () => true,
    ...extra,
  }).map((c) => [c.row.session_pid, c.action, c.reason, c.command]);
}

Deno.test("resumeCommand: each pinned harness's own resume command, nothing guessed", () => {
  const argv = (agent: string, hosted = false) => {
    const r = resumeCommand(agent, "0199a-b", hosted);
    return "argv" in r ? r.argv : r.problem;
  };
  assertEquals(argv("claude"), ["claude", "--resume", "0199a-b"]);
  assertEquals(argv("codex"), ["codex", "resume", "--no-daemon", "0199a-b"]);
  assertEquals(argv("codex", true), ["codex", "resume", "0199a-b"]);
  assertEquals(argv("pi"), ["pi", "--session", "0199a-b"]);
  assertEquals(argv("gemini"), ["gemini", "--resume", "0199a-b"]);
  assertEquals(argv("aider"), "no resume command known for agent aider");
  assertEquals(argv("toString"), "no resume command known for agent toString");
  const bad = resumeCommand("claude", "--dangerously-skip-permissions", false);
  assertMatch("problem" in bad ? bad.problem : "", /not one a harness would take/);
  const none = resumeCommand("claude", null, false);
  assertMatch("problem" in none ? none.problem : "", /no session id recorded/);
});

Deno.test("resumeCommand: Codex takes its continue as the first prompt, the others none", () => {
  const argv = (agent: string, hosted: boolean, prompt: string) => {
    const r = resumeCommand(agent, "0199a-b", hosted, prompt);
    return "argv" in r ? r.argv : r.problem;
  };
  const msg = "Roster continuation 0a1b: this session was interrupted; carry on.";
  assertEquals(argv("codex", false, msg), ["codex", "resume", "--no-daemon", "0199a-b", msg]);
  assertEquals(argv("codex", true, msg), ["codex", "resume", "0199a-b", msg]);
  const codex = resumeCommand("codex", "0199a-b", false);
  assertEquals("argv" in codex && codex.registersAtFirstPrompt, true);
  // The others are continued once their hooks say they are idle: no prompt on the command line.
  for (const agent of ["claude", "pi", "gemini"]) {
    assertEquals(
      argv(agent, false, msg),
      `not a first prompt ${agent} would take on its command line`,
    );
    const r = resumeCommand(agent, "0199a-b", false);
    assertEquals("argv" in r && r.registersAtFirstPrompt, false);
  }
  // A prompt that could read as a flag, or says nothing, is not passed.
  assertMatch(
    String(argv("codex", false, "--dangerously-bypass-approvals-and-sandbox")),
    /not a first prompt codex would take/,
  );
  assertMatch(String(argv("codex", false, " ")), /not a first prompt codex would take/);
});

Deno.test("selectSessions: what is relaunched, and why the rest is not", async (t) => {
  await t.step("a crashed session is relaunched with its harness's command", () => {
    assertEquals(select([row({})]), [[100, "relaunch", "dead (exited)", [
      "claude",
      "--resume",
      "sid-1",
    ]]]);
  });
  await t.step("parked, resumed, ended on its own, past retention: skipped, with why", () => {
    const out = select([
      row({ session_pid: 1, session_id: "a", reason: "parked", parked_at: "2026-12-02T05:40:00Z" }),
      row({
        session_pid: 2,
        session_id: "b",
        reason: "resumed",
        successor: { pid: 9, start_token: "1", session_id: "b" },
      }),
      row({ session_pid: 3, session_id: "c", ended_reason: "exit:0" }),
      row({ session_pid: 4, session_id: "d", ended_at: "2026-11-30T05:00:00Z" }),
    ]);
    assertEquals(out.map((o) => [o[0], o[1], o[2]]), [
      [1, "skip", "parked: set aside on purpose"],
      [2, "skip", "resumed: continued by pid 9"],
      [3, "skip", "ended on its own (exit:0)"],
      [4, "skip", "past retention"],
    ]);
  });
  await t.step(
    "alive and malformed rows are not listed; a hosted one while its server runs is",
    () => {
      const out = select([
        row({ session_pid: 1, liveness: "alive", reason: "running", session_id: "x" }),
        row({ session_pid: 2, malformed: true, liveness: "unknown", reason: "malformed" }),
        row({
          session_pid: 3,
          hosted: true,
          agent: "codex",
          liveness: "unknown",
          reason: "hosted",
        }),
      ]);
      assertEquals(out.map((o) => [o[0], o[1], o[2]]), [[
        3,
        "skip",
        "hosted: its server still runs",
      ]]);
    },
  );
  await t.step("a session running again, or a newer record of it, wins", () => {
    const out = select([
      row({ session_pid: 1, session_id: "s", registered_at: "2026-12-02T04:00:00Z" }),
      row({ session_pid: 2, session_id: "s", registered_at: "2026-12-02T05:00:00Z" }),
      row({ session_pid: 3, session_id: "t" }),
      row({ session_pid: 4, session_id: "t", liveness: "alive", reason: "running" }),
    ]);
    assertEquals(out.map((o) => [o[0], o[1], o[2]]), [
      [2, "relaunch", "dead (exited)"],
      [3, "skip", "running again as pid 4"],
      [1, "skip", "superseded by the newer record of pid 2"],
    ]);
  });
  await t.step("a record of it that may be running (another namespace or host) holds it", () => {
    // A newer run in a container, or on a machine sharing the home, is unknown from here: it
    // may be the session running, and a relaunch beside it would be a second copy.
    const out = select([
      row({ session_pid: 1, session_id: "s", registered_at: "2026-12-02T04:00:00Z" }),
      row({ session_pid: 2, session_id: "s", liveness: "unknown", reason: "other-pid-ns" }),
      row({ session_pid: 3, session_id: "t", registered_at: "2026-12-02T05:10:00Z" }),
      row({ session_pid: 4, session_id: "t", liveness: "unknown", reason: "other-host" }),
      row({ session_pid: 5, session_id: "t", liveness: "alive", reason: "running" }),
    ]);
    assertEquals(out.map((o) => [o[0], o[1], o[2]]), [
      [3, "skip", "running again as pid 5"],
      [1, "skip", "it may be running as pid 2: unknown (other-pid-ns)"],
    ]);
  });
  await t.step("unknown harness, no id, not on PATH: skipped, never guessed", () => {
    const out = select([
      row({ session_pid: 1, agent: "aider", session_id: "a" }),
      row({ session_pid: 2, session_id: null }),
      row({ session_pid: 3, agent: "gemini", session_id: "g" }),
    ], { onPath: (bin) => bin !== "gemini" });
    assertEquals(out.map((o) => [o[0], o[2]]), [
      [1, "no resume command known for agent aider"],
      [2, "no session id recorded: the harness cannot be told which to resume"],
      [3, "gemini is not on PATH"],
    ]);
  });
  await t.step("failed relaunches: tried again until --max-failures, then skipped", () => {
    const attempts = (failures: number): Attempts => ({
      failures,
      last_reason: "exited with status 1",
      gave_up_at: null,
    });
    assertEquals(select([row({})], { attempts: () => attempts(2) })[0].slice(0, 3), [
      100,
      "relaunch",
      "dead (exited); 2 failed relaunches before",
    ]);
    assertEquals(select([row({})], { attempts: () => attempts(3) })[0].slice(0, 3), [
      100,
      "skip",
      "gave up after 3 failed relaunches: exited with status 1",
    ]);
  });
  await t.step("--agent and --session-id narrow it", () => {
    const rows = [
      row({ session_pid: 1, session_id: "a" }),
      row({ session_pid: 2, agent: "pi", session_id: "b" }),
    ];
    assertEquals(select(rows, { agents: ["pi"] }).map((o) => o[0]), [2]);
    assertEquals(select(rows, { sessionIds: ["a"] }).map((o) => o[0]), [1]);
  });
  await t.step("a newer record speaks for its session, whatever is decided of it", () => {
    // Resumed by hand, then parked or ended on its own: the older crash is not brought back.
    const newers: Partial<Row>[] = [{ reason: "parked" }, { ended_reason: "exit:0" }];
    for (const newer of newers) {
      const out = select([
        row({ session_pid: 1, registered_at: "2026-12-02T04:00:00Z" }),
        row({ session_pid: 2, ...newer }),
      ]);
      assertEquals(out.map((o) => [o[0], o[1]]), [[2, "skip"], [1, "skip"]]);
      assertEquals(out[1][2], "superseded by the newer record of pid 2");
    }
    // Given up on: the older one is not tried in its place.
    const out = select([
      row({ session_pid: 1, start_token: "1", registered_at: "2026-12-02T04:00:00Z" }),
      row({ session_pid: 2, start_token: "2" }),
    ], {
      attempts: (key) =>
        key.endsWith("-2") ? { failures: 3, last_reason: "x", gave_up_at: null } : null,
    });
    assertEquals(out.map((o) => [o[0], o[1], o[2]]), [
      [2, "skip", "gave up after 3 failed relaunches: x"],
      [1, "skip", "superseded by the newer record of pid 2"],
    ]);
  });
  await t.step("a working directory gone, unknown or relative: skipped, never elsewhere", () => {
    const out = select([
      row({ session_pid: 1, session_id: "a", cwd: "/gone" }),
      row({ session_pid: 2, session_id: "b", cwd: "" }),
      row({ session_pid: 3, session_id: "c", cwd: "-" }),
      row({ session_pid: 4, session_id: "d", cwd: "/here" }),
    ], { isDirectory: (p) => p === "/here" });
    assertEquals(out.map((o) => [o[0], o[2]]), [
      [1, "its working directory is gone: /gone"],
      [2, "its working directory is not recorded"],
      [3, "its working directory is not an absolute path: -"],
      [4, "dead (exited)"],
    ]);
  });
  await t.step("one key per interruption, safe as a ledger file name", () => {
    assertEquals(restoreKey(row({})), "r-sid-1-5000");
    const key = (over: Partial<Row>) => restoreKey(row(over));
    // A character a file name cannot hold is `_`, as in every earlier release: a continue
    // claimed under such a key stays decided after an upgrade (macOS tokens are `darwin:...`).
    assertEquals(key({ session_id: "a/b c", start_token: null }), "r-a_b_c-100");
    assertEquals(
      key({ start_token: "darwin:1733212345.123456" }),
      "r-sid-1-darwin_1733212345.123456",
    );
    // Longer than a key holds: a prefix and a hash of the whole, so two never share one.
    const long = "x".repeat(130);
    const [a, b] = [key({ session_id: `${long}A` }), key({ session_id: `${long}B` })];
    assert(a !== b, a);
    assertMatch(a, /^r-x+-[0-9a-f]{32}$/);
    for (const k of [a, b, key({ session_id: "a/b c" })]) assert(isValidKey(k), k);
  });
});

Deno.test("relaunchEnv: PATH, the locations and the store, never a secret", () => {
  const env: Record<string, string> = {
    PATH: "/opt/bin:/usr/bin",
    HOME: "/home/u",
    CODEX_HOME: "/home/u/.codex",
    ANTHROPIC_API_KEY: "sk-secret",
    GITHUB_TOKEN: "ghp",
    TMUX: "/tmp/tmux-0/default,1,0",
  };
  const out = relaunchEnv(
    { envNames: ["CODEX_HOME", "OPENAI_API_KEY"], row: row({ model: "gpt-5" }) },
    "/store",
    (n) => env[n],
  );
  assertEquals(out, [
    ["PATH", "/opt/bin:/usr/bin"],
    ["HOME", "/home/u"],
    ["CODEX_HOME", "/home/u/.codex"],
    ["ROSTER_HOME", "/store"],
    ["ROSTER_MODEL", "gpt-5"],
  ]);
});
