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
  hooks: { harness: string; scope: string; path: string; state: string }[];
  problems: { what: string; advice: string }[];
}

Deno.test("roster doctor", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const user = `${dir.path}/user`;
  await Deno.mkdir(user);
  // doctor reads the hooks of the project in its working directory as well as the user's.
  const project = `${dir.path}/project`;
  await Deno.mkdir(project);
  const cwd = project;
  await using s = spawnSleeper();
  await rosterJson(home, ["register", "--pid", String(s.pid)]);
  const env = { HOME: user };

  await t.step("a healthy home: exit 0, every section filled", async () => {
    const r = await roster(["doctor", "--home", home, "--json"], { env, cwd });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const d = JSON.parse(r.stdout) as Doctor;
    assertEquals(d.ok, true);
    assertEquals(d.home, { ...d.home, path: home, source: "--home" });
    assertEquals(d.host.hostname, Deno.hostname());
    assertEquals(d.store.alive, 1);
    assertEquals(d.continuation.mode, "off");
    assertEquals(d.hooks.map((h) => [h.harness, h.scope, h.path, h.state]), [
      ["claude", "user", `${user}/.claude/settings.json`, "absent"],
      ["claude", "project", `${project}/.claude/settings.json`, "absent"],
      ["claude", "project", `${project}/.claude/settings.local.json`, "absent"],
      ["codex", "user", `${user}/.codex/hooks.json`, "absent"],
      ["codex", "project", `${project}/.codex/hooks.json`, "absent"],
      ["pi", "user", `${user}/.pi/agent/extensions/roster.ts`, "absent"],
      ["pi", "project", `${project}/.pi/extensions/roster.ts`, "absent"],
      ["gemini", "user", `${user}/.gemini/settings.json`, "absent"],
      ["gemini", "project", `${project}/.gemini/settings.json`, "absent"],
    ]);
    if (Deno.build.os === "linux") {
      assertEquals(d.process.backend, "linux");
      assertMatch(d.host.pid_ns ?? "", /^pid:\[\d+\]$/);
    }
    assertEquals(d.problems, []);
  });

  await t.step("the text report names the home and how it was chosen", async () => {
    const r = await roster(["doctor"], { env: { ...env, ROSTER_HOME: home }, cwd });
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, new RegExp(`home\\s+${home} \\(from ROSTER_HOME\\)`));
    assertMatch(r.stdout, /No problems found\.\n$/);
  });

  await t.step(
    "the project's hooks: installed, outdated in the local file, unreadable",
    async () => {
      const installed = await roster(["hooks", "install", "--project", "codex"], { env, cwd });
      assertEquals(installed.code, 0, installed.stderr);
      await Deno.mkdir(`${project}/.claude`);
      await Deno.writeTextFile(
        `${project}/.claude/settings.local.json`,
        JSON.stringify({
          hooks: { SessionEnd: [{ hooks: [{ type: "command", command: "roster unregister" }] }] },
        }),
      );
      await Deno.mkdir(`${project}/.gemini`);
      await Deno.writeTextFile(`${project}/.gemini/settings.json`, "{ not json");
      const r = await roster(["doctor", "--home", home, "--json"], { env, cwd });
      assertEquals(r.code, 1, r.stderr);
      const d = JSON.parse(r.stdout) as Doctor;
      const state = (path: string) => d.hooks.find((h) => h.path === `${project}/${path}`)?.state;
      assertEquals(state(".codex/hooks.json"), "installed");
      assertEquals(state(".claude/settings.local.json"), "outdated");
      assertEquals(state(".gemini/settings.json"), "invalid");
      assertEquals(d.hooks.filter((h) => h.scope === "user").map((h) => h.state), [
        "absent",
        "absent",
        "absent",
        "absent",
      ]);
      // Why an installed hook would not fire (PATH, jq, Codex trust): tests/cli/doctor_fire_test.ts.
      const text = d.problems.map((p) => `${p.what} -> ${p.advice}`)
        .filter((x) => !/which is not on PATH|^Codex has not trusted/.test(x));
      assertEquals(text.length, 2, text.join("\n"));
      assertMatch(
        text[0],
        /claude hooks in .*\/project\/\.claude\/settings\.local\.json are outdated/,
      );
      assertMatch(text[0], /-> Remove roster's hooks from .*settings\.local\.json/);
      assertMatch(text[1], /gemini settings .*\/project\/\.gemini\/settings\.json cannot be read/);
      assertMatch(text[1], /roster hooks install --project gemini/);
      await Deno.remove(`${project}/.claude`, { recursive: true });
      await Deno.remove(`${project}/.gemini`, { recursive: true });
    },
  );

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
    const r = await roster(["doctor", "--home", home, "--json"], { env, cwd });
    assertEquals(r.code, 1, r.stderr);
    const d = JSON.parse(r.stdout) as Doctor;
    assertEquals(d.ok, false);
    assertEquals(d.store.malformed, 1);
    assertEquals(d.hooks.find((h) => h.harness === "claude")?.state, "outdated");
    assertEquals(d.hooks.find((h) => h.harness === "claude")?.scope, "user");
    const text = d.problems.map((p) => `${p.what} -> ${p.advice}`).join("\n");
    assertMatch(text, /writable by others.*-> chmod 700/);
    assertMatch(text, /malformed.*-> Remove it with: rm -- '[^']*12345\.json'/);
    assertMatch(text, /claude hooks.*outdated.*-> roster hooks install claude/);
    assertMatch(text, /config\.json.*-> /);
    const plain = await roster(["doctor", "--home", home], { env, cwd });
    assertEquals(plain.code, 1);
    assert(
      plain.stdout.split("\n").filter((l) => l.startsWith("advice: ")).length >= 3,
      plain.stdout,
    );
  });
});
