/**
 * `roster metrics` on stdout is the exposition --textfile writes, byte for byte, and promtool
 * accepts it whatever the records hold (issue 24, item 5): an agent, a session id and a cwd
 * carrying quotes, backslashes, line feeds, ESC, C1 controls, BEL and U+2028. Before, stdout
 * went through the terminal escaper (`\x1b`), an escape the format does not have, and promtool
 * rejected the whole text.
 */
import { assert, assertEquals } from "../assert.ts";
import { roster, spawnSleeper, tempDir } from "../helpers.ts";
import { promtoolCheck } from "./servers.ts";

const HOSTILE = 'a\x1b[31m"\\\n\x85\u2028\x07b';

Deno.test("metrics with hostile label values: promtool accepts stdout and the textfile", async () => {
  await using home = await tempDir();
  await using work = await tempDir();
  const cwd = `${work.path}/${HOSTILE.replaceAll("\n", "_")}`;
  Deno.mkdirSync(cwd);
  await using sleeper = spawnSleeper();
  const reg = await roster([
    "register",
    "--home",
    home.path,
    "--pid",
    String(sleeper.pid),
    "--agent",
    HOSTILE,
    "--session-id",
    HOSTILE,
    "--cwd",
    cwd,
    "--quiet",
  ]);
  assertEquals(reg.code, 0, reg.stderr);
  for (const extra of [[], ["--session-labels"]]) {
    const out = await roster(["metrics", "--home", home.path, ...extra]);
    assertEquals(out.code, 0, out.stderr);
    assertEquals(await promtoolCheck(out.stdout), { code: 0, out: "" }, extra.join(" "));
    const file = `${work.path}/roster.prom`;
    const written = await roster(["metrics", "--home", home.path, "--textfile", file, ...extra]);
    assertEquals(written.code, 0, written.stderr);
    const text = Deno.readTextFileSync(file);
    assertEquals(await promtoolCheck(text), { code: 0, out: "" });
    // The same encoder: the two differ only in the scrape's own duration and time.
    const stable = (t: string) =>
      t.split("\n").filter((l) => !l.startsWith("roster_scrape_")).join("\n");
    assertEquals(stable(out.stdout), stable(text));
    // Escaped as the format says: backslash, double quote and line feed, nothing else.
    const escaped = HOSTILE.replaceAll("\\", "\\\\").replaceAll('"', '\\"')
      .replaceAll("\n", "\\n");
    assert(text.includes(`roster_sessions{agent="${escaped}",`), text);
  }
});
