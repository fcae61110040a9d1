/**
 * The same conventions on every command: --quiet where a command writes, "not found" (3)
 * apart from a runtime failure (1), --color with NO_COLOR and TERM=dumb, `roster help CMD`,
 * token --json for a gone pid, and a pid named by someone else never verified, so whoami
 * never answers with it.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { NO_PID, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

Deno.test("consistency across commands", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  await using s = spawnSleeper();

  await t.step("--quiet on every command that writes prints nothing", async () => {
    const dead = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(dead.pid)]);
    await dead.kill();
    for (
      const args of [
        ["register", "--pid", String(s.pid)],
        ["prune"],
        ["unregister", "--pid", String(s.pid)],
        ["exec", "--", "true"],
      ]
    ) {
      const r = await roster([...args, "--home", home, "--quiet"]);
      assertEquals([r.code, r.stdout, r.stderr], [0, "", ""], args.join(" "));
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
});
