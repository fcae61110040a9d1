/**
 * `roster man`: the manual page roster(1), generated from the command table (issue 27 item 4),
 * lints clean with mandoc (style warnings included) and reads with man -l, naming every command
 * and flag. mandoc and man-db come from Debian (.ci/setup.d/50-man.sh).
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";
import { COMMANDS, GLOBAL_FLAGS } from "../../src/cli/spec.ts";

async function tool(cmd: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("roster man: the manual page lints clean and reads with man", async (t) => {
  await using dir = await tempDir();
  const r = await roster(["man"]);
  assertEquals(r.code, 0, r.stderr);
  const page = `${dir.path}/roster.1`;
  await Deno.writeTextFile(page, r.stdout);

  await t.step("mandoc -T lint -W style: nothing to say", async () => {
    const lint = await tool("mandoc", ["-T", "lint", "-W", "style", page]);
    assertEquals([lint.code, lint.stdout, lint.stderr], [0, "", ""]);
  });

  await t.step("man -l renders every command and flag of the table", async () => {
    const man = await tool("man", ["-l", page], { MANWIDTH: "100", MAN_KEEP_FORMATTING: "" });
    assertEquals(man.code, 0, man.stderr);
    // man overstrikes bold and underline as "c\bc" and "_\bc" into a pipe: keep the last char.
    // deno-lint-ignore no-control-regex
    const text = man.stdout.replace(/.\x08/g, "");
    assertMatch(text, /^ROSTER\(1\)/);
    for (const c of COMMANDS) {
      assertMatch(text, new RegExp(`\\n   ${c.name}\\n`), c.name);
      for (const f of c.flags) {
        assertMatch(text, new RegExp(`--${f.name}\\b`), `${c.name} --${f.name}`);
      }
    }
    for (const f of GLOBAL_FLAGS) assertMatch(text, new RegExp(`--${f.name}\\b`));
    assertMatch(text, /EXIT STATUS\n\s+Exit codes: 0 success/);
  });
});
