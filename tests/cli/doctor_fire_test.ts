/**
 * `roster doctor` finds why an installed hook would not fire (issue 27 item 2, issue 22 item 8):
 * `roster` not on PATH, no `jq` for the Codex or Gemini CLI recipe, Codex's hooks not trusted,
 * and a store it cannot read (a report with advice, not one line). Each cause with its advice,
 * the JSON checked against `roster schema doctor`.
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";
import { assertSchema } from "../schema.ts";
import { codexTrustKeys, trustedKeys } from "../../src/hooks/fire.ts";

interface Doctor {
  ok: boolean;
  problems: { what: string; advice: string }[];
}

async function world(dir: string) {
  const user = `${dir}/user`;
  const bin = `${dir}/bin`;
  const store = `${dir}/store`;
  await Deno.mkdir(bin, { recursive: true });
  await Deno.mkdir(user, { recursive: true });
  await Deno.mkdir(`${dir}/proj`);
  for (const tool of ["roster", "jq"]) {
    await Deno.writeTextFile(`${bin}/${tool}`, "#!/bin/sh\nexit 0\n");
    await Deno.chmod(`${bin}/${tool}`, 0o755);
  }
  const env = { HOME: user, PATH: bin };
  const i = await roster(["hooks", "install", "codex"], { env });
  assertEquals(i.code, 0, i.stderr);
  // hooks install says what Codex needs before it runs them.
  assertMatch(
    i.stdout,
    /\nCodex runs these hooks only once you trust them: .*Trust all and continue/,
  );
  const hooksFile = `${user}/.codex/hooks.json`;
  const trust = async () => {
    const keys = codexTrustKeys(hooksFile, await Deno.readTextFile(hooksFile));
    await Deno.writeTextFile(
      `${user}/.codex/config.toml`,
      'model = "x"\n\n' +
        keys.map((k) =>
          `[hooks.state.${JSON.stringify(k)}]\ntrusted_hash = "sha256:${"ab".repeat(32)}"\n`
        ).join("\n"),
    );
  };
  const doctor = async (extra: string[] = []) => {
    const args = ["doctor", "--home", store, "--json", ...extra];
    const r = await roster(args, { env, cwd: `${dir}/proj` });
    assertSchema(["doctor"], r.stdout);
    const d = JSON.parse(r.stdout) as Doctor;
    assertEquals(r.code, d.ok ? 0 : 1);
    return d;
  };
  return { user, bin, store, env, hooksFile, trust, doctor };
}

Deno.test("roster doctor: why a hook would not fire", async (t) => {
  await using dir = await tempDir();
  const w = await world(dir.path);

  await t.step("Codex's hooks not trusted yet: what to do, in a terminal and in CI", async () => {
    const d = await w.doctor();
    assertEquals(d.problems.length, 1, JSON.stringify(d.problems));
    assertMatch(
      d.problems[0].what,
      // None of the recipe's hooks is trusted yet, however many it installs.
      /^Codex has not trusted roster's hooks in .*hooks\.json \((\d+) of \1\)/,
    );
    assertMatch(d.problems[0].advice, /Trust all and continue.*--dangerously-bypass-hook-trust/);
  });

  await t.step("trusted: no problem", async () => {
    await w.trust();
    const d = await w.doctor();
    assertEquals([d.ok, d.problems], [true, []]);
  });

  await t.step("roster not on the PATH the hooks run with", async () => {
    await Deno.remove(`${w.bin}/roster`);
    const d = await w.doctor();
    assertEquals(d.problems.length, 1);
    assertMatch(d.problems[0].what, /run `roster`, which is not on PATH/);
    assertMatch(
      d.problems[0].advice,
      /^mkdir -p ~\/\.local\/bin && ln -sf \S+ ~\/\.local\/bin\/roster/,
    );
    await Deno.writeTextFile(`${w.bin}/roster`, "#!/bin/sh\n");
    await Deno.chmod(`${w.bin}/roster`, 0o755);
  });

  await t.step("a roster on PATH that cannot run (not executable) does not count", async () => {
    await Deno.chmod(`${w.bin}/roster`, 0o644);
    const d = await w.doctor();
    assertMatch(d.problems[0]?.what ?? "", /not on PATH/);
    await Deno.chmod(`${w.bin}/roster`, 0o755);
  });

  await t.step("no jq for the Codex recipe", async () => {
    await Deno.remove(`${w.bin}/jq`);
    const d = await w.doctor();
    assertEquals(d.problems.length, 1);
    assertMatch(d.problems[0].what, /`jq`, which is not on PATH/);
    assertMatch(d.problems[0].advice, /apt-get install jq/);
  });

  await t.step("no jq for the Gemini CLI recipe's BeforeTool hook", async () => {
    const i = await roster(["hooks", "install", "gemini"], { env: w.env });
    assertEquals(i.code, 0, i.stderr);
    const d = await w.doctor();
    const p = d.problems.find((x) => /^The Gemini CLI BeforeTool hook/.test(x.what));
    assertMatch(p?.what ?? "", /`jq`, which is not on PATH: shell commands in a sandbox/);
    assertMatch(p?.advice ?? "", /apt-get install jq/);
    await roster(["hooks", "uninstall", "gemini"], { env: w.env });
  });

  await t.step("a store it cannot read: the whole report, and advice", async () => {
    await Deno.mkdir(`${dir.path}/elsewhere`);
    await Deno.mkdir(w.store, { recursive: true });
    await Deno.symlink(`${dir.path}/elsewhere`, `${w.store}/places`);
    const d = await w.doctor();
    const p = d.problems.find((x) => /^The store cannot be read/.test(x.what));
    assertMatch(p?.what ?? "", /symbolic link/);
    assertMatch(p?.advice ?? "", /--home DIR/);
    const text = await roster(["doctor", "--home", w.store], { env: w.env, cwd: dir.path });
    assertEquals(text.code, 1);
    assertMatch(text.stdout, /^roster .*\n[\s\S]*problem: The store cannot be read/);
  });
});

Deno.test("Codex trust keys and config.toml's trusted hooks", () => {
  const keys = codexTrustKeys(
    "/h/.codex/hooks.json",
    JSON.stringify({
      hooks: {
        SessionStart: [{ hooks: [{ command: "mine" }] }, {
          hooks: [{ command: "x" }, { command: "roster register --quiet" }],
        }],
        SessionEnd: [{ hooks: [{ command: "roster unregister --quiet" }] }],
      },
    }),
  );
  assertEquals(keys, [
    "/h/.codex/hooks.json:session_start:1:1",
    "/h/.codex/hooks.json:session_end:0:0",
  ]);
  const toml = `[hooks.state."/h/.codex/hooks.json:session_start:1:1"]
trusted_hash = "sha256:00ff"
enabled = true

[hooks.state."/h/.codex/hooks.json:session_end:0:0"]
enabled = true
[other]
trusted_hash = "sha256:11"
`;
  assertEquals([...trustedKeys(toml)], ["/h/.codex/hooks.json:session_start:1:1"]);
});
