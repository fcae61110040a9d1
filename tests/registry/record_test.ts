import { assert, assertEquals } from "../assert.ts";
import { hostDirName, parseTime, validateRecord } from "../../src/registry/record.ts";

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
  await t.step("file-name pid must match the payload", () => {
    const r = validateRecord(goodRecord(43), 42);
    assert("problem" in r && r.problem.includes("differs"));
  });
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
