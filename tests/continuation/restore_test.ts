/**
 * The restore flow of docs/continuation.md, run as written, as a person would run it at login:
 * four Claude Code sessions crashed at once, no tmux server, other sessions registering all the
 * while. Every session must come back in tmux and get its one continue; running the restore
 * again must change nothing; an environment failure must leave the key to be tried again.
 * Needs tmux and jq (installed by .ci/run); each test runs its own tmux server (`tmux -L`).
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { cliArgs, roster, rosterJson, run, spawnSleeper, tempDir } from "../helpers.ts";
import { docExample } from "./fixtures.ts";

const installed = (tool: string) =>
  new Deno.Command("sh", { args: ["-c", `command -v ${tool}`], stdout: "null" }).outputSync()
    .success;
const missing = ["tmux", "jq"].filter((tool) => !installed(tool));
if (missing.length > 0) {
  console.log(`skipped: the restore flow needs ${missing.join(" and ")} (apt-get install)`);
}

const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function executable(path: string, text: string) {
  Deno.writeTextFileSync(path, text);
  Deno.chmodSync(path, 0o755);
}

function readOr(path: string, otherwise = ""): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return otherwise;
  }
}

/** A machine after a crash: the docs' scripts on PATH, a private tmux, a store and a home. */
function machine(root: string) {
  const dir = (name: string) => {
    Deno.mkdirSync(`${root}/${name}`, { recursive: true });
    return Deno.realPathSync(`${root}/${name}`);
  };
  const [bin, home, store, log] = ["bin", "home", "store", "log"].map(dir);
  const tmux = new Deno.Command("sh", { args: ["-c", "command -v tmux"], stdout: "piped" })
    .outputSync();
  const realTmux = new TextDecoder().decode(tmux.stdout).trim();
  const socket = `roster-restore-${crypto.randomUUID().slice(0, 8)}`;
  executable(
    `${bin}/roster`,
    `#!/bin/sh\nexec ${[Deno.execPath(), ...cliArgs([])].map(shq).join(" ")} "$@"\n`,
  );
  // tmux on its own socket, so that the test never meets a developer's server. A file
  // `fail-new-window` makes the next new-window fail, as a broken environment would.
  executable(
    `${bin}/tmux`,
    `#!/bin/sh
if [ "$1" = new-window ] && [ -e "$LOG/fail-new-window" ]; then
  rm -f "$LOG/fail-new-window"; echo "tmux: cannot create window" >&2; exit 1
fi
exec ${shq(realTmux)} -L ${socket} "$@"
`,
  );
  // The harness: `claude --resume SID` registers itself as its session-start hook would,
  // starts the continue hook in the background, and keeps every turn it is sent.
  executable(
    `${bin}/claude`,
    `#!/bin/bash
[ "$1" = --resume ] || exit 64
roster register --pid $$ --agent claude --session-id "$2" --quiet
"$(dirname "$0")/continue-hook" "$2" "$PWD" >>"$LOG/hook-$2.log" 2>&1 &
while IFS= read -r turn; do printf '%s\\n' "$turn" >>"$LOG/turn-$2"; done
`,
  );
  const restore = docExample("restore-sessions");
  executable(`${bin}/restore-sessions`, restore);
  executable(`${bin}/continue-hook`, docExample("continue-hook"));
  const fn = /^last_entry_id\(\) \{[\s\S]*?^\}$/m.exec(restore);
  assert(fn, "the restore script defines last_entry_id");
  Deno.writeTextFileSync(`${bin}/last-entry-id.sh`, fn[0] + "\n");
  const env: Record<string, string> = {
    PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    HOME: home,
    ROSTER_HOME: store,
    TERM: "xterm-256color",
    SHELL: "/bin/sh",
    LOG: log,
    NO_COLOR: "1",
  };
  const sh = (cmd: string, args: string[]) => run(cmd, args, env, root);
  return { bin, home, store, log, env, sh, ledger: `${store}/continuations` };
}

type Machine = ReturnType<typeof machine>;

/** A Claude Code session with a transcript, registered and then crashed (killed). */
async function session(m: Machine, sid: string) {
  const cwd = `${m.home}/work/${sid}`;
  Deno.mkdirSync(cwd, { recursive: true });
  const transcripts = `${m.home}/.claude/projects/${cwd.replace(/[/.]/g, "-")}`;
  Deno.mkdirSync(transcripts, { recursive: true });
  Deno.writeTextFileSync(`${transcripts}/${sid}.jsonl`, `{"uuid":"${sid}-m0"}\n`);
  const s = spawnSleeper();
  await rosterJson(m.store, [
    "register",
    "--pid",
    String(s.pid),
    "--agent",
    "claude",
    "--session-id",
    sid,
    "--cwd",
    cwd,
  ], { env: { TMUX_PANE: "%1" } });
  return s;
}

const turns = (m: Machine, sid: string) =>
  readOr(`${m.log}/turn-${sid}`).split("\n").filter((l) => l !== "");

async function waitForTurns(m: Machine, sids: string[], ms = 120_000) {
  for (const give = Date.now() + ms; sids.some((s) => turns(m, s).length === 0);) {
    if (Date.now() > give) {
      const logs = sids.map((s) => `${s}: ${readOr(`${m.log}/hook-${s}.log`, "(no hook log)")}`);
      throw new Error(`not every session got its turn:\n${logs.join("\n")}`);
    }
    await sleep(200);
  }
}

/** The ledger's files and contents, the sessions' rows and tmux's windows: what a rerun must not change. */
async function snapshot(m: Machine) {
  const files: Record<string, string> = {};
  for (const e of Deno.readDirSync(m.ledger)) {
    if (e.isFile && !e.name.startsWith(".")) files[e.name] = readOr(`${m.ledger}/${e.name}`);
  }
  const rows = (await rosterJson<Record<string, unknown>[]>(m.store, ["list", "--all"]))
    .map((r) => `${r.session_id} ${r.session_pid} ${r.liveness} ${r.reason}`).sort();
  const windows = (await m.sh("tmux", ["list-windows", "-a", "-F", "#{window_id}"])).stdout;
  return { files, rows, windows };
}

const claims = (m: Machine) =>
  readOr(`${m.ledger}/audit.ndjson`).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    .filter((l) => l.event === "claim");

Deno.test({
  name: "restore flow: four sessions crashed at once all come back, each continued once",
  ignore: missing.length > 0,
  sanitizeResources: false,
  async fn(t) {
    await using root = await tempDir();
    const m = machine(root.path);
    const sids = ["S1", "S2", "S3", "S4"];
    const crashed = [];
    for (const sid of sids) crashed.push(await session(m, sid));
    const others = [spawnSleeper(), spawnSleeper(), spawnSleeper()];
    try {
      for (const o of others) {
        await rosterJson(m.store, ["register", "--pid", String(o.pid), "--agent", "codex"]);
      }
      // The crash: all four at once.
      await Promise.all(crashed.map((s) => s.kill()));
      const on = await m.sh("roster", ["continuation-mode", "on"]);
      assertEquals(on.code, 0, on.stderr);

      await t.step("at login, with no tmux server, while other sessions register", async () => {
        let storming = true;
        const storm = (async () => {
          let n = 0;
          while (storming || n < 10) {
            const o = others[n++ % others.length];
            const r = await roster(["register", "--pid", String(o.pid), "--home", m.store]);
            assertEquals(r.code, 0, r.stderr);
          }
        })();
        const r = await m.sh("bash", [`${m.bin}/restore-sessions`]);
        assertEquals(r.code, 0, r.stdout + r.stderr);
        await waitForTurns(m, sids);
        storming = false;
        await storm;
      });

      await t.step("each came back once and got exactly one continue", async () => {
        await sleep(2_000);
        for (const sid of sids) {
          const got = turns(m, sid);
          assertEquals(got.length, 1, `${sid}: ${got.join(" | ")}`);
          assertMatch(got[0], /^Roster continuation [0-9a-f]{24}: this session was interrupted/);
        }
        assertEquals(claims(m).length, 4);
        assertEquals(new Set(claims(m).map((c) => c.key)).size, 4);
        const live = await rosterJson<Record<string, unknown>[]>(m.store, ["list"]);
        for (const sid of sids) {
          assert(live.some((r) => r.session_id === sid && r.liveness === "alive"), sid);
        }
      });

      await t.step("running the restore again changes nothing", async () => {
        const before = await snapshot(m);
        const r = await m.sh("bash", [`${m.bin}/restore-sessions`]);
        assertEquals(r.code, 0, r.stdout + r.stderr);
        await sleep(3_000);
        assertEquals(await snapshot(m), before);
        for (const sid of sids) assertEquals(turns(m, sid).length, 1, sid);
      });

      await t.step("an environment failure leaves the key to be tried again", async () => {
        const s5 = await session(m, "S5");
        await s5.kill();
        Deno.writeTextFileSync(`${m.log}/fail-new-window`, "");
        const failed = await m.sh("bash", [`${m.bin}/restore-sessions`]);
        assertMatch(failed.stderr, /S5/);
        assertEquals(turns(m, "S5").length, 0);
        const retry = await m.sh("bash", [`${m.bin}/restore-sessions`]);
        assertEquals(retry.code, 0, retry.stdout + retry.stderr);
        await waitForTurns(m, ["S5"]);
        await sleep(1_000);
        assertEquals(turns(m, "S5").length, 1);
        assertEquals(claims(m).length, 5);
      });
    } finally {
      await m.sh("tmux", ["kill-server"]);
      for (const o of others) await o.kill();
    }
  },
});
