import { assert, assertEquals } from "../assert.ts";
import { jsonElement, writeJsonElement } from "../../src/cli/json_element.ts";
import { malformedRow, recordRow } from "../../src/registry/row.ts";
import { NO_LIFECYCLE, type SessionRecord } from "../../src/registry/record.ts";
import { terminalJson } from "../../src/cli/terminal.ts";

const decoder = new TextDecoder();

/** What list and prune printed before writeJsonElement: the old code, kept here to compare. */
function oldElement(row: unknown, depth: number): string {
  let wrapped: unknown = row;
  for (let i = 0; i < depth; i++) wrapped = [wrapped];
  const cut = depth * (depth + 1);
  const text = JSON.stringify(wrapped, null, 2);
  return terminalJson(text.slice(cut, text.length - cut));
}

/** writeJsonElement's bytes, written at an offset into a buffer with garbage around them. */
function written(value: unknown, depth: number, room = 1 << 20): string | null {
  const buf = new Uint8Array(7 + room).fill(0xee);
  const n = writeJsonElement(value, depth, buf, 7);
  return n < 0 ? null : decoder.decode(buf.subarray(7, 7 + n));
}

const RECORD: SessionRecord = {
  schema: 1,
  session_pid: 4242,
  pid_source: "flag",
  pid_verified: false,
  hosted: false,
  start_token: "151278",
  process_started_at: null,
  boot_id: "7e27cf72-b5d0-4af9-a874-e8c3afc9eb12",
  machine_id: "3d1219c7c4c5404aaa1f6d2a48adfda4",
  pid_ns: "pid:[4026531836]",
  host: "vm",
  agent: "claude",
  runtime: null,
  session_id: "s-1",
  cwd: "/home/u/p",
  tmux_pane: "%3",
  registered_at: "2026-12-01T11:03:22.084Z",
  registrar: { pid: 24886, version: "1.2.3", path: "/usr/bin/roster" },
  ...NO_LIFECYCLE,
  successor: { pid: 77, start_token: null, session_id: "s-2" },
  continuation: { key: "k", ledger: "/l" },
  activity: "working",
  activity_at: "2026-12-01T11:04:00.000Z",
  open_tool_calls: [{ id: "toolu_1", name: "Bash", started_at: "2026-12-01T11:03:59.000Z" }],
  os: "linux",
};

/** Strings that each take another turn of the writer: escapes, controls, non-ASCII, unsafe. */
const STRINGS = [
  "",
  "plain",
  'a"quote',
  "back\\slash",
  "\\",
  '\\"',
  "tab\there",
  "nl\nx",
  "\x00\x01\x1f",
  "\x1b]0;title\x07",
  "del\x7f",
  "\x7f",
  "c1\u0080\u009b\u009d\u009f",
  "\u00a0nbsp é ü",
  "bidi\u202e\u2066\u2069\u200e\u200f\u061c",
  "ls\u2028ps\u2029",
  "日本語",
  "emoji 😀",
  "lone \ud800 high",
  "lone \udc00 low",
  "}{][,:",
  '","x":"',
  "\\u0041",
  "a".repeat(3000),
  "é".repeat(700),
];

const NUMBERS = [0, -0, 1, -1, 7.5, 1e21, 1e-7, 2 ** 53, 4294967295, 4294967296, NaN, Infinity];

Deno.test("writeJsonElement: the bytes of the string it replaces, for rows", () => {
  const dead = { liveness: "dead", reason: "exited" } as const;
  const rows: unknown[] = [
    recordRow(RECORD, dead, "/s/vm~x/4242.json"),
    recordRow({ ...RECORD, successor: null, continuation: null }, dead, "/s/a.json"),
    malformedRow("/s/vm/9.json", 9, "vm", 1_700_000_000_000, "not valid JSON"),
    malformedRow("/s/vm/9.json", null, "vm", null, "bad\x1b[31m"),
    { ...recordRow(RECORD, dead, "/s/p"), predecessor: { pid: 1, session_id: null, path: "/p" } },
    { ...recordRow(RECORD, dead, "/s/p"), source: "claude", status: "busy" },
  ];
  for (const row of rows) {
    for (const depth of [1, 2]) assertEquals(written(row, depth), oldElement(row, depth));
  }
});

Deno.test("writeJsonElement: the same bytes as the old code for mangled values", () => {
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const pick = <T>(xs: readonly T[]) => xs[rand(xs.length)];
  const leaf = (): unknown => {
    switch (rand(6)) {
      case 0:
        return null;
      case 1:
        return rand(2) === 0;
      case 2:
        return pick(NUMBERS);
      default:
        return pick(STRINGS);
    }
  };
  const value = (level: number): unknown => {
    const r = rand(10);
    if (level > 3 || r < 5) return leaf();
    if (r < 8) {
      const o: Record<string, unknown> = {};
      for (let i = rand(5); i > 0; i--) {
        o[rand(3) === 0 ? pick(STRINGS) : `k${rand(9)}`] = value(level + 1);
      }
      return o;
    }
    const a: unknown[] = [];
    for (let i = rand(4); i > 0; i--) a.push(value(level + 1));
    return a;
  };
  const keys = Object.keys(recordRow(RECORD, { liveness: "alive", reason: "running" }, "/p"));
  for (let round = 0; round < 3000; round++) {
    // A row with some of its fields replaced by mangled values, or a mangled value alone.
    const row: Record<string, unknown> = {
      ...recordRow(RECORD, { liveness: "alive", reason: "running" }, "/s/h/1.json"),
    };
    for (let i = rand(4); i > 0; i--) row[pick(keys)] = value(1);
    const subject = rand(5) === 0 ? value(0) : row;
    for (const depth of [1, 2]) {
      assertEquals(written(subject, depth), oldElement(subject, depth), `round ${round}`);
    }
  }
});

Deno.test("writeJsonElement: what JSON.stringify treats otherwise goes through the old code", () => {
  const odd: unknown[] = [
    { a: undefined, b: 1 },
    { f: () => 1, s: Symbol("x"), n: null },
    [undefined, () => 1],
    { d: new Date(0) },
    { toJSON: () => "replaced" },
    new Map([[1, 2]]),
    Object.assign(Object.create(null), { x: 1, "2": "two", "1": "one" }),
    { "10": 1, "9": 2, b: 3, a: 4 },
    { nested: { deeper: { deepest: [[], {}, [{}]] } } },
    [],
    {},
    "top-level string",
    42,
    null,
  ];
  for (const v of odd) {
    for (const depth of [1, 2, 3]) assertEquals(written(v, depth), oldElement(v, depth));
  }
});

Deno.test("writeJsonElement: -1 when the buffer is short, never a cut element", () => {
  const row = recordRow(RECORD, { liveness: "dead", reason: "exited" }, "/s/h/1.json");
  const samples = [row, { s: "é\u202e".repeat(50) }, { s: "x\x7f" }];
  for (const v of samples) {
    const whole = new TextEncoder().encode(oldElement(v, 1)).length;
    for (let room = 0; room <= whole + 2; room++) {
      const got = written(v, 1, room);
      if (room < whole) assertEquals(got, null, `room ${room} of ${whole}`);
      else assertEquals(got, oldElement(v, 1), `room ${room} of ${whole}`);
    }
  }
  assert(written(row, 1) !== null);
});

Deno.test("jsonElement: an element of an array printed with two-space indentation", () => {
  const v = { a: [1], b: "x\u202e" };
  assertEquals(`[\n${jsonElement(v)}\n]`, terminalJson(JSON.stringify([v], null, 2)));
  assertEquals(
    `[\n  [\n${jsonElement(v, 2)}\n  ]\n]`,
    terminalJson(JSON.stringify([[v]], null, 2)),
  );
});

Deno.test("half a character alone is written as U+FFFD, by both paths: strict readers take it", () => {
  const row = { agent: "a\ud800b", session_id: "\udfff", cwd: "\\ud800 is text", ok: "😀" };
  const slow = jsonElement(row);
  const buf = new Uint8Array(4096);
  const n = writeJsonElement(row, 1, buf, 0);
  assertEquals(new TextDecoder().decode(buf.subarray(0, n)), slow);
  assertEquals(JSON.parse(slow), { ...row, agent: "a\ufffdb", session_id: "\ufffd" });
  assert(!/\\ud[89a-f]/i.test(slow.replaceAll("\\\\", "")), slow);
});
