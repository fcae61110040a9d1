import { assert, assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { nearest, parseArgs } from "../../src/cli/args.ts";
import { commandHelp, mainHelp } from "../../src/cli/help.ts";
import { COMMANDS, usageOf } from "../../src/cli/spec.ts";
import { UsageError } from "../../src/errors.ts";
import { roster } from "../helpers.ts";

Deno.test("parseArgs", async (t) => {
  await t.step("flags before and after the command, = and space forms", () => {
    const p = parseArgs(["--home", "/h", "list", "--state=dead", "--state", "alive", "--json"]);
    assertEquals(p.command?.name, "list");
    assertEquals([p.get("home"), p.all("state"), p.has("json")], ["/h", ["dead", "alive"], true]);
  });
  await t.step("short flags", () => {
    assert(parseArgs(["-V"]).has("version"));
    assert(parseArgs(["list", "-h"]).has("help"));
  });
  await t.step("a value may start with a single dash, so -1 reaches validation", () => {
    assertEquals(parseArgs(["register", "--pid", "-1"]).get("pid"), "-1");
  });
  await t.step("empty value is a value", () => {
    assertEquals(parseArgs(["register", "--agent", ""]).get("agent"), "");
  });
  const bad: [string[], RegExp][] = [
    [["lsit"], /^Unknown command: lsit \(did you mean list\?\)/],
    [["list", "--stat", "dead"], /^Unknown flag for list: --stat \(did you mean --state\?\)/],
    [
      ["list", "--state", "zombie"],
      /^Invalid --state: expected one of alive, dead, unknown, got "zombie"/,
    ],
    [["register", "--pid"], /^Missing value for --pid: expected PID/],
    [["register", "--pid", "--json"], /^Missing value for --pid/],
    [["list", "--all=yes"], /^Flag --all takes no value/],
    [["list", "extra"], /^Unexpected argument for list: extra/],
    [["--bogus"], /^Unknown flag: --bogus/],
  ];
  for (const [argv, re] of bad) {
    await t.step(`rejects ${argv.join(" ")}`, () => {
      const err = assertThrows(() => parseArgs(argv), UsageError);
      assertEquals(err.exitCode, 2);
      assertMatch(err.message, re);
    });
  }
  await t.step("nearest only suggests close words", () => {
    assertEquals(nearest("prnue", ["register", "list", "prune"]), "prune");
    assertEquals(nearest("zzzzzz", ["register", "list", "prune"]), null);
  });
});

/** Help snapshots: run with UPDATE_SNAPSHOTS=1 to rewrite them after a deliberate change. */
Deno.test("help text snapshots", async (t) => {
  const dir = new URL("../fixtures/help/", import.meta.url).pathname;
  const update = Deno.env.get("UPDATE_SNAPSHOTS") === "1";
  const cases: [string, string][] = [
    ["roster", mainHelp()],
    ...COMMANDS.map((c) => [c.name, commandHelp(c)] as [string, string]),
  ];
  for (const [name, text] of cases) {
    await t.step(name, () => {
      const path = `${dir}${name}.txt`;
      if (update) {
        Deno.mkdirSync(dir, { recursive: true });
        Deno.writeTextFileSync(path, text);
      }
      assertEquals(
        text.replace(/roster \d+\.\d+\.\d+\S*/, "roster X"),
        Deno.readTextFileSync(path).replace(/roster \d+\.\d+\.\d+\S*/, "roster X"),
      );
      for (const line of text.split("\n")) {
        assert(line.length <= 100, `line too long in ${name}: ${line}`);
      }
    });
  }
});

Deno.test("the CLI's usage contract", async (t) => {
  await t.step("--version prints roster <semver>", async () => {
    const r = await roster(["--version"]);
    assertEquals(r.code, 0);
    assertMatch(r.stdout, /^roster \d+\.\d+\.\d+\n$/);
  });
  await t.step("help for a command on stdout, exit 0", async () => {
    const r = await roster(["prune", "--help"]);
    assertEquals(r.code, 0);
    assertMatch(r.stdout, /^roster prune: /);
  });
  await t.step("usage errors: exit 2, message on stderr, nothing on stdout", async () => {
    const r = await roster(["list", "--stat", "dead"]);
    assertEquals([r.code, r.stdout], [2, ""]);
    assertEquals(
      r.stderr,
      "roster: Unknown flag for list: --stat (did you mean --state?). Run 'roster list --help' for the flags\n",
    );
  });
  await t.step("a missing command is a usage error", async () => {
    const r = await roster(["--json"]);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /^roster: Missing command: expected one of register, list, prune/);
  });
  await t.step("--home at a file is a usage error naming the flag", async () => {
    const f = await Deno.makeTempFile();
    try {
      const r = await roster(["register", "--pid", String(Deno.pid), "--home", f]);
      assertEquals(r.code, 2);
      assertMatch(r.stderr, /^roster: Invalid --home: not a directory: /);
    } finally {
      await Deno.remove(f);
    }
  });
});

Deno.test("usage lines come from the table: every flag and positional is in them", () => {
  for (const c of COMMANDS) {
    const usage = usageOf(c);
    assert(usage.startsWith(`roster ${c.name}`), usage);
    for (const f of c.flags) assert(usage.includes(`--${f.name}`), `${c.name}: --${f.name}`);
    const pos = c.positionals;
    if (pos) {
      const shown = pos.choices ? pos.choices.join("|") : pos.name;
      assert(usage.includes(pos.usage ?? shown), `${c.name}: ${usage}`);
    }
  }
});
