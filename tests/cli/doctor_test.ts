/**
 * `roster doctor` end to end: on a healthy home it reports everything and exits 0; on a broken
 * one (a store others may write, a malformed record, an outdated hook, a bad continuation
 * config) it names each problem with one line of advice and exits 1.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { hostDir, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";

interface Doctor {
  ok: boolean;
  home: { path: string; source: string };
  host: { hostname: string; boot_id: string | null; pid_ns: string | null };
  process: { backend: string; wait: string };
  store: { alive: number; dead: number; unknown: number; malformed: number };
  continuation: { mode: string; why: string };
  hooks: { harness: string; state: string }[];
  problems: { what: string; advice: string }[];
}

Deno.test("roster doctor", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const user = `${dir.path}/user`;
  await Deno.mkdir(user);
  await using s = spawnSleeper();
  await rosterJson(home, ["register", "--pid", String(s.pid)]);
  const env = { HOME: user };

  await t.step("a healthy home: exit 0, every section filled", async () => {
    const r = await roster(["doctor", "--home", home, "--json"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const d = JSON.parse(r.stdout) as Doctor;
    assertEquals(d.ok, true);
    assertEquals(d.home, { ...d.home, path: home, source: "--home" });
    assertEquals(d.host.hostname, Deno.hostname());
    assertEquals(d.store.alive, 1);
    assertEquals(d.continuation.mode, "off");
    assertEquals(d.hooks.map((h) => h.state), ["absent", "absent", "absent", "absent"]);
    if (Deno.build.os === "linux") {
      assertEquals(d.process.backend, "linux");
      assertMatch(d.host.pid_ns ?? "", /^pid:\[\d+\]$/);
    }
    assertEquals(d.problems, []);
  });

  await t.step("the text report names the home and how it was chosen", async () => {
    const r = await roster(["doctor"], { env: { ...env, ROSTER_HOME: home } });
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, new RegExp(`home\\s+${home} \\(from ROSTER_HOME\\)`));
    assertMatch(r.stdout, /No problems found\.\n$/);
  });

  await t.step("a broken home: each problem with advice, exit 1", async () => {
    await Deno.chmod(home, 0o777);
    await Deno.writeTextFile(`${hostDir(home)}/12345.json`, "{ torn");
    await Deno.chmod(`${hostDir(home)}/12345.json`, 0o600);
    await Deno.mkdir(`${home}/continuations`, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(`${home}/continuations/config.json`, '{"mode": "sometimes"}');
    await Deno.mkdir(`${user}/.claude`);
    await Deno.writeTextFile(
      `${user}/.claude/settings.json`,
      JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: "command", command: "roster register" }] }] },
      }),
    );
    const r = await roster(["doctor", "--home", home, "--json"], { env });
    assertEquals(r.code, 1, r.stderr);
    const d = JSON.parse(r.stdout) as Doctor;
    assertEquals(d.ok, false);
    assertEquals(d.store.malformed, 1);
    assertEquals(d.hooks.find((h) => h.harness === "claude")?.state, "outdated");
    const text = d.problems.map((p) => `${p.what} -> ${p.advice}`).join("\n");
    assertMatch(text, /writable by others.*-> chmod 700/);
    assertMatch(text, /malformed.*-> .*roster prune --older-than/);
    assertMatch(text, /claude hooks.*outdated.*-> roster hooks install claude/);
    assertMatch(text, /config\.json.*-> /);
    const plain = await roster(["doctor", "--home", home], { env });
    assertEquals(plain.code, 1);
    assert(
      plain.stdout.split("\n").filter((l) => l.startsWith("advice: ")).length >= 3,
      plain.stdout,
    );
  });
});
