/**
 * The same conventions on every command: --quiet where a command writes, "not found" (3)
 * apart from a runtime failure (1), --color with NO_COLOR and TERM=dumb, `roster help CMD`,
 * token --json for a gone pid, and a pid named by someone else never verified, so whoami
 * never answers with it.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { NO_PID, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { COMMANDS } from "../../src/cli/spec.ts";
import { SESSION_ID_VARS } from "../../src/registry/session_id.ts";

Deno.test("consistency across commands", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  await using s = spawnSleeper();

  await t.step("--quiet on every command that writes prints nothing", async () => {
    const dead = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(dead.pid), "--session-id", "q-dead"]);
    await dead.kill();
    await using parked = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(parked.pid), "--session-id", "q-park"]);
    const user = `${dir.path}/user`;
    await Deno.mkdir(user);
    // Each command that changes a file, run as it changes one; flags before exec's CMD.
    const writes: Record<string, string[]> = {
      register: ["register", "--pid", String(s.pid)],
      activity: ["activity", "working", "--pid", String(s.pid)],
      "continuation-mode": ["continuation-mode", "on"],
      "continuation-hold": ["continuation-hold", "on"],
      "continuation-plan": ["continuation-plan", "--key", "q1", "--session", String(dead.pid)],
      "continuation-release": ["continuation-release", "--key", "q1"],
      "continuation-decline": ["continuation-decline", "--key", "q1"],
      "continuation-clean": ["continuation-clean", "--older-than", "0s"],
      park: ["park", "--pid", String(parked.pid)],
      resume: ["resume", "--session-id", "q-park", "--successor-pid", String(s.pid)],
      prune: ["prune", "--older-than", "0s"],
      unregister: ["unregister", "--pid", String(s.pid)],
      hooks: ["hooks", "install", "claude"],
      exec: ["exec", "--home", home, "--quiet", "--", "sh", "-c", "echo out"],
      restore: ["restore", "--agent", "none-such"],
    };
    // These can run twice: the second time with --json, which --quiet silences too.
    const again = ["register", "activity", "continuation-mode", "continuation-hold", "hooks"];
    for (const [name, args] of Object.entries(writes)) {
      const spec = COMMANDS.find((c) => c.name === name)!;
      assert(spec.flags.some((f) => f.name === "quiet"), `${name} has no --quiet`);
      const line = name === "exec" ? args : [...args, "--home", home, "--quiet"];
      const r = await roster(line, { env: { HOME: user } });
      const expected = name === "exec" ? "out\n" : "";
      assertEquals([r.code, r.stdout, r.stderr], [0, expected, ""], line.join(" "));
      if (again.includes(name)) {
        const j = await roster([...line, "--json"], { env: { HOME: user } });
        assertEquals([j.code, j.stdout, j.stderr], [0, "", ""], `${line.join(" ")} --json`);
      }
    }
    // Every other command with --quiet is in the list: a new writer gets tested here.
    for (const c of COMMANDS) {
      if (c.flags.some((f) => f.name === "quiet") && c.name !== "list") {
        assert(c.name in writes, `${c.name} takes --quiet: add it to this test`);
      }
    }
  });

  await t.step("whoami with no session: exit 3 (not found), not 1", async () => {
    const r = await roster(["whoami", "--home", home]);
    assertEquals(r.code, 3);
    assertMatch(r.stderr, /^roster: No registered live session owns this process/);
  });

  await t.step(
    "register --pid of a process that is not the caller's ancestor is not verified",
    async () => {
      const row = await rosterJson<Row>(home, ["register", "--pid", "1"]);
      assertEquals(row.pid_verified, false);
      const mine = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)]);
      assertEquals(mine.pid_verified, false);
      const r = await roster(["whoami", "--home", home]);
      assertEquals(r.code, 3);
    },
  );

  await t.step("token --json for a gone pid prints, and exits 3", async () => {
    const r = await roster(["token", String(NO_PID), "--json"]);
    assertEquals(r.code, 3);
    const out = JSON.parse(r.stdout);
    assertEquals(out.pid, NO_PID);
    assertEquals(out.token, null);
    assertEquals(out.state, "gone");
  });

  await t.step("--color always|never, NO_COLOR and TERM=dumb", async () => {
    const has = (s: string) => s.includes("\x1b[");
    const always = await roster(["list", "--home", home, "--color", "always"]);
    assert(has(always.stdout), "always colours even into a pipe");
    const never = await roster(["list", "--home", home, "--color", "never"]);
    assert(!has(never.stdout));
    const auto = await roster(["list", "--home", home, "--color", "auto"]);
    assert(!has(auto.stdout), "auto: a pipe gets no colour");
    const noColor = await roster(["list", "--home", home, "--color", "always"], {
      env: { NO_COLOR: "1" },
    });
    assert(has(noColor.stdout), "an explicit --color always wins over NO_COLOR");
    const bad = await roster(["list", "--color", "sometimes"]);
    assertEquals(bad.code, 2);
    assertMatch(bad.stderr, /Invalid --color: expected one of auto, always, never/);
  });

  await t.step("roster help CMD is roster CMD --help", async () => {
    const a = await roster(["help", "wait"]);
    const b = await roster(["wait", "--help"]);
    assertEquals(a.code, 0);
    assertEquals(a.stdout, b.stdout);
    assertMatch(a.stdout, /^roster wait: /);
    const all = await roster(["help"]);
    assertMatch(all.stdout, /^roster \S+: a host-local registry/);
    const bad = await roster(["help", "wiat"]);
    assertEquals(bad.code, 2);
    assertMatch(bad.stderr, /Unknown command: wiat \(did you mean wait\?\)/);
  });

  await t.step("roster schema NAME prints a JSON Schema; schema lists them", async () => {
    const r = await roster(["schema", "row"]);
    assertEquals(r.code, 0, r.stderr);
    const schema = JSON.parse(r.stdout);
    assertEquals(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
    const names = await roster(["schema"]);
    for (const n of ["record", "row", "list", "prune", "verdict", "doctor"]) {
      assertMatch(names.stdout, new RegExp(`^${n}\\s`, "m"));
    }
    const bad = await roster(["schema", "rows"]);
    assertEquals(bad.code, 2);
    assertMatch(bad.stderr, /Invalid NAME: expected one of /);
  });

  await t.step("register --help names every variable a session id is read from", async () => {
    const r = await roster(["register", "--help"]);
    assertEquals(r.code, 0, r.stderr);
    const help = r.stdout.replace(/\s+/g, " ");
    const read = ["ROSTER_SESSION_ID", ...Object.values(SESSION_ID_VARS).flat()];
    // The harnesses' own, as docs/hooks.md lists them, whatever owner.ts holds today.
    for (const v of new Set([...read, "CODEX_THREAD_ID", "GEMINI_SESSION_ID"])) {
      assert(help.includes(`$${v}`), `--session-id's help does not name $${v}: ${help}`);
    }
  });
});
