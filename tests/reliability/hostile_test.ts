/**
 * Hostile input: a corpus of named bad inputs, each with its expected outcome. Bad files
 * in the store become malformed rows (or are ignored when their names are not record
 * names); bad flags and environment values get a clear error with exit 2 (input) or 1
 * (environment). Never a crash, a hang, a stack trace, or a change to any other record.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { hostDir, NO_PID, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { hasStackTrace, snapshot } from "./store_check.ts";

type Expect =
  | { row: "malformed"; detail: RegExp }
  | { row: "valid"; liveness?: Row["liveness"] }
  | { row: "ignored" };

interface FileCase {
  name: string;
  /** The file name inside the host directory. */
  file: string;
  make: (path: string, good: Record<string, unknown>, goodPath: string) => void | Promise<void>;
  expect: Expect;
}

const enc = new TextEncoder();
const write = (path: string, data: string | Uint8Array) => {
  if (typeof data === "string") Deno.writeTextFileSync(path, data);
  else Deno.writeFileSync(path, data);
  Deno.chmodSync(path, 0o600);
};
const json = (o: unknown) => JSON.stringify(o);
const malformed = (detail: RegExp): Expect => ({ row: "malformed", detail });
const withPid = (good: Record<string, unknown>, file: string) => ({
  ...good,
  session_pid: Number(file.split(".")[0]),
});

/** From NO_PID up (above the largest pid_max Linux allows): no process can hold these pids. */
let n = NO_PID;
const next = () => `${n++}.json`;

const FILES: FileCase[] = [
  {
    name: "symlink to a record",
    file: next(),
    make: (p, _g, goodPath) => Deno.symlinkSync(goodPath, p),
    expect: malformed(/symbolic link/),
  },
  {
    name: "symlink to /etc/passwd",
    file: next(),
    make: (p) => Deno.symlinkSync("/etc/passwd", p),
    expect: malformed(/symbolic link/),
  },
  {
    name: "dangling symlink",
    file: next(),
    make: (p) => Deno.symlinkSync("/no/such/file", p),
    expect: malformed(/symbolic link/),
  },
  {
    name: "FIFO",
    file: next(),
    make: (p) => void new Deno.Command("mkfifo", { args: [p] }).outputSync(),
    expect: malformed(/not a regular file/),
  },
  {
    name: "unix socket",
    file: next(),
    make: (p) => void listeners.push(Deno.listen({ transport: "unix", path: p })),
    expect: malformed(/not a regular file/),
  },
  {
    name: "directory",
    file: next(),
    make: (p) => Deno.mkdirSync(p),
    expect: malformed(/not a regular file/),
  },
  {
    name: "1 MiB file",
    file: next(),
    make: (p) => write(p, " ".repeat(1 << 20)),
    expect: malformed(/larger than/),
  },
  {
    name: "64 KiB + 1 byte",
    file: next(),
    make: (p) => write(p, " ".repeat(65537)),
    expect: malformed(/larger than/),
  },
  {
    name: "empty file",
    file: next(),
    make: (p) => write(p, ""),
    expect: malformed(/not valid JSON/),
  },
  {
    name: "truncated JSON",
    file: next(),
    make: (p, g) => write(p, json(withPid(g, p.split("/").pop()!)).slice(0, 100)),
    expect: malformed(/not valid JSON/),
  },
  {
    name: "deeply nested arrays",
    file: next(),
    make: (p) => write(p, "[".repeat(30000) + "]".repeat(30000)),
    expect: malformed(/not a JSON object/),
  },
  {
    name: "deeply nested objects",
    file: next(),
    make: (p) => write(p, '{"a":'.repeat(10000) + "1" + "}".repeat(10000)),
    expect: malformed(/missing field/),
  },
  {
    name: "invalid UTF-8",
    file: next(),
    make: (p) => write(p, new Uint8Array([0x7b, 0xc3, 0x28, 0x7d])),
    expect: malformed(/UTF-8/),
  },
  {
    name: "invalid UTF-8: bytes 0xff 0xfe inside an object",
    file: next(),
    make: (p) => write(p, new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])),
    expect: malformed(/UTF-8/),
  },
  {
    name: "UTF-16 with BOM",
    file: next(),
    make: (p) => write(p, new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])),
    expect: malformed(/UTF-8|JSON/),
  },
  {
    name: "UTF-8 BOM before a valid record (accepted: the BOM carries no meaning)",
    file: next(),
    make: (p, g) =>
      write(
        p,
        new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode(json(withPid(g, p.split("/").pop()!)))]),
      ),
    expect: { row: "valid" },
  },
  {
    name: "raw NUL byte",
    file: next(),
    make: (p) => write(p, '{"a":"\0"}'),
    expect: malformed(/not valid JSON/),
  },
  {
    name: "escaped NUL and terminal escapes in a string (valid; shown escaped)",
    file: next(),
    make: (p, g) =>
      write(p, json({ ...withPid(g, p.split("/").pop()!), agent: "\u0000\u001b[31mred" })),
    expect: { row: "valid" },
  },
  {
    name: "JSON null",
    file: next(),
    make: (p) => write(p, "null"),
    expect: malformed(/not a JSON object/),
  },
  {
    name: "JSON number",
    file: next(),
    make: (p) => write(p, "42"),
    expect: malformed(/not a JSON object/),
  },
  {
    name: "JSON string",
    file: next(),
    make: (p) => write(p, '"x"'),
    expect: malformed(/not a JSON object/),
  },
  {
    name: "JSON array",
    file: next(),
    make: (p) => write(p, "[]"),
    expect: malformed(/not a JSON object/),
  },
  {
    name: "empty object",
    file: next(),
    make: (p) => write(p, "{}"),
    expect: malformed(/missing field: schema/),
  },
  {
    name: "trailing garbage",
    file: next(),
    make: (p, g) => write(p, json(withPid(g, p.split("/").pop()!)) + " xyz"),
    expect: malformed(/not valid JSON/),
  },
  {
    name: "pid 0 in the payload",
    file: next(),
    make: (p, g) => write(p, json({ ...g, session_pid: 0 })),
    expect: malformed(/session_pid/),
  },
  {
    name: "negative pid",
    file: next(),
    make: (p, g) => write(p, json({ ...g, session_pid: -5 })),
    expect: malformed(/session_pid/),
  },
  {
    name: "float pid",
    file: next(),
    make: (p, g) => write(p, json({ ...g, session_pid: 20.5 })),
    expect: malformed(/session_pid/),
  },
  {
    name: "string pid",
    file: next(),
    make: (p, g) =>
      write(p, json({ ...g, session_pid: String(withPid(g, p.split("/").pop()!).session_pid) })),
    expect: malformed(/session_pid/),
  },
  {
    name: "pid out of range",
    file: "4294967296.json",
    make: (p, g) => write(p, json({ ...g, session_pid: 4294967296 })),
    expect: malformed(/session_pid/),
  },
  {
    name: "pid 1e300",
    file: next(),
    make: (p, g) => write(p, json({ ...g, session_pid: 1e300 })),
    expect: malformed(/session_pid/),
  },
  {
    name: "file-name pid differs from the payload",
    file: next(),
    make: (p, g) => write(p, json(g)),
    expect: malformed(/differs/),
  },
  {
    name: "duplicate keys: the last session_pid wins and differs",
    file: next(),
    make: (p, g) => {
      const body = json(withPid(g, p.split("/").pop()!));
      write(p, body.slice(0, -1) + ',"session_pid":1}');
    },
    expect: malformed(/differs/),
  },
  {
    name: "unparseable timestamp",
    file: next(),
    make: (p, g) =>
      write(p, json({ ...withPid(g, p.split("/").pop()!), registered_at: "yesterday" })),
    expect: malformed(/registered_at/),
  },
  {
    name: "timestamp without a zone",
    file: next(),
    make: (p, g) =>
      write(p, json({ ...withPid(g, p.split("/").pop()!), registered_at: "2026-01-01T00:00:00" })),
    expect: malformed(/registered_at/),
  },
  {
    name: "future timestamp (valid: clocks differ)",
    file: next(),
    make: (p, g) =>
      write(
        p,
        json({ ...withPid(g, p.split("/").pop()!), registered_at: "9999-12-31T23:59:59.999Z" }),
      ),
    expect: { row: "valid" },
  },
  {
    name: "schema 2",
    file: next(),
    make: (p, g) => write(p, json({ ...withPid(g, p.split("/").pop()!), schema: 2 })),
    expect: malformed(/schema/),
  },
  {
    name: "wrong type: pid_verified",
    file: next(),
    make: (p, g) => write(p, json({ ...withPid(g, p.split("/").pop()!), pid_verified: "yes" })),
    expect: malformed(/pid_verified/),
  },
  {
    name: "empty host",
    file: next(),
    make: (p, g) => write(p, json({ ...withPid(g, p.split("/").pop()!), host: "" })),
    expect: malformed(/host/),
  },
  {
    name: "huge start token",
    file: next(),
    make: (p, g) =>
      write(p, json({ ...withPid(g, p.split("/").pop()!), start_token: "9".repeat(300) })),
    expect: malformed(/start_token/),
  },
  {
    name: "registrar is not an object",
    file: next(),
    make: (p, g) => write(p, json({ ...withPid(g, p.split("/").pop()!), registrar: [] })),
    expect: malformed(/registrar/),
  },
  {
    name: "owned by another user",
    file: next(),
    make: (p, g) => {
      write(p, json(withPid(g, p.split("/").pop()!)));
      Deno.chownSync(p, 65534, 65534);
    },
    expect: malformed(/another user/),
  },
  {
    name: "group-writable",
    file: next(),
    make: (p, g) => {
      write(p, json(withPid(g, p.split("/").pop()!)));
      Deno.chmodSync(p, 0o620);
    },
    expect: malformed(/writable by group or others/),
  },
  {
    name: "world-writable",
    file: next(),
    make: (p, g) => {
      write(p, json(withPid(g, p.split("/").pop()!)));
      Deno.chmodSync(p, 0o666);
    },
    expect: malformed(/writable by group or others/),
  },
  {
    name: "hard link to the good record",
    file: next(),
    make: (p, _g, goodPath) => Deno.linkSync(goodPath, p),
    expect: malformed(/differs/),
  },
  {
    name: "leading zeros in the name",
    file: "0042.json",
    make: (p, g) => write(p, json(g)),
    expect: { row: "ignored" },
  },
  {
    name: "backup file",
    file: "2999.json.bak",
    make: (p, g) => write(p, json(g)),
    expect: { row: "ignored" },
  },
  {
    name: "hidden file",
    file: ".2998.json",
    make: (p, g) => write(p, json(g)),
    expect: { row: "ignored" },
  },
  {
    name: "hidden temp file",
    file: ".2997.json.tmp",
    make: (p, g) => write(p, json(g)),
    expect: { row: "ignored" },
  },
  {
    name: "not a record name",
    file: "notes.txt",
    make: (p) => write(p, "ignored"),
    expect: { row: "ignored" },
  },
  {
    name: "eleven-digit name",
    file: "12345678901.json",
    make: (p, g) => write(p, json(g)),
    expect: { row: "ignored" },
  },
  {
    name: "unknown extra fields (valid: dropped)",
    file: next(),
    make: (p, g) => write(p, json({ ...withPid(g, p.split("/").pop()!), extra: { deep: [1, 2] } })),
    expect: { row: "valid" },
  },
];

/** Unix sockets vanish when their listener closes: keep them open for the whole test. */
const listeners: Deno.Listener[] = [];

Deno.test("hostile files in the store", async (t) => {
  await using home = await tempDir();
  await using live = spawnSleeper();
  const good = await rosterJson<Row>(home.path, ["register", "--pid", String(live.pid)]);
  const dir = hostDir(home.path);
  const record = JSON.parse(Deno.readTextFileSync(good.path));
  for (const c of FILES) await c.make(`${dir}/${c.file}`, record, good.path);
  // Not a place directory at all: a plain file where one would be, in either layout.
  Deno.writeTextFileSync(`${home.path}/places/not~a-dir`, "x");
  Deno.mkdirSync(`${home.path}/sessions`, { mode: 0o700 });
  Deno.writeTextFileSync(`${home.path}/sessions/not-a-dir`, "x");
  const before = snapshot(home.path);
  const goodBefore = Deno.readTextFileSync(good.path);

  // A hang fails here: roster() kills a list that outlasts its timeout and throws.
  const r = await roster(["list", "--all", "--json", "--home", home.path]);
  assertEquals(r.code, 0, r.stderr);
  assert(!hasStackTrace(r.stderr));
  const rows = JSON.parse(r.stdout) as Row[];
  assertEquals(FILES.length >= 40, true, `corpus has ${FILES.length} cases`);
  for (const c of FILES) {
    await t.step(c.name, () => {
      const row = rows.find((x) => x.path === `${dir}/${c.file}`);
      if (c.expect.row === "ignored") return assertEquals(row, undefined);
      assert(row, "listed");
      if (c.expect.row === "malformed") {
        assertEquals([row.liveness, row.reason, row.malformed], ["unknown", "malformed", true]);
        assertMatch(row.detail ?? "", c.expect.detail);
        assert(row.registered_at !== null, "a malformed row is dated by its file");
      } else {
        assertEquals(row.malformed, false);
      }
    });
  }
  await t.step("the good record is listed alive beside them", () => {
    assertEquals(rows.find((x) => x.path === good.path)?.reason, "running");
  });
  await t.step("a plain list shows the malformed rows and the live one, nothing else", async () => {
    const shown = await rosterJson<Row[]>(home.path, ["list"]);
    const malformedNames = FILES.filter((c) => c.expect.row === "malformed").map((c) => c.file);
    assertEquals(
      shown.map((x) => x.path).sort(),
      [good.path, ...malformedNames.map((f) => `${dir}/${f}`)].sort(),
    );
  });
  await t.step("the table escapes control characters", async () => {
    const table = await roster(["list", "--all", "--home", home.path]);
    assertEquals(table.code, 0);
    assert(table.stdout.includes("unknown (malformed)"));
    assert(!table.stdout.includes("\u001b"), "no raw escape reaches the terminal");
    assert(table.stdout.includes("\\x1b[31mred"));
  });
  await t.step("a plain prune removes only the valid dead rows, nothing else", async () => {
    const p = await roster(["prune", "--home", home.path, "--json"]);
    assertEquals(p.code, 0, p.stderr);
    // The valid cases name pids nobody runs: they are dead, and only they go.
    const valid = FILES.filter((c) => c.expect.row === "valid").map((c) => c.file).sort();
    const removed = (JSON.parse(p.stdout).removed as Row[]).map((r) => r.path.split("/").pop());
    assertEquals(removed.sort(), valid);
    for (const name of valid) before.delete(name);
    assertEquals(snapshot(home.path), before);
  });
  await t.step(
    "prune --older-than 0s removes malformed files, links not their targets",
    async () => {
      const passwd = Deno.readTextFileSync("/etc/passwd");
      const p = await roster(["prune", "--older-than", "0s", "--home", home.path, "--json"]);
      assertEquals(p.code, 0, p.stderr);
      assertEquals(Deno.readTextFileSync("/etc/passwd"), passwd);
      assertEquals(Deno.readTextFileSync(good.path), goodBefore);
      assert(
        Deno.statSync(`${dir}/${FILES.find((c) => c.name === "directory")!.file}`).isDirectory,
      );
    },
  );
});

interface FlagCase {
  name: string;
  args: (ctx: { home: string; pid: string; file: string }) => string[];
  env?: Record<string, string>;
  code: number;
  stderr: RegExp;
}

const FLAGS: FlagCase[] = [
  {
    name: "--pid 0",
    args: (c) => ["register", "--pid", "0", "--home", c.home],
    code: 2,
    stderr: /Invalid --pid: expected a positive integer/,
  },
  {
    name: "--pid -1",
    args: (c) => ["register", "--pid", "-1", "--home", c.home],
    code: 2,
    stderr: /Invalid --pid/,
  },
  {
    name: "--pid 1e3",
    args: (c) => ["register", "--pid", "1e3", "--home", c.home],
    code: 2,
    stderr: /Invalid --pid/,
  },
  {
    name: "--pid ' 42'",
    args: (c) => ["register", "--pid", " 42", "--home", c.home],
    code: 2,
    stderr: /Invalid --pid/,
  },
  {
    name: "--pid 42abc",
    args: (c) => ["register", "--pid", "42abc", "--home", c.home],
    code: 2,
    stderr: /Invalid --pid/,
  },
  {
    name: "--pid huge",
    args: (c) => ["register", "--pid", "99999999999999999999", "--home", c.home],
    code: 2,
    stderr: /Invalid --pid/,
  },
  {
    name: "--pid of no process",
    args: (c) => ["register", "--pid", String(NO_PID), "--home", c.home],
    code: 2,
    stderr: /no running process/,
  },
  {
    name: "--pid without a value",
    args: (c) => ["register", "--home", c.home, "--pid"],
    code: 2,
    stderr: /Missing value for --pid/,
  },
  {
    name: "--older-than -1h",
    args: (c) => ["prune", "--older-than", "-1h", "--home", c.home],
    code: 2,
    stderr: /Invalid --older-than/,
  },
  {
    name: "--older-than 1y",
    args: (c) => ["prune", "--older-than", "1y", "--home", c.home],
    code: 2,
    stderr: /Invalid --older-than/,
  },
  {
    name: "--older-than empty",
    args: (c) => ["prune", "--older-than", "", "--home", c.home],
    code: 2,
    stderr: /Invalid --older-than/,
  },
  {
    name: "--older-than 1.5h",
    args: (c) => ["prune", "--older-than", "1.5h", "--home", c.home],
    code: 2,
    stderr: /Invalid --older-than/,
  },
  { name: "--home empty", args: () => ["list", "--home", ""], code: 2, stderr: /Invalid --home/ },
  {
    name: "--home at a file (list)",
    args: (c) => ["list", "--home", c.file],
    code: 2,
    stderr: /Invalid --home: not a directory/,
  },
  {
    name: "--home at a file (register)",
    args: (c) => ["register", "--pid", c.pid, "--home", c.file],
    code: 2,
    stderr: /Invalid --home: not a directory/,
  },
  {
    name: "ROSTER_HOME at a file",
    args: () => ["list"],
    env: { ROSTER_HOME: "/etc/passwd" },
    code: 2,
    stderr: /Invalid ROSTER_HOME: not a directory/,
  },
  {
    name: "ROSTER_SESSION_PID empty",
    args: (c) => ["register", "--home", c.home],
    env: { ROSTER_SESSION_PID: "" },
    code: 2,
    stderr: /Invalid ROSTER_SESSION_PID/,
  },
  {
    name: "ROSTER_SESSION_PID garbage",
    args: (c) => ["register", "--home", c.home],
    env: { ROSTER_SESSION_PID: "pid;rm -rf /" },
    code: 2,
    stderr: /Invalid ROSTER_SESSION_PID/,
  },
  {
    name: "CLAUDE_PID garbage",
    args: (c) => ["register", "--home", c.home],
    env: { CLAUDE_PID: "0x10" },
    code: 2,
    stderr: /Invalid CLAUDE_PID/,
  },
  {
    name: "--cwd that does not exist",
    args: (c) => ["register", "--pid", c.pid, "--cwd", "/no/such/dir", "--home", c.home],
    code: 2,
    stderr: /Invalid --cwd: no such directory/,
  },
  {
    name: "--cwd at a file",
    args: (c) => ["register", "--pid", c.pid, "--cwd", c.file, "--home", c.home],
    code: 2,
    stderr: /Invalid --cwd: not a directory/,
  },
  {
    name: "--state bogus",
    args: (c) => ["list", "--state", "bogus", "--home", c.home],
    code: 2,
    stderr: /Invalid --state/,
  },
  {
    name: "--agent too long",
    args: (c) => ["register", "--pid", c.pid, "--agent", "a".repeat(2000), "--home", c.home],
    code: 2,
    stderr: /Invalid --agent: longer than/,
  },
  {
    name: "unknown flag",
    args: (c) => ["list", "--bogus", "--home", c.home],
    code: 2,
    stderr: /Unknown flag for list: --bogus/,
  },
  {
    name: "unknown command",
    args: () => ["frobnicate"],
    code: 2,
    stderr: /Unknown command: frobnicate/,
  },
  {
    name: "ROSTER_TEST_PAUSE_AT garbage",
    args: (c) => ["register", "--pid", c.pid, "--home", c.home],
    env: { ROSTER_TEST_PAUSE_AT: "nowhere" },
    code: 2,
    stderr: /Invalid ROSTER_TEST_PAUSE_AT/,
  },
];

Deno.test("hostile flags and environment values", async (t) => {
  await using home = await tempDir();
  await using live = spawnSleeper();
  await using other = spawnSleeper();
  await rosterJson(home.path, ["register", "--pid", String(other.pid)]);
  const file = await Deno.makeTempFile();
  try {
    const before = snapshot(home.path);
    for (const c of FLAGS) {
      await t.step(c.name, async () => {
        const r = await roster(c.args({ home: home.path, pid: String(live.pid), file }), {
          env: c.env,
        });
        assertEquals(r.code, c.code, r.stderr);
        assertEquals(r.stdout, "");
        assertMatch(r.stderr, /^roster: [A-Z]/);
        assertMatch(r.stderr, c.stderr);
        assert(!hasStackTrace(r.stderr), r.stderr);
        assertEquals(snapshot(home.path), before);
      });
    }
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("list tells a field's literal backslash text from the control character", async (t) => {
  // Retest of issue 24: an agent named with the text `\x1b[31m` printed exactly as one named
  // with a real ESC, so a person could not tell which the store held.
  await using home = await tempDir();
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  for (const [s, agent] of [[a, "lit\\x1b[31m"], [b, "esc\x1b[31m"]] as const) {
    const r = await roster([
      "register",
      "--pid",
      String(s.pid),
      "--agent",
      agent,
      "--home",
      home.path,
      "--quiet",
    ]);
    assertEquals(r.code, 0, r.stderr);
  }
  await t.step("the table shows them apart", async () => {
    const table = await roster(["list", "--home", home.path]);
    assertEquals(table.code, 0, table.stderr);
    assert(!table.stdout.includes("\u001b"), "no raw escape reaches the terminal");
    assert(table.stdout.includes("lit\\\\x1b[31m"), table.stdout);
    assert(table.stdout.includes("esc\\x1b[31m"), table.stdout);
  });
});
