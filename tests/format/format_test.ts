/**
 * The file formats' declarations and what comes from them: the generated files are current
 * (`deno task formats` rewrites them), and the generated straight-line code accepts, refuses,
 * explains and copies exactly as the declaration's own checker does.
 */
import { assert, assertEquals } from "../assert.ts";
import { GENERATED, generatedText } from "../../scripts/formats.ts";
import {
  copyRecord,
  isRecord,
  NO_LIFECYCLE,
  NULL_RECORD,
  recordFieldProblem,
} from "../../src/registry/record_check.ts";
import { LIFECYCLE, SESSION_RECORD } from "../../src/registry/record_format.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

const goodRecord = () => ({
  schema: 1,
  session_pid: 42,
  pid_source: "flag",
  pid_verified: false,
  hosted: false,
  start_token: "123",
  process_started_at: "2026-11-29T10:00:00.000Z",
  boot_id: "b",
  machine_id: null,
  pid_ns: "pid:[4026531836]",
  host: "h",
  agent: "claude",
  runtime: null,
  session_id: "s",
  cwd: "/tmp",
  tmux_pane: null,
  registered_at: "2026-11-29T10:00:01.000Z",
  registrar: { pid: 7, version: "0.1.0", path: "/x" },
  ...NO_LIFECYCLE,
  successor: { pid: 8, start_token: "9", session_id: null },
  continuation: { key: "k", ledger: "/l" },
  open_tool_calls: [{ id: "c", name: "Bash", started_at: "2026-11-29T10:00:02.000Z" }],
  os: "linux",
});

Deno.test("the generated files are current (deno task formats rewrites them)", async () => {
  for (const { path, spec } of GENERATED) {
    assertEquals(await Deno.readTextFile(`${ROOT}${path}`), await generatedText(spec), path);
  }
});

Deno.test("record_check.ts does what SESSION_RECORD declares", async (t) => {
  const values: unknown[] = [
    undefined,
    null,
    true,
    false,
    0,
    1,
    -1,
    4.2,
    42,
    2 ** 53,
    "",
    "x",
    "flag",
    "idle",
    "linux",
    "Win/32",
    "x".repeat(256),
    "x".repeat(257),
    "x".repeat(4097),
    "2026-11-29T10:00:00.000Z",
    "2026-13-45T10:00:00Z",
    [],
    {},
    [1],
    [{ id: "a", name: null, started_at: "2026-11-29T10:00:00.000Z" }],
    [{ id: "", name: null, started_at: "2026-11-29T10:00:00.000Z" }],
    Array(65).fill({ id: "a", name: "n", started_at: "2026-11-29T10:00:00.000Z" }),
    { pid: 7, version: "v", path: "/p" },
    { pid: 0, version: "v", path: "/p" },
    { pid: 7, start_token: null, session_id: null, extra: 1 },
    { pid: 7, start_token: "", session_id: null },
    { key: "k", ledger: "/l" },
    { key: "", ledger: "/l" },
  ];
  const agree = (o: Record<string, unknown>) => {
    const why = SESSION_RECORD.problem(o);
    assertEquals(recordFieldProblem(o), why, JSON.stringify(o));
    assertEquals(isRecord(o), why === null, JSON.stringify(o));
    assertEquals(SESSION_RECORD.test(o), why === null, JSON.stringify(o));
    // The same fields, in the same order, nested copies included.
    if (why === null) {
      assertEquals(JSON.stringify(copyRecord(o)), JSON.stringify(SESSION_RECORD.copy(o)));
    }
  };
  await t.step("every field set to each value, or removed; then random pairs", () => {
    const names = SESSION_RECORD.names;
    const set = (o: Record<string, unknown>, name: string, v: unknown) => {
      if (v === undefined) delete o[name];
      else o[name] = v;
    };
    agree(goodRecord());
    for (const name of [...names, "extra"]) {
      for (const v of values) {
        const o: Record<string, unknown> = goodRecord();
        set(o, name, v);
        agree(o);
      }
    }
    let seed = 11;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 3000; i++) {
      const o: Record<string, unknown> = goodRecord();
      set(o, names[random(names.length)], values[random(values.length)]);
      set(o, names[random(names.length)], values[random(values.length)]);
      agree(o);
    }
  });
  await t.step("an older record's absent fields read as their defaults", () => {
    const older: Record<string, unknown> = goodRecord();
    for (const name of [...Object.keys(LIFECYCLE), "hosted", "os"]) delete older[name];
    assert(isRecord(older));
    const copy = copyRecord(older);
    const expected = { ...goodRecord(), ...NO_LIFECYCLE, hosted: false, os: null };
    assertEquals(JSON.stringify(copy), JSON.stringify(expected));
    assertEquals(JSON.stringify(copy), JSON.stringify(SESSION_RECORD.copy(older)));
  });
  await t.step("NO_LIFECYCLE and NULL_RECORD: the declaration's defaults, and every field", () => {
    assertEquals(Object.keys(NO_LIFECYCLE), Object.keys(LIFECYCLE));
    assertEquals(Object.keys(NULL_RECORD), [...SESSION_RECORD.names]);
    assert(Object.values(NULL_RECORD).every((v) => v === null));
  });
});
