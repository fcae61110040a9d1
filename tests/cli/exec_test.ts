/**
 * `roster exec` end to end, run as a CI step runs it: the child's pid and start token are
 * recorded however fast it exits, its exit status (or 128+signal) becomes roster's, a missing
 * command is 127 as in a shell, signals reach the child, and the record says how it ended.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { cleanEnv, cliArgs, hostDir, roster, rosterJson, tempDir, waitUntil } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

async function records(home: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  try {
    for (const e of Deno.readDirSync(hostDir(home))) {
      if (e.name.endsWith(".json")) {
        out.push(JSON.parse(await Deno.readTextFile(`${hostDir(home)}/${e.name}`)));
      }
    }
  } catch { /* no store yet */ }
  return out;
}

Deno.test("roster exec", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;

  await t.step(
    "exits with the command's status; the fast child was recorded with its token",
    async () => {
      const r = await roster([
        "exec",
        "--home",
        home,
        "--agent",
        "ci",
        "--session-id",
        "gh-1",
        "--",
        "sh",
        "-c",
        "echo out; echo err >&2; exit 7",
      ]);
      assertEquals(r.code, 7);
      assertEquals(r.stdout, "out\n");
      // After CMD's own output, one line says how the session ended.
      const [rec] = await records(home);
      assertEquals(r.stderr, `err\nroster: ci session ${rec?.session_pid} (gh-1) ended: exit:7\n`);
      assert(rec, "a record was written");
      assertEquals(rec.agent, "ci");
      assertEquals(rec.session_id, "gh-1");
      assertEquals(rec.pid_source, "exec");
      assert(typeof rec.start_token === "string" && rec.start_token !== "", "start token recorded");
      assertEquals(rec.ended_reason, "exit:7");
      assertMatch(String(rec.ended_at), /^\d{4}-\d\d-\d\dT/);
    },
  );

  await t.step("--quiet: CMD's output and nothing else", async () => {
    const q = `${dir.path}/quiet`;
    const r = await roster([
      "exec",
      "--home",
      q,
      "--quiet",
      "sh",
      "-c",
      "echo err >&2; kill -TERM $$",
    ]);
    assertEquals([r.code, r.stdout, r.stderr], [143, "", "err\n"]);
    const [rec] = await records(q);
    assertEquals(rec.ended_reason, "signal:SIGTERM");
    const loud = await roster(["exec", "--home", q, "sh", "-c", "kill -TERM $$"]);
    assertMatch(loud.stderr, /^roster: Session \d+ ended: signal:SIGTERM\n$/);
  });

  await t.step("flags after the command belong to the command (no -- needed)", async () => {
    const r = await roster(["exec", "--home", home, "sh", "-c", "exit 0", "--json"]);
    assertEquals(r.code, 0, r.stderr);
  });

  await t.step("a missing command exits 127, like a shell, and says so", async () => {
    const r = await roster(["exec", "--home", home, "--", "no-such-command-roster-test"]);
    assertEquals(r.code, 127);
    assertEquals(r.stdout, "");
    assertMatch(r.stderr, /^roster: Command not found: no-such-command-roster-test\n$/);
  });

  await t.step("a command that is not executable exits 126", async () => {
    const file = `${dir.path}/not-exec`;
    await Deno.writeTextFile(file, "echo hi\n");
    await Deno.chmod(file, 0o644);
    const r = await roster(["exec", "--home", home, "--", file]);
    assertEquals(r.code, 126);
    assertMatch(r.stderr, /^roster: Command not executable: /);
  });

  await t.step("no command is a usage error", async () => {
    const r = await roster(["exec", "--home", home]);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /Missing CMD for exec/);
  });

  await t.step("a child killed by a signal: exit 128+N, recorded", async () => {
    const r = await roster(["exec", "--home", home, "--", "sh", "-c", "kill -TERM $$"]);
    assertEquals(r.code, 128 + 15);
    const ended = (await records(home)).find((x) => x.ended_reason === "signal:SIGTERM");
    assert(ended, "the record says SIGTERM ended it");
  });

  for (const [signal, number] of [["SIGTERM", 15], ["SIGINT", 2], ["SIGHUP", 1]] as const) {
    await t.step(`${signal} to roster reaches the child`, async () => {
      const mark = `${dir.path}/${signal}.got`;
      const ready = `${dir.path}/${signal}.ready`;
      const short = signal.slice(3);
      // The child traps the signal, notes it, and exits 40 + its number.
      const script = `trap 'echo ${short} > ${mark}; exit $((40 + ${number}))' ${short}; ` +
        `touch ${ready}; while :; do sleep 0.05; done`;
      const child = new Deno.Command(Deno.execPath(), {
        args: cliArgs(["exec", "--home", home, "--", "bash", "-c", script]),
        env: { ...cleanEnv(), NO_COLOR: "1" },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      await waitUntil(() => exists(ready), "the child started", { everyMs: 25 });
      child.kill(signal);
      const out = await child.output();
      assertEquals(await Deno.readTextFile(mark), `${short}\n`);
      assertEquals(out.code, 40 + number, new TextDecoder().decode(out.stderr));
    });
  }

  await t.step("while it runs, list shows it and whoami inside answers it", async () => {
    const who = `${dir.path}/whoami.json`;
    const r = await roster([
      "exec",
      "--home",
      home,
      "--agent",
      "ci",
      "--",
      "sh",
      "-c",
      `"$@" whoami --home "${home}" --json > "${who}" && "$@" list --home "${home}" --json`,
      "sh",
      Deno.execPath(),
      ...cliArgs([]),
    ]);
    assertEquals(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as Row[];
    assert(rows.some((x) => x.agent === "ci" && x.liveness === "alive"), r.stdout);
    const me = JSON.parse(await Deno.readTextFile(who)) as Row;
    assertEquals([me.agent, me.pid_source, me.pid_verified], ["ci", "exec", true]);
  });

  await t.step("after it ends, its row is dead and list --all shows how it ended", async () => {
    const rows = await rosterJson<Row[]>(home, ["list", "--all"]);
    assert(rows.length > 0 && rows.every((r) => r.liveness === "dead"));
  });
});

async function exists(p: string) {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("roster exec from inside a harness's tool", async (t) => {
  await using dir = await tempDir();
  await t.step("the environment's session id is the outer session's, not CMD's", async () => {
    // A Claude Code Bash command or a pi tool sees its session's id: CMD is not that session,
    // and its ending must not retire the session's crashed runs (restore would skip them).
    const home = `${dir.path}/ids`;
    const r = await roster(["exec", "--home", home, "--", "true"], {
      env: { CLAUDE_CODE_SESSION_ID: "outer-claude", ROSTER_SESSION_ID: "outer-pi" },
    });
    assertEquals(r.code, 0, r.stderr);
    const [rec] = await records(home);
    assertEquals(rec.session_id, null);
    const given = `${dir.path}/given`;
    const g = await roster(["exec", "--home", given, "--session-id", "job-1", "--", "true"], {
      env: { CLAUDE_CODE_SESSION_ID: "outer-claude" },
    });
    assertEquals(g.code, 0, g.stderr);
    assertEquals((await records(given))[0].session_id, "job-1");
  });

  await t.step("an invalid variable is a usage error before CMD starts", async () => {
    const home = `${dir.path}/bad`;
    const marker = `${dir.path}/ran`;
    const r = await roster(["exec", "--home", home, "--", "sh", "-c", `touch '${marker}'`], {
      env: { ROSTER_AGENT: "x".repeat(5000) },
    });
    assertEquals(r.code, 2, r.stderr);
    assertMatch(r.stderr, /^roster: Invalid ROSTER_AGENT: longer than \d+ characters\n$/);
    assertEquals(await exists(marker), false);
  });

  await t.step(
    "a current directory that is gone runs CMD, recorded as unknown, not /",
    async () => {
      // scripts/roster moves to / when the caller's directory was deleted, and says so: as
      // register records it, the directory is unknown (""), and a restore never relaunches in /.
      const home = `${dir.path}/gone`;
      const r = await roster(["exec", "--home", home, "--", "sh", "-c", "exit 3"], {
        cwd: "/",
        env: { ROSTER_CWD_GONE: "1" },
      });
      assertEquals(r.code, 3, r.stderr);
      assertEquals((await records(home))[0].cwd, "");
    },
  );
});
