/**
 * `roster list` output options end to end: pids only, no headers, chosen columns, the wide
 * columns, truncation to the terminal width (never in JSON), the filters, the empty-result
 * message naming the filter, and AGE counted from the session's first registration.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { cliArgs, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

Deno.test("roster list output", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const deep = `${dir.path}/proj/sub/${"long-directory-name-".repeat(6)}`;
  await Deno.mkdir(deep, { recursive: true });
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  await using c = spawnSleeper();
  const reg = (pid: number, ...more: string[]) =>
    rosterJson<Row>(home, ["register", "--pid", String(pid), ...more]);
  await reg(a.pid, "--agent", "claude", "--session-id", "sa", "--cwd", `${dir.path}/proj`);
  await reg(b.pid, "--agent", "codex", "--session-id", "sb", "--cwd", deep);
  await reg(c.pid, "--agent", "pi", "--cwd", dir.path);
  const list = (...args: string[]) => roster(["list", "--home", home, ...args]);

  await t.step("-q prints pids only, newest first", async () => {
    const r = await list("-q");
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, `${c.pid}\n${b.pid}\n${a.pid}\n`);
  });

  await t.step("--no-headers and --columns", async () => {
    const r = await list("--no-headers", "--columns", "pid,agent,session_id");
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout.split("\n")[0].split(/\s+/), [String(c.pid), "pi", "-"]);
    const bad = await list("--columns", "pid,colour");
    assertEquals(bad.code, 2);
    assertMatch(bad.stderr, /Invalid --columns: unknown column colour; expected some of pid,/);
  });

  await t.step("--wide adds session id, host, pane and source", async () => {
    const r = await list("--wide");
    const header = r.stdout.split("\n")[0].split(/\s+/);
    for (const h of ["SESSION", "HOST", "PANE", "SOURCE"]) {
      assert(header.includes(h), header.join(" "));
    }
  });

  await t.step("cells are cut to COLUMNS in a terminal; JSON keeps them whole", async () => {
    // A terminal: util-linux script(1) gives the command a pty.
    const line = [Deno.execPath(), ...cliArgs(["list", "--home", home, "--agent", "codex"])]
      .map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
    const tty = await new Deno.Command("script", {
      args: ["-qec", line, "/dev/null"],
      env: { COLUMNS: "60", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(tty.stdout).replaceAll("\r", "");
    assertEquals(tty.code, 0, text);
    for (const l of text.trimEnd().split("\n")) assert(l.length <= 60, l);
    assertMatch(text, /…/);
    const rows = await rosterJson<Row[]>(home, ["list", "--agent", "codex"], {
      env: { COLUMNS: "60" },
    });
    assertEquals(rows[0].cwd, Deno.realPathSync(deep));
  });

  await t.step("into a pipe nothing is cut, whatever $COLUMNS says", async () => {
    const piped = await roster(["list", "--home", home, "--agent", "codex"], {
      env: { COLUMNS: "60" },
    });
    assertEquals(piped.code, 0, piped.stderr);
    assertMatch(piped.stdout, new RegExp(Deno.realPathSync(deep).replaceAll("/", "\\/")));
    assertEquals(/…/.test(piped.stdout), false);
  });

  await t.step("filters: --session-id, --host, --under, --agent twice, --state a,b", async () => {
    const pids = async (...args: string[]) =>
      (await rosterJson<Row[]>(home, ["list", ...args])).map((r) => r.session_pid).sort();
    assertEquals(await pids("--session-id", "sb"), [b.pid]);
    assertEquals(await pids("--host", Deno.hostname()), [a.pid, b.pid, c.pid].sort());
    assertEquals(await pids("--host", "elsewhere"), []);
    assertEquals(await pids("--under", `${dir.path}/proj`), [a.pid, b.pid].sort());
    assertEquals(await pids("--agent", "claude", "--agent", "pi"), [a.pid, c.pid].sort());
    assertEquals(await pids("--agent", "claude,pi"), [a.pid, c.pid].sort());
    assertEquals((await pids("--state", "alive,dead")).length, 3);
  });

  await t.step("an empty result names the filter", async () => {
    const r = await list("--agent", "gemini");
    assertEquals(r.code, 0);
    assertEquals(r.stdout, "");
    assertEquals(r.stderr, "No sessions match --agent gemini.\n");
    const none = await roster(["list", "--home", `${dir.path}/empty`]);
    assertEquals(none.stderr, "No sessions registered.\n");
  });

  await t.step("only ended sessions: how many are hidden, and how to show them", async () => {
    const only = `${dir.path}/ended`;
    const gone = spawnSleeper();
    await rosterJson<Row>(only, ["register", "--pid", String(gone.pid), "--agent", "pi"]);
    await gone.kill();
    const r = await roster(["list", "--home", only]);
    assertEquals([r.code, r.stdout], [0, ""]);
    assertEquals(
      r.stderr,
      "No live sessions. 1 ended session is hidden: roster list --all shows it.\n",
    );
    const f = await roster(["list", "--home", only, "--agent", "pi"]);
    assertEquals(
      f.stderr,
      "No sessions match --agent pi. 1 ended session is hidden: roster list --all --agent pi " +
        "shows it.\n",
    );
  });

  await t.step("AGE counts from the session's start, kept when it registers again", async () => {
    await using d = spawnSleeper();
    await new Promise((ok) => setTimeout(ok, 2100));
    await reg(d.pid, "--agent", "late");
    const r = await list("--agent", "late", "--no-headers", "--columns", "age");
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, /^[2-9]s\n$/);
  });
});
