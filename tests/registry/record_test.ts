import { assert, assertEquals } from "../assert.ts";
import {
  buildRecord,
  MAX_OPEN_TOOL_CALLS,
  NO_LIFECYCLE,
  type RecordInput,
  recordProblem,
  type SessionRecord,
  validateRecord,
  withActivity,
} from "../../src/registry/record.ts";
import { hostDirName, STORED_NAME, storedPid } from "../../src/registry/layout.ts";
import { parseTime } from "../../src/time.ts";

export const goodRecord = (pid = 42) => ({
  schema: 1,
  session_pid: pid,
  pid_source: "flag",
  pid_verified: false,
  start_token: "123",
  process_started_at: "2026-11-29T10:00:00.000Z",
  boot_id: "b",
  machine_id: null,
  pid_ns: "pid:[4026531836]",
  host: "h",
  agent: "claude",
  runtime: null,
  session_id: null,
  cwd: "/tmp",
  tmux_pane: null,
  registered_at: "2026-11-29T10:00:01.000Z",
  registrar: { pid: 7, version: "0.1.0", path: "/x" },
  ...NO_LIFECYCLE,
  hosted: false,
  os: "linux",
});

Deno.test("validateRecord", async (t) => {
  await t.step("a good record passes", () => {
    const r = validateRecord(goodRecord(), 42);
    assert("record" in r);
    assertEquals(r.record.session_pid, 42);
  });
  await t.step("unknown extra fields are dropped, not trusted", () => {
    const r = validateRecord({ ...goodRecord(), extra: 1 }, 42);
    assert("record" in r && !("extra" in r.record));
  });
  const bad: [string, unknown][] = [
    ["not an object", []],
    ["null", null],
    ["string", "x"],
    ["empty object", {}],
    ["wrong schema", { ...goodRecord(), schema: 2 }],
    ["pid zero", { ...goodRecord(0) }],
    ["negative pid", { ...goodRecord(-42) }],
    ["float pid", { ...goodRecord(4.2) }],
    ["string pid", { ...goodRecord(), session_pid: "42" }],
    ["huge pid", { ...goodRecord(2 ** 53) }],
    ["unknown pid source", { ...goodRecord(), pid_source: "magic" }],
    ["unparseable time", { ...goodRecord(), registered_at: "yesterday" }],
    ["time without zone", { ...goodRecord(), registered_at: "2026-11-29T10:00:00" }],
    ["impossible date", { ...goodRecord(), registered_at: "2026-13-45T10:00:00Z" }],
    ["empty token", { ...goodRecord(), start_token: "" }],
    ["registrar not object", { ...goodRecord(), registrar: "x" }],
    ["os not an OS's name", { ...goodRecord(), os: "../linux" }],
    ["os empty", { ...goodRecord(), os: "" }],
    [
      "missing cwd",
      (() => {
        const r: Record<string, unknown> = goodRecord();
        delete r.cwd;
        return r;
      })(),
    ],
  ];
  for (const [name, value] of bad) {
    await t.step(`rejects: ${name}`, () => assert("problem" in validateRecord(value, 42)));
  }
  await t.step("a record from before the os field reads as os null", () => {
    const { os: _os, ...older } = goodRecord();
    const r = validateRecord(older, 42);
    assert("record" in r);
    assertEquals(r.record.os, null);
  });
  await t.step("file-name pid must match the payload", () => {
    const r = validateRecord(goodRecord(43), 42);
    assert("problem" in r && r.problem.includes("differs"));
  });
});

Deno.test("validateRecord's written-out checks accept exactly what the field tables accept", () => {
  // Values that pass or fail some field's check: every field is set to each, alone and in
  // random pairs, and removed; the two paths must agree, and a refusal must say the tables' why.
  const values: unknown[] = [
    undefined,
    null,
    true,
    false,
    0,
    1,
    2,
    -1,
    4.2,
    42,
    43,
    2 ** 32,
    2 ** 53,
    "",
    "x",
    "42",
    "flag",
    "exec",
    "magic",
    "linux",
    "Win/32",
    "x".repeat(256),
    "x".repeat(257),
    "x".repeat(4096),
    "x".repeat(4097),
    "2026-11-29T10:00:00.000Z",
    "2026-11-29T10:00:00",
    "2026-13-45T10:00:00Z",
    [],
    {},
    [1],
    { pid: 7, version: "v", path: "/p" },
    { pid: 0, version: "v", path: "/p" },
    { pid: 7, version: 1, path: "/p" },
    { pid: 7, start_token: null, session_id: null },
    { pid: 7, start_token: "", session_id: null },
    { pid: 7, start_token: "1", session_id: 3 },
    { key: "k", ledger: "/l" },
    { key: "", ledger: "/l" },
    { key: "k" },
  ];
  const names = Object.keys(goodRecord());
  const agree = (o: Record<string, unknown>, pid: number) => {
    const r = validateRecord(o, pid);
    const why = recordProblem(o, pid);
    assertEquals("problem" in r ? r.problem : null, why, JSON.stringify(o));
  };
  const set = (o: Record<string, unknown>, name: string, v: unknown) => {
    if (v === undefined) delete o[name];
    else o[name] = v;
  };
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  agree(goodRecord(), 42);
  agree(goodRecord(), 43);
  for (const name of [...names, "extra"]) {
    for (const v of values) {
      const o: Record<string, unknown> = goodRecord();
      set(o, name, v);
      agree(o, 42);
    }
  }
  for (let i = 0; i < 5000; i++) {
    const o: Record<string, unknown> = goodRecord();
    set(o, names[random(names.length)], values[random(values.length)]);
    set(o, names[random(names.length)], values[random(values.length)]);
    agree(o, random(2) === 0 ? 42 : 43);
  }
});

Deno.test("hostDirName and parseTime", async (t) => {
  await t.step("replaces every unsafe character", () => {
    assertEquals(hostDirName("my host/../é"), "my_host_..__");
    assertEquals(hostDirName("a.b-c_D9"), "a.b-c_D9");
    assertEquals(hostDirName(".."), "_..");
  });
  await t.step("parses RFC 3339 only", () => {
    assertEquals(parseTime("2026-11-29T10:00:00.5+01:00"), Date.UTC(2026, 10, 29, 9, 0, 0, 500));
    assertEquals(parseTime("1764410400000"), null);
    assertEquals(parseTime("Sun Nov 29 2026"), null);
  });
});

Deno.test("buildRecord: what register writes", async (t) => {
  const here = { host: "h", bootId: "b", machineId: "m", pidNs: "pid:[1]", os: "linux" };
  const base: RecordInput = {
    owner: {
      pid: 42,
      source: "ancestor",
      verified: true,
      harness: { agent: "codex", runtime: "node" },
      inner: false,
    },
    process: {
      pid: 42,
      ppid: 1,
      startToken: "T42",
      startedAtMs: Date.UTC(2026, 10, 29, 10),
      zombie: false,
      name: "codex",
    },
    here,
    flags: {},
    env: () => undefined,
    cwd: "/work",
    now: Date.UTC(2026, 10, 29, 10, 0, 1),
    registrar: { pid: 7, version: "0.1.0", path: "/x" },
  };
  await t.step("a session a shared server hosts records no tmux pane: it is the server's", () => {
    const env = (n: string) => n === "TMUX_PANE" ? "%7" : undefined;
    assertEquals(buildRecord({ ...base, env }).tmux_pane, "%7");
    const hosted = { ...base.owner, harness: { agent: "codex", runtime: null, hosted: true } };
    assertEquals(buildRecord({ ...base, owner: hosted, env }).tmux_pane, null);
  });
  await t.step("every field, in the order record files have", () => {
    const r = buildRecord(base);
    assertEquals(Object.keys(r), Object.keys(goodRecord()));
    assertEquals(r, {
      schema: 1,
      session_pid: 42,
      pid_source: "ancestor",
      pid_verified: true,
      start_token: "T42",
      process_started_at: "2026-11-29T10:00:00.000Z",
      boot_id: "b",
      machine_id: "m",
      pid_ns: "pid:[1]",
      host: "h",
      agent: "codex",
      runtime: "node",
      session_id: null,
      cwd: "/work",
      tmux_pane: null,
      registered_at: "2026-11-29T10:00:01.000Z",
      registrar: { pid: 7, version: "0.1.0", path: "/x" },
      ...NO_LIFECYCLE,
      hosted: false,
      os: "linux",
    });
    assert("record" in validateRecord(JSON.parse(JSON.stringify(r)), 42));
  });
  await t.step("flags win over the environment, which wins over the harness", () => {
    const env: Record<string, string> = {
      ROSTER_AGENT: "env-agent",
      ROSTER_RUNTIME: "env-rt",
      ROSTER_SESSION_ID: "env-sid",
      CLAUDE_CODE_SESSION_ID: "claude-sid",
      TMUX_PANE: "%3",
    };
    const fromEnv = buildRecord({ ...base, env: (n) => env[n] });
    assertEquals(
      [fromEnv.agent, fromEnv.runtime, fromEnv.session_id, fromEnv.tmux_pane],
      ["env-agent", "env-rt", "env-sid", "%3"],
    );
    const fromFlags = buildRecord({
      ...base,
      env: (n) => env[n],
      flags: { agent: "a", runtime: "r", sessionId: "s" },
    });
    assertEquals([fromFlags.agent, fromFlags.runtime, fromFlags.session_id], ["a", "r", "s"]);
  });
  await t.step("a harness's own session id variable counts only for that harness", () => {
    const vars: Record<string, string> = {
      CLAUDE_CODE_SESSION_ID: "claude-sid",
      CLAUDE_PID: "10",
      CODEX_THREAD_ID: "codex-sid",
      GEMINI_SESSION_ID: "gemini-sid",
    };
    const env = (n: string) => vars[n];
    const as = (agent: string, pid = 42) =>
      buildRecord({
        ...base,
        env,
        owner: { ...base.owner, pid, harness: { agent, runtime: null } },
      })
        .session_id;
    // Codex and Gemini CLI started inside a Claude session inherit its variables.
    assertEquals(as("codex"), "codex-sid");
    assertEquals(as("gemini"), "gemini-sid");
    assertEquals(as("claude", 10), "claude-sid");
    // An inner Claude whose CLAUDE_PID is not the owner: the variable is the outer's.
    assertEquals(as("claude", 42), null);
    assertEquals(as("pi"), null);
    const inner = buildRecord({
      ...base,
      env: (n) =>
        ({ ROSTER_SESSION_ID: "outer", GEMINI_SESSION_ID: "g" } as Record<string, string>)[n],
      owner: { ...base.owner, inner: true, harness: { agent: "gemini", runtime: "node" } },
    });
    assertEquals(inner.session_id, "g");
  });
  await t.step('--agent "" is anonymous; an empty --session-id counts as unset', () => {
    const r = buildRecord({
      ...base,
      env: (n) => n === "ROSTER_SESSION_ID" ? "env-sid" : undefined,
      flags: { agent: "", sessionId: "" },
    });
    assertEquals([r.agent, r.session_id], ["", "env-sid"]);
  });
  await t.step("no harness and nothing named: anonymous, no runtime", () => {
    const r = buildRecord({ ...base, owner: { ...base.owner, harness: null } });
    assertEquals([r.agent, r.runtime], ["", null]);
  });
  await t.step("a process the backend cannot read: no token, no start time", () => {
    const r = buildRecord({ ...base, process: null });
    assertEquals([r.start_token, r.process_started_at], [null, null]);
  });
});

Deno.test("storedPid reads exactly the names STORED_NAME matches, and their pid", () => {
  const pieces = [
    "1",
    "0",
    "9",
    "12",
    "4294967295",
    ".",
    "json",
    ".json",
    "a",
    "z",
    "A",
    "-",
    "\n",
    "é",
    "x".repeat(33),
  ];
  const names = [
    "1.json",
    "42.json",
    "42.a.json",
    "42.json.json",
    "0.json",
    "01.json",
    "1234567890.json",
    "12345678901.json",
    "42.abcdefghijklmnopqrstuvwxyz012345.json",
    "42.abcdefghijklmnopqrstuvwxyz0123456.json",
    "42..json",
    "42.A.json",
    "42.json.tmp",
    ".json",
    "42json",
    "42.json\n",
    "",
  ];
  let seed = 5;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  // A pid part, maybe a suffix, an ending: each valid or not, so both outcomes are common.
  const pids = ["1", "42", "4294967295", "1234567890", "12345678901", "0", "07", "", "x", "-1"];
  const suffixes = [
    "",
    ".a",
    ".0z9",
    `.${"a".repeat(32)}`,
    `.${"a".repeat(33)}`,
    ".",
    ".A",
    ".a.b",
  ];
  const endings = [".json", ".json", "json", ".json.tmp", ".JSON", ".json\n", "", ".jso"];
  for (let i = 0; i < 20000; i++) {
    let name = pids[random(pids.length)] + suffixes[random(suffixes.length)] +
      endings[random(endings.length)];
    if (random(4) === 0) {
      const at = random(name.length + 1);
      name = name.slice(0, at) + pieces[random(pieces.length)] + name.slice(at + random(2));
    }
    names.push(name);
  }
  let matched = 0;
  for (const name of names) {
    const m = STORED_NAME.exec(name);
    if (m) matched++;
    assertEquals(storedPid(name), m ? Number(m[1]) : 0, JSON.stringify(name));
  }
  assert(matched > 1000 && matched < 18000, `${matched} matched`);
});

Deno.test("withActivity: what one activity hook changes in a record", async (t) => {
  const base = goodRecord() as SessionRecord;
  const now = Date.parse("2026-12-02T05:00:00Z");
  await t.step("a tool starting means working; idle closes every call", () => {
    const a = withActivity(base, { toolStart: { id: "t1", name: "Bash" } }, now);
    assertEquals([a.activity, a.open_tool_calls.length], ["working", 1]);
    const b = withActivity(a, { activity: "waiting" }, now + 1);
    assertEquals([b.activity, b.open_tool_calls.length], ["waiting", 1]);
    const c = withActivity(b, { activity: "idle" }, now + 2);
    assertEquals([c.activity, c.open_tool_calls, c.activity_at], [
      "idle",
      [],
      "2026-12-02T05:00:00.002Z",
    ]);
  });
  await t.step("an end by an id not open closes nothing; without an id, by the name", () => {
    let r = withActivity(base, { toolStart: { id: "toolu_A", name: "Bash" } }, now);
    r = withActivity(r, { toolEnd: { id: "toolu_B", name: "Bash" } }, now);
    assertEquals(r.open_tool_calls.map((c) => c.id), ["toolu_A"]);
    r = withActivity(r, { toolStart: { id: null, name: "run_shell_command" } }, now);
    r = withActivity(r, { toolEnd: { id: null, name: "run_shell_command" } }, now);
    assertEquals(r.open_tool_calls.map((c) => c.id), ["toolu_A"]);
  });
  await t.step("at most MAX_OPEN_TOOL_CALLS, the oldest dropped; the result validates", () => {
    let r = base;
    for (let i = 0; i < MAX_OPEN_TOOL_CALLS + 3; i++) {
      r = withActivity(r, { toolStart: { id: `c${i}`, name: null } }, now);
    }
    assertEquals(r.open_tool_calls.length, MAX_OPEN_TOOL_CALLS);
    assertEquals(r.open_tool_calls[0].id, "c3");
    const checked = validateRecord(JSON.parse(JSON.stringify(r)), r.session_pid);
    assert("record" in checked, JSON.stringify(checked));
  });
  await t.step("bad activity fields make a malformed record, by both checks", () => {
    for (
      const bad of [
        { activity: "busy" },
        { activity_at: "yesterday" },
        { open_tool_calls: [{ id: "", name: null, started_at: "2026-12-02T05:00:00Z" }] },
        { open_tool_calls: {} },
      ]
    ) {
      const value = JSON.parse(JSON.stringify({ ...base, ...bad }));
      assert("problem" in validateRecord(value, base.session_pid), JSON.stringify(bad));
      assert(recordProblem(value, base.session_pid) !== null, JSON.stringify(bad));
    }
  });
});
