/**
 * The worked example of docs/continuation.md, run as written: its restore script relaunches
 * a dead Claude Code session in a new window of a real tmux server (private to the test), and
 * the stand-in harness there starts the continue hook the moment it runs, as a fast harness
 * would. The turn the hook sends must reach the session exactly once. Needs tmux and jq;
 * without them the test is skipped with a printed reason.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { cliArgs, exists, rosterJson, run, spawnSleeper, tempDir, writeJson } from "../helpers.ts";
import type { Plan } from "../../src/continuation/schema.ts";
import { docExample as example } from "./fixtures.ts";

const installed = (tool: string) =>
  new Deno.Command("sh", { args: ["-c", `command -v ${tool}`], stdout: "null" }).outputSync()
    .success;
const missing = ["tmux", "jq"].filter((tool) => !installed(tool));
if (missing.length > 0) {
  console.log(`skipped: the worked example needs ${missing.join(" and ")} (apt-get install)`);
}

const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

function executable(path: string, text: string) {
  Deno.writeTextFileSync(path, text);
  Deno.chmodSync(path, 0o755);
}

/** Seconds the restore script's `continuation-release` is held back (see the roster wrapper). */
const SLOW_RELEASE_S = 3;

Deno.test({
  name: "docs/continuation.md's worked example: a resumed session gets its one continue",
  ignore: missing.length > 0,
  async fn(t) {
    await using root = await tempDir();
    const dir = (name: string) => {
      Deno.mkdirSync(`${root.path}/${name}`, { recursive: true });
      return Deno.realPathSync(`${root.path}/${name}`);
    };
    const [bin, home, store, tmuxDir, project, log] = [
      "bin",
      "home",
      "store",
      "tmux",
      "project",
      "log",
    ].map(dir);
    const ledger = `${store}/continuations`;

    // roster as a hook runs it. Its release is held back, as on a loaded machine: the resumed
    // session's hook then asks before the restore script has released the plan, which is
    // the race a worked example must survive.
    executable(
      `${bin}/roster`,
      `#!/bin/sh\n[ "$1" = continuation-release ] && sleep ${SLOW_RELEASE_S}\n` +
        `exec ${[Deno.execPath(), ...cliArgs([])].map(shq).join(" ")} "$@"\n`,
    );
    // The harness: `claude --resume SID` starts its session hook in the background at once,
    // then waits at its prompt for the one turn, and keeps what it was sent.
    executable(
      `${bin}/claude`,
      `#!/bin/bash
[ "$1" = --resume ] || exit 64
"$(dirname "$0")/continue-hook" "$2" "$PWD" >>"$LOG/hook.log" 2>&1 &
IFS= read -r turn
printf '%s\\n' "$turn" >"$LOG/turn.tmp" && mv "$LOG/turn.tmp" "$LOG/turn"
`,
    );
    const restore = example("restore-sessions");
    executable(`${bin}/restore-sessions`, restore);
    executable(`${bin}/continue-hook`, example("continue-hook"));
    // "the same last_entry_id as the restore script": taken from it, as a reader would.
    const fn = /^last_entry_id\(\) \{[\s\S]*?^\}$/m.exec(restore);
    assert(fn, "the restore script defines last_entry_id");
    Deno.writeTextFileSync(`${bin}/last-entry-id.sh`, fn[0] + "\n");

    const env: Record<string, string> = {
      PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      HOME: home,
      ROSTER_HOME: store,
      TMUX_TMPDIR: tmuxDir,
      TERM: "xterm-256color",
      SHELL: "/bin/sh",
      LOG: log,
      NO_COLOR: "1",
    };
    const sh = (cmd: string, args: string[]) => run(cmd, args, env, root.path);

    // An interrupted Claude Code session: registered, then its process killed.
    const session = spawnSleeper();
    await rosterJson(store, [
      "register",
      "--pid",
      String(session.pid),
      "--agent",
      "claude",
      "--session-id",
      "S1",
      "--cwd",
      project,
    ]);
    await session.kill();
    // Its transcript, where Claude Code keeps it, ending in entry m1.
    const transcripts = `${home}/.claude/projects/${project.replace(/[/.]/g, "-")}`;
    Deno.mkdirSync(transcripts, { recursive: true });
    Deno.writeTextFileSync(`${transcripts}/S1.jsonl`, '{"uuid":"m0"}\n{"uuid":"m1"}\n');
    Deno.mkdirSync(ledger, { mode: 0o700 });
    writeJson(`${ledger}/config.json`, { mode: "on" });

    const server = await sh("tmux", ["new-session", "-d", "-s", "restore", "-x", "160"]);
    assertEquals(server.code, 0, server.stderr);
    try {
      await t.step("the restore script plans, relaunches and releases", async () => {
        const r = await sh("bash", [`${bin}/restore-sessions`]);
        assertEquals([r.code, r.stderr], [0, ""]);
        const plans = [...Deno.readDirSync(ledger)].filter((e) => e.name.endsWith(".plan.json"));
        assertEquals(plans.length, 1);
        const plan = JSON.parse(Deno.readTextFileSync(`${ledger}/${plans[0].name}`)) as Plan;
        assertEquals([plan.state, plan.frozen_marker, plan.cause], ["released", "m1", "hard"]);
        assertMatch(plan.session.tmux_pane ?? "", /^%\d+$/);
      });

      await t.step("the hook sends the one continue into the new pane", async () => {
        const turn = `${log}/turn`;
        for (const give = Date.now() + 40_000; !exists(turn);) {
          if (Date.now() > give) {
            throw new Error(`no turn arrived; the hook said:\n${hookLog(log)}`);
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        const sent = Deno.readTextFileSync(turn);
        const key = [...Deno.readDirSync(ledger)].find((e) => e.name.endsWith(".claim"))!.name
          .replace(/\.claim$/, "");
        const claim = JSON.parse(Deno.readTextFileSync(`${ledger}/${key}.claim`));
        assertMatch(sent, /^Roster continuation [0-9a-f]{24}: this session was interrupted/);
        assert(sent.includes(`Continuation id: ${claim.continuation_id}.`), sent);
      });

      await t.step("run again, the restore script leaves a restored session alone", async () => {
        const r = await sh("bash", [`${bin}/restore-sessions`]);
        assertEquals([r.code, r.stderr], [0, ""]);
        const audit = Deno.readTextFileSync(`${ledger}/audit.ndjson`).trim().split("\n")
          .map((l) => JSON.parse(l)).filter((l) => l.event === "claim");
        assertEquals(audit.length, 1, hookLog(log));
      });
    } finally {
      await sh("tmux", ["kill-server"]);
    }
  },
});

function hookLog(log: string): string {
  try {
    return Deno.readTextFileSync(`${log}/hook.log`);
  } catch {
    return "(no hook output)";
  }
}
