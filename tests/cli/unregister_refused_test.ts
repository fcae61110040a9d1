/**
 * `unregister` on a store roster refuses exits 0, as the README says (issue 24, item 9): a
 * session-end hook must not fail its session. The reason goes to stderr, nothing is removed and
 * nothing is written through the link.
 */
import { assert, assertEquals } from "../assert.ts";
import { roster, spawnSleeper, tempDir } from "../helpers.ts";

Deno.test("unregister on a refused store: exit 0, the reason on stderr", async (t) => {
  await using home = await tempDir();
  await using elsewhere = await tempDir();
  Deno.symlinkSync(elsewhere.path, `${home.path}/places`);
  await using sleeper = spawnSleeper();
  for (const extra of [[], ["--json"], ["--quiet"]]) {
    await t.step(extra.join(" ") || "plain", async () => {
      const r = await roster([
        "unregister",
        "--home",
        home.path,
        "--pid",
        String(sleeper.pid),
        ...extra,
      ]);
      assertEquals(r.code, 0, r.stderr);
      assert(r.stderr.includes("symbolic link"), r.stderr);
      if (extra[0] === "--json") {
        assertEquals(JSON.parse(r.stdout), { pid: sleeper.pid, outcome: "refused", row: null });
      }
      assertEquals([...Deno.readDirSync(elsewhere.path)], []);
    });
  }
  await t.step("register on it still fails (exit 1): only the end hook is lenient", async () => {
    const r = await roster(["register", "--home", home.path, "--pid", String(sleeper.pid)]);
    assertEquals(r.code, 1, r.stderr);
  });
});

Deno.test("unregister with a home that is a file, or none at all: refused, exit 0", async (t) => {
  await using sleeper = spawnSleeper();
  const cases: [string, Record<string, string>, RegExp][] = [
    ["ROSTER_HOME=/dev/null", { ROSTER_HOME: "/dev/null" }, /Invalid ROSTER_HOME: not a directory/],
    ["no HOME", { ROSTER_HOME: "", HOME: "", XDG_STATE_HOME: "" }, /Cannot find a home/],
  ];
  for (const [name, env, why] of cases) {
    await t.step(name, async () => {
      const args = ["unregister", "--pid", String(sleeper.pid), "--json"];
      const r = await roster(args, { env });
      assertEquals(r.code, 0, r.stderr);
      assert(why.test(r.stderr), r.stderr);
      assertEquals(JSON.parse(r.stdout), { pid: sleeper.pid, outcome: "refused", row: null });
    });
  }
});
