/**
 * The plain-shell recipe of docs/hooks.md in real bash and zsh: the session registers itself,
 * `whoami` names it from a command run inside, and the EXIT trap unregisters it.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { installed, rosterJson, run, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { installRoster, recipe, recipeEnv } from "./harness.ts";

const SHELL_RECIPE = recipe("shell");

for (const shell of ["bash", "zsh"]) {
  Deno.test({
    name: `recipe: a plain ${shell} session registers itself and unregisters on exit`,
    ignore: !installed(shell),
    async fn(t) {
      await using dir = await tempDir("roster-recipe-");
      const home = `${dir.path}/home`;
      installRoster(dir.path);
      Deno.writeTextFileSync(`${dir.path}/session.sh`, SHELL_RECIPE);
      const env = recipeEnv(dir.path, home, { ROSTER_AGENT: "me" });
      const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);

      await t.step("inside: one record (sourced twice), whoami names the shell", async () => {
        // What runs inside the session: the recipe (twice, as an rc file re-read would), then
        // whoami from a grandchild, then the shell's own pid for the test to compare.
        const script =
          `. ./session.sh\n. ./session.sh\nsh -c 'roster whoami --json' > whoami.json\n` +
          `roster list --json > inside.json\necho $$\n`;
        const r = await run(shell, ["-c", script], env, dir.path);
        assertEquals(r.code, 0, r.stderr);
        const pid = Number(r.stdout.trim());
        const inside = JSON.parse(Deno.readTextFileSync(`${dir.path}/inside.json`)) as Row[];
        assertEquals(
          inside.map((x) => [x.session_pid, x.agent, x.pid_source, x.pid_verified, x.liveness]),
          [[pid, "me", "flag", true, "alive"]],
        );
        const me = JSON.parse(Deno.readTextFileSync(`${dir.path}/whoami.json`)) as Row;
        assertEquals([me.session_pid, me.reason], [pid, "running"]);
        // After it exited, the EXIT trap has unregistered it.
        assertEquals(await rows(), []);
      });

      await t.step("a killed shell runs no trap: its record turns dead", async () => {
        const r = await run(shell, ["-c", `. ./session.sh\necho $$\nkill -9 $$\n`], env, dir.path);
        assert(r.code !== 0);
        const pid = Number(r.stdout.trim());
        const all = await rows();
        assertEquals(all.map((x) => [x.session_pid, x.liveness, x.reason]), [[
          pid,
          "dead",
          "exited",
        ]]);
        await rosterJson(home, ["prune"]);
        assertEquals(await rows(), []);
      });

      await t.step("whoami outside any session exits 3 (not found)", async () => {
        const r = await run(shell, ["-c", "roster whoami; echo rc=$?"], env, dir.path);
        assertMatch(r.stdout, /^rc=3$/m);
        assertMatch(r.stderr, /^roster: No registered live session owns this process/m);
      });
    },
  });
}

Deno.test("recipe: a pid file that survives PID reuse", async (t) => {
  await using dir = await tempDir("roster-recipe-");
  installRoster(dir.path);
  const watch = `${dir.path}/agent-watch`;
  // It lets go of the output it inherited, as a daemon does, so the starting shell can end.
  Deno.writeTextFileSync(watch, "#!/bin/sh\nexec sleep 300 </dev/null >/dev/null 2>&1\n");
  Deno.chmodSync(watch, 0o755);
  Deno.writeTextFileSync(`${dir.path}/start.sh`, recipe("pidfile"));
  const env = recipeEnv(dir.path, `${dir.path}/home`, { XDG_RUNTIME_DIR: dir.path });
  const pidfile = `${dir.path}/agent-watch.pid`;
  const started: number[] = [];
  // Pids this test has killed and seen gone: never signalled again, since by then another
  // process (another test's) may hold the pid.
  const ended = new Set<number>();
  const start = () => run("bash", ["start.sh"], env, dir.path);
  const current = () => Number(Deno.readTextFileSync(pidfile).split(" ")[0]);
  try {
    await t.step("the first run starts it and writes pid and token", async () => {
      const r = await start();
      assertEquals([r.code, r.stdout], [0, ""]);
      started.push(current());
      assertMatch(Deno.readTextFileSync(pidfile), /^\d+ \d+@[0-9a-f-]+\n$/);
    });
    await t.step("a second run finds it running", async () => {
      const r = await start();
      assertEquals(r.stdout, `agent-watch is already running: ${started[0]}\n`);
    });
    await t.step("once it is gone, a run starts a new one", async () => {
      Deno.kill(started[0], "SIGKILL");
      while (running(started[0])) await new Promise((r) => setTimeout(r, 10));
      ended.add(started[0]);
      const r = await start();
      assertEquals(r.stdout, "");
      started.push(current());
      assert(started[1] !== started[0]);
    });
    await t.step("a pid file whose pid another process now holds starts a new one", async () => {
      // The pid is alive (this test runner) but its start token is not the recorded one.
      const [, token] = Deno.readTextFileSync(pidfile).trim().split(" ");
      Deno.writeTextFileSync(pidfile, `${Deno.pid} ${token}\n`);
      const r = await start();
      assertEquals(r.stdout, "");
      started.push(current());
      assert(started[2] !== Deno.pid);
    });
  } finally {
    // Only the watchers it started: never this runner (step 4 wrote its pid into the file, and
    // a recipe that failed to start one would leave it there), never a pid seen gone (another
    // test's `sleep 300` may hold it now).
    const watchers = started.filter((p) => !ended.has(p) && isWatcher(p));
    for (const pid of watchers) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
  }
});

/** Whether `pid` runs the test's watcher (`exec sleep 300`), read from its command line. */
function isWatcher(pid: number): boolean {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`) === "sleep\x00300\x00";
  } catch {
    return false;
  }
}

/** Running: not gone and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}
