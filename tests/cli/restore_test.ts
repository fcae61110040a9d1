/**
 * `roster restore` end to end with stand-in harnesses (scripts named like the harness that
 * register the way its start hook would, and wait): crashed sessions come back in tmux windows
 * of a private server (started with a bare environment), linked to what they were; a relaunch
 * that dies at once is reported failed, left restorable and tried again, and skipped after N;
 * parked and cleanly ended sessions are never relaunched; two restores at once relaunch each
 * session once; --dry-run, --print and --json change nothing. The real harnesses are in
 * tests/harness/restore_test.ts.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { cliArgs, endTmux, run, spawnSleeper, tempDir, waitUntil } from "../helpers.ts";
import { assertSchema } from "../schema.ts";
import { canUnsharePid } from "../pidns.ts";

const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const realTmux = new TextDecoder().decode(
  new Deno.Command("sh", { args: ["-c", "command -v tmux"], stdout: "piped" }).outputSync().stdout,
).trim();

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

interface Report {
  session_pid: number;
  session_id: string;
  agent: string;
  cwd: string;
  command: string[] | null;
  action: string;
  reason: string;
  result?: string;
  successor_pid?: number | null;
  pane?: string | null;
  failures: number;
  continued?: boolean | null;
  continue_reason?: string | null;
  continuation_id?: string | null;
}

/**
 * A machine after a crash: roster, a stand-in `claude` and a tmux bound to a private socket on
 * PATH (the tmux server is started with a bare environment, as one started at login is), a
 * store and a home.
 */
async function machine(root: string) {
  const dir = (name: string) => {
    Deno.mkdirSync(`${root}/${name}`, { recursive: true });
    return Deno.realPathSync(`${root}/${name}`);
  };
  const [bin, home, store, log] = ["bin", "home", "store", "log"].map(dir);
  const socket = `roster-rs-${crypto.randomUUID().slice(0, 8)}`;
  executable(
    `${bin}/roster`,
    `#!/bin/sh\nexec ${[Deno.execPath(), ...cliArgs([])].map(shq).join(" ")} "$@"\n`,
  );
  executable(`${bin}/tmux`, `#!/bin/sh\nexec ${shq(realTmux)} -L ${socket} -f /dev/null "$@"\n`);
  // `claude --resume SID`: dies at once ("No conversation found") while LOG/die-SID exists,
  // else registers as its start hook would and waits. Every launch is logged. (LOG is written
  // in: the relaunch is given only the environment roster passes.)
  executable(
    `${bin}/claude`,
    `#!/bin/bash
LOG=${shq(log)}
sid=\${SID:-}
[ "$1" = --resume ] && sid=$2
echo "$sid $PWD" >>"$LOG/launches"
if [ -e "$LOG/die-$sid" ]; then echo "No conversation found with session ID: $sid"; exit 1; fi
roster register --pid $$ --agent claude --session-id "$sid" --quiet || exit 3
[ -e "$LOG/die-late-$sid" ] && { sleep 0.5; exit 4; }
# With LOG/activity its hooks say what it does, as the recipes' would: a resumed one goes idle
# once LOG/go-SID exists, then logs each prompt submitted at its terminal to LOG/got-SID (and,
# while LOG/mute-SID exists, its prompt hook says nothing of them).
if [ -e "$LOG/activity" ]; then
  roster activity working --pid $$ --quiet
  if [ "$1" = --resume ]; then
    while [ ! -e "$LOG/go-$sid" ]; do sleep 0.1; done
    roster activity idle --pid $$ --quiet
    while IFS= read -r line; do
      echo "$line" >>"$LOG/got-$sid"
      [ -e "$LOG/mute-$sid" ] && continue
      roster activity working --pid $$ --quiet
      roster activity idle --pid $$ --quiet
    done
  fi
fi
while :; do sleep 1; done
`,
  );
  // `codex resume [--no-daemon] SID [PROMPT]`, as Codex 0.169 takes it: its start hook runs at
  // the first prompt, so it registers only when given PROMPT. Each launch logs its id, how many
  // continues the ledger held claimed as it started, and its prompt; it dies at once while
  // LOG/die-SID exists.
  executable(
    `${bin}/codex`,
    `#!/bin/bash
LOG=${shq(log)}
[ "$1" = resume ] && shift
[ "$1" = --no-daemon ] && shift
sid=$1 prompt=\${2:-}
claims=$(ls "$ROSTER_HOME/continuations" 2>/dev/null | grep -c '[.]claim$')
printf '%s\t%s\t%s\n' "$sid" "$claims" "$prompt" >>"$LOG/codex"
if [ -e "$LOG/die-$sid" ]; then echo "No saved session found with ID $sid"; exit 1; fi
if [ -n "$prompt" ]; then roster register --pid $$ --agent codex --session-id "$sid" --quiet || exit 3; fi
while :; do sleep 1; done
`,
  );
  const env: Record<string, string> = {
    PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    ROSTER_HOME: store,
    LOG: log,
    NO_COLOR: "1",
    LANG: "C.UTF-8",
  };
  // The server a login started: no roster, no claude, no LOG on its PATH or in its environment.
  const bare = await run(
    `${bin}/tmux`,
    ["new-session", "-d", "-s", "login", "-x", "120", "-y", "30"],
    { PATH: "/usr/bin:/bin", HOME: home },
  );
  assertEquals(bare.code, 0, bare.stderr);
  const sh = (cmd: string, args: string[], extra: Record<string, string> = {}) =>
    run(cmd, args, { ...env, ...extra }, root);
  const restore = async (args: string[] = []) => {
    const r = await sh("timeout", ["120", `${bin}/roster`, "restore", "--settle", "1s", ...args]);
    if (args.includes("--json") && r.stdout.trim() !== "") assertSchema(["restore"], r.stdout);
    return r;
  };
  return {
    bin,
    home,
    store,
    log,
    env,
    socket,
    sh,
    restore,
    launches: () => readOr(`${log}/launches`).split("\n").filter((l) => l !== ""),
    /** The stand-in codex's launches: its id, the claims the ledger held then, its prompt. */
    codexLaunches: () =>
      readOr(`${log}/codex`).split("\n").filter((l) => l !== "").map((l) => l.split("\t")),
    async rows(): Promise<Record<string, unknown>[]> {
      const r = await sh(`${bin}/roster`, ["list", "--all", "--json"]);
      assertEquals(r.code, 0, r.stderr);
      return JSON.parse(r.stdout);
    },
    async windows(): Promise<string[]> {
      const r = await sh(`${bin}/tmux`, [
        "list-panes",
        "-a",
        "-F",
        "#{session_name} #{pane_current_path} #{pane_dead}",
      ]);
      return r.stdout.split("\n").filter((l) => l !== "");
    },
    async [Symbol.asyncDispose]() {
      await endTmux(socket);
    },
  };
}

type Machine = Awaited<ReturnType<typeof machine>>;

/** A Claude Code session in `cwd`, registered by its start hook and then killed (SIGKILL). */
async function crashed(m: Machine, sid: string, cwd = `${m.home}/work/${sid}`): Promise<number> {
  Deno.mkdirSync(cwd, { recursive: true });
  const child = new Deno.Command(`${m.bin}/claude`, {
    cwd,
    env: { ...m.env, SID: sid },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 400; i++) {
    const rows = await m.rows();
    if (rows.some((r) => r.session_pid === child.pid && r.liveness === "alive")) break;
    await sleep(100);
  }
  child.kill("SIGKILL");
  await child.status;
  return child.pid;
}

/** A Codex session with the id `sid`, registered (as at its first prompt) and then killed. */
async function crashedCodex(m: Machine, sid: string): Promise<number> {
  const cwd = `${m.home}/work/${sid}`;
  Deno.mkdirSync(cwd, { recursive: true });
  const sleeper = spawnSleeper();
  const reg = await m.sh(`${m.bin}/roster`, [
    "register",
    "--pid",
    String(sleeper.pid),
    "--agent",
    "codex",
    "--session-id",
    sid,
    "--cwd",
    cwd,
  ]);
  assertEquals(reg.code, 0, reg.stderr);
  await sleeper.kill();
  return sleeper.pid;
}

const rowOf = (rows: Record<string, unknown>[], pid: number) =>
  rows.find((r) => r.session_pid === pid);

const opts = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "restore: crashed sessions come back in tmux, linked, once; a rerun relaunches nothing",
  ...opts,
  async fn(t) {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const a = await crashed(m, "S-a");
    const b = await crashed(m, "S-b");
    await t.step("--dry-run says what it would do and changes nothing", async () => {
      const r = await m.restore(["--dry-run", "--json"]);
      assertEquals(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as Report[];
      assertEquals(out.map((o) => [o.session_id, o.action]).sort(), [
        ["S-a", "relaunch"],
        ["S-b", "relaunch"],
      ]);
      const one = out.find((o) => o.session_id === "S-a")!;
      assertEquals(one.command, ["claude", "--resume", "S-a"]);
      assertEquals(one.cwd, `${m.home}/work/S-a`);
      assertEquals(one.session_pid, a);
      assertEquals("result" in one, false);
      assertEquals(m.launches().length, 2, "nothing was launched");
      assertEquals((await m.windows()).length, 1);
    });
    await t.step("--print prints the commands that would relaunch them", async () => {
      const r = await m.restore(["--print", "--session-id", "S-b"]);
      assertEquals(r.code, 0, r.stderr);
      const lines = r.stdout.trim().split("\n");
      assertEquals(lines.length, 1, r.stdout);
      assertMatch(
        lines[0],
        /^cd \S*\/work\/S-b && env PATH=\S+ .*ROSTER_HOME=\S+ claude --resume S-b$/,
      );
      assertEquals(m.launches().length, 2);
    });
    await t.step(
      "restore relaunches each in its cwd, on a server with a bare environment",
      async () => {
        const r = await m.restore(["--json"]);
        assertEquals(r.code, 0, r.stderr);
        const out = JSON.parse(r.stdout) as Report[];
        assertEquals(out.map((o) => [o.session_id, o.result]).sort(), [
          ["S-a", "restored"],
          ["S-b", "restored"],
        ]);
        const rows = await m.rows();
        for (const [pid, sid] of [[a, "S-a"], [b, "S-b"]] as const) {
          const o = out.find((x) => x.session_id === sid)!;
          assert(o.successor_pid && o.successor_pid !== pid);
          const old = rowOf(rows, pid)!;
          assertEquals(old.reason, "resumed");
          assertEquals((old.successor as { pid: number }).pid, o.successor_pid);
          const next = rowOf(rows, o.successor_pid!)!;
          assertEquals([next.liveness, next.session_id, next.cwd], [
            "alive",
            sid,
            `${m.home}/work/${sid}`,
          ]);
        }
        const windows = await m.windows();
        assertEquals(
          windows.filter((w) => w.startsWith("roster-restore ")).map((w) => w.split(" ")[1]).sort(),
          [`${m.home}/work/S-a`, `${m.home}/work/S-b`],
        );
        assertEquals(m.launches().length, 4);
      },
    );
    await t.step("a rerun relaunches nothing", async () => {
      const r = await m.restore(["--json"]);
      assertEquals(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as Report[];
      for (const o of out) {
        assertEquals([o.action, o.result], ["skip", "skipped"]);
        assertMatch(o.reason, /^resumed: continued by pid \d+$/);
      }
      assertEquals(m.launches().length, 4);
    });
    await t.step("a restored session that crashes again is restorable again", async () => {
      const rows = await m.rows();
      const next = rows.find((r) => r.session_id === "S-a" && r.liveness === "alive")!;
      Deno.kill(next.session_pid as number, "SIGKILL");
      await sleep(300);
      const r = await m.restore(["--json", "--session-id", "S-a"]);
      assertEquals(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as Report[];
      const again = out.find((o) => o.session_pid === next.session_pid)!;
      assertEquals(again.result, "restored");
      assertEquals(out.filter((o) => o.result === "restored").length, 1);
    });
  },
});

Deno.test({
  name: "restore: a relaunch that dies at once is failed, stays restorable, and is skipped after N",
  ...opts,
  async fn(t) {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const pid = await crashed(m, "S-x");
    Deno.writeTextFileSync(`${m.log}/die-S-x`, "");
    await t.step(
      "the first relaunch fails with the exit status and the pane's last lines",
      async () => {
        const r = await m.restore(["--json", "--max-failures", "2"]);
        assertEquals(r.code, 1, r.stderr);
        const [o] = JSON.parse(r.stdout) as Report[];
        assertEquals([o.result, o.failures, o.successor_pid], ["failed", 1, null]);
        // The status and the last lines are there when tmux has them: it can call a pane dead
        // and give neither (seen under load); the reason then says only that it exited.
        assertMatch(
          o.reason,
          /^exited( with status 1)?(: No conversation found with session ID: S-x)?$/,
        );
        const row = rowOf(await m.rows(), pid)!;
        assertEquals([row.liveness, row.reason, row.successor], ["dead", "exited", null]);
        assertEquals((await m.windows()).filter((w) => w.startsWith("roster-restore")), []);
      },
    );
    await t.step(
      "the next run tries it again; after N failures it is skipped with a reason",
      async () => {
        const r = await m.restore(["--max-failures", "2"]);
        assertEquals(r.code, 1, r.stdout + r.stderr);
        assertMatch(r.stdout, /failed claude \d+ \(S-x\): exited( with status 1)?.*no tries left/);
        assertEquals(m.launches().filter((l) => l.startsWith("S-x ")).length, 3);
        const skip = await m.restore(["--json", "--max-failures", "2"]);
        assertEquals(skip.code, 0, skip.stderr);
        const [o] = JSON.parse(skip.stdout) as Report[];
        assertEquals([o.action, o.result, o.failures], ["skip", "skipped", 2]);
        assertMatch(o.reason, /^gave up after 2 failed relaunches: exited/);
        assertEquals(m.launches().filter((l) => l.startsWith("S-x ")).length, 3);
      },
    );
    await t.step(
      "a higher --max-failures tries it again, and it comes back once it can",
      async () => {
        Deno.removeSync(`${m.log}/die-S-x`);
        const r = await m.restore(["--json", "--max-failures", "3"]);
        assertEquals(r.code, 0, r.stderr);
        const [o] = JSON.parse(r.stdout) as Report[];
        assertEquals([o.result, o.failures], ["restored", 0]);
      },
    );
  },
});

Deno.test({
  name: "restore: one that exits right after registering is failed, not linked",
  ...opts,
  async fn() {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const pid = await crashed(m, "S-late");
    Deno.writeTextFileSync(`${m.log}/die-late-S-late`, "");
    const r = await m.restore(["--json", "--settle", "2s"]);
    assertEquals(r.code, 1, r.stderr);
    const [o] = JSON.parse(r.stdout) as Report[];
    assertEquals(o.result, "failed");
    assertMatch(o.reason, /exited( with status 4)? within 2 s of registering/);
    assertEquals(rowOf(await m.rows(), pid)!.successor, null);
  },
});

Deno.test({
  name: "restore: parked, cleanly ended, unknown-harness and running sessions are never relaunched",
  ...opts,
  async fn() {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const parked = await crashed(m, "S-parked");
    const park = await m.sh(`${m.bin}/roster`, ["park", "--pid", String(parked)]);
    assertEquals(park.code, 0, park.stderr);
    const ended = await m.sh(`${m.bin}/roster`, [
      "exec",
      "--agent",
      "claude",
      "--session-id",
      "S-ended",
      "--",
      "true",
    ]);
    assertEquals(ended.code, 0, ended.stderr);
    await using other = spawnSleeper();
    const reg = await m.sh(`${m.bin}/roster`, [
      "register",
      "--pid",
      String(other.pid),
      "--agent",
      "aider",
      "--session-id",
      "S-aider",
    ]);
    assertEquals(reg.code, 0, reg.stderr);
    await other.kill();
    // A session someone already resumed by hand: a live record with its id.
    const gone = await crashed(m, "S-again");
    const again = new Deno.Command(`${m.bin}/claude`, {
      args: ["--resume", "S-again"],
      env: m.env,
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      for (let i = 0; i < 300; i++) {
        if ((await m.rows()).some((r) => r.session_pid === again.pid)) break;
        await sleep(100);
      }
      const r = await m.restore(["--json"]);
      assertEquals(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as Report[];
      const by = (sid: string) => out.find((o) => o.session_id === sid)!;
      assertEquals(out.every((o) => o.action === "skip" && o.result === "skipped"), true, r.stdout);
      assertMatch(by("S-parked").reason, /^parked/);
      assertMatch(by("S-ended").reason, /^ended on its own \(exit:0\)$/);
      assertMatch(by("S-aider").reason, /^no resume command known for agent aider$/);
      assertEquals(by("S-again").session_pid, gone);
      assertMatch(by("S-again").reason, new RegExp(`^running again as pid ${again.pid}$`));
      const count = (sid: string) => m.launches().filter((l) => l.startsWith(`${sid} `)).length;
      assertEquals([count("S-parked"), count("S-again")], [1, 2], "the crash (and the hand) only");
    } finally {
      again.kill("SIGKILL");
      await again.status;
    }
  },
});

Deno.test({
  name: "restore: a newer run of the session in another pid namespace holds it back",
  ignore: !canUnsharePid(), // why: a private pid namespace needs Linux and root
  ...opts,
  async fn() {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const gone = await crashed(m, "S-ns");
    // The session resumed by hand inside a container: from here its record is unknown.
    const inside = new Deno.Command("unshare", {
      args: [
        "--pid",
        "--fork",
        "--mount-proc",
        "--kill-child",
        "bash",
        "-c",
        `sleep 600 & roster register --pid $! --agent claude --session-id S-ns -q; wait`,
      ],
      env: m.env,
      clearEnv: true,
      cwd: `${m.home}/work/S-ns`,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await waitUntil(
        async () => (await m.rows()).some((r) => r.reason === "other-pid-ns"),
        "the run in the namespace registered",
        { everyMs: 100 },
      );
      const r = await m.restore(["--dry-run", "--json"]);
      assertEquals(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as Report[];
      const mine = out.find((o) => o.session_pid === gone)!;
      assertEquals(mine.action, "skip", r.stdout);
      assertMatch(mine.reason, /^it may be running as pid \d+: unknown \(other-pid-ns\)$/);
    } finally {
      inside.kill("SIGKILL");
      await inside.status;
    }
  },
});

Deno.test({
  name: "restore: two restores at once relaunch each session once",
  ...opts,
  async fn() {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const sids = ["R1", "R2", "R3"];
    for (const sid of sids) await crashed(m, sid);
    const before = m.launches().length;
    const [x, y] = await Promise.all([m.restore(["--json"]), m.restore(["--json"])]);
    assertEquals([x.code, y.code], [0, 0], x.stderr + y.stderr);
    const results = [...JSON.parse(x.stdout), ...JSON.parse(y.stdout)] as Report[];
    for (const sid of sids) {
      const mine = results.filter((o) => o.session_id === sid);
      assertEquals(mine.map((o) => o.result).sort(), ["restored", "skipped"], sid);
    }
    const launched = m.launches().slice(before).map((l) => l.split(" ")[0]).sort();
    assertEquals(launched, sids);
  },
});

Deno.test({
  name: "restore: without tmux, a clear error naming --print, and nothing planned or tried",
  ...opts,
  async fn() {
    await using root = await tempDir();
    await using m = await machine(root.path);
    await crashed(m, "S-notmux");
    Deno.removeSync(`${m.bin}/tmux`);
    const r = await m.sh("/usr/bin/timeout", ["60", `${m.bin}/roster`, "restore"], {
      PATH: `${m.bin}:/nonexistent`,
    });
    assertEquals(r.code, 1, r.stdout + r.stderr);
    assertMatch(r.stderr, /tmux is not installed.*roster restore --print/);
    assertEquals(m.launches().length, 1, "only the crashed session's own launch");
    const made = (path: string) => {
      try {
        return Deno.lstatSync(path).isDirectory;
      } catch {
        return false;
      }
    };
    assertEquals(made(`${m.store}/continuations/restore`), false, "nothing made");
    const list = await m.sh(`${m.bin}/roster`, ["continuation-list", "--json"]);
    assertEquals(JSON.parse(list.stdout), []);
  },
});

Deno.test({
  name: "restore: a session's directory is taken as it is, and one gone is never replaced",
  ...opts,
  async fn(t) {
    await using root = await tempDir();
    await using m = await machine(root.path);
    await t.step(
      "tmux reads no format in it: #(...) runs nothing, #S is two characters",
      async () => {
        const cwd = `${m.home}/work/lang-C#Sharp #(touch roster-ran-this)`;
        const pid = await crashed(m, "S-hash", cwd);
        const r = await m.restore(["--json"]);
        assertEquals(r.code, 0, r.stderr);
        const [o] = JSON.parse(r.stdout) as Report[];
        assertEquals([o.session_pid, o.result, o.cwd], [pid, "restored", cwd]);
        assertEquals(m.launches().at(-1), `S-hash ${cwd}`);
        const next = rowOf(await m.rows(), o.successor_pid!)!;
        assertEquals(next.cwd, cwd);
        for (const dir of [root.path, m.home, `${m.home}/work`, Deno.cwd()]) {
          assertEquals(readOr(`${dir}/roster-ran-this`, "none"), "none", dir);
        }
      },
    );
    await t.step("a directory gone: skipped with why, and back when it is", async () => {
      const cwd = `${m.home}/work/S-gone`;
      const pid = await crashed(m, "S-gone", cwd);
      Deno.removeSync(cwd);
      const launched = m.launches().length;
      const r = await m.restore(["--json", "--session-id", "S-gone"]);
      assertEquals(r.code, 0, r.stderr);
      const [o] = JSON.parse(r.stdout) as Report[];
      assertEquals([o.session_pid, o.action, o.result], [pid, "skip", "skipped"]);
      assertEquals(o.reason, `its working directory is gone: ${cwd}`);
      assertEquals(m.launches().length, launched, "nothing launched elsewhere");
      Deno.mkdirSync(cwd);
      const again = await m.restore(["--json", "--session-id", "S-gone"]);
      const [p] = JSON.parse(again.stdout) as Report[];
      assertEquals([again.code, p.result], [0, "restored"], again.stderr);
      assertEquals(m.launches().at(-1), `S-gone ${cwd}`);
    });
    await t.step("--print into a pipe: each path exactly as the shell will read it", async () => {
      const cwd = `${m.home}/work/tab\there \\xz'q`;
      await crashed(m, "S-tab", cwd);
      const r = await m.restore(["--print", "--session-id", "S-tab"]);
      assertEquals(r.code, 0, r.stderr);
      const cd = r.stdout.slice(0, r.stdout.indexOf(" && env "));
      const pwd = await m.sh("sh", ["-c", `${cd} && pwd`]);
      assertEquals([pwd.code, pwd.stdout], [0, `${cwd}\n`], r.stdout + pwd.stderr);
    });
    await t.step("a record's id makes no line of its own in what restore says", async () => {
      const pid = await crashed(m, "S-line");
      const [file] = [...Deno.readDirSync(`${m.store}/places`)].flatMap((d) =>
        [...Deno.readDirSync(`${m.store}/places/${d.name}`)]
          .filter((e) => e.name === `${pid}.json`)
          .map((e) => `${m.store}/places/${d.name}/${e.name}`)
      );
      const record = JSON.parse(Deno.readTextFileSync(file));
      record.session_id = "zz)\nwould relaunch claude 4242 (S-legit): claude --resume S-legit";
      Deno.writeTextFileSync(file, JSON.stringify(record));
      const r = await m.restore(["--dry-run"]);
      assertEquals(r.code, 0, r.stderr);
      const lines = r.stdout.split("\n").filter((l) => l.includes(`claude ${pid} `));
      assertEquals(lines.length, 1, r.stdout);
      assertMatch(lines[0], /^skip claude \d+ \(zz\)\\x0awould relaunch .*not one a harness/);
      assertEquals(
        r.stdout.split("\n").filter((l) => l.startsWith("would relaunch claude 4242")),
        [],
      );
    });
  },
});

/**
 * A person at the server: a tmux client attached to the login session through a pseudo-terminal
 * (`script`), whose keys go to the active pane of its current window, as a person's would.
 */
async function attach(m: Machine) {
  const tmux = (...args: string[]) => m.sh(`${m.bin}/tmux`, args);
  const child = new Deno.Command("script", {
    args: ["-qfc", `${shq(realTmux)} -L ${m.socket} attach -t login`, "/dev/null"],
    env: { ...m.env, TERM: "xterm" },
    clearEnv: true,
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const keys = child.stdin.getWriter();
  const name = async () =>
    (await tmux("list-clients", "-F", "#{client_name}")).stdout.trim().split("\n")[0] ?? "";
  await waitUntil(async () => (await name()) !== "", "the client attached", { everyMs: 100 });
  const client = await name();
  return {
    /** Moves the client to `pane`, as a person choosing that window would. */
    async show(pane: string) {
      const r = await tmux("switch-client", "-c", client, "-t", pane);
      assertEquals(r.code, 0, r.stderr);
    },
    async pane(): Promise<string> {
      return (await tmux("list-clients", "-F", "#{pane_id}")).stdout.trim();
    },
    async type(text: string) {
      // Newer than any key before it: tmux counts a client's last key in whole seconds.
      await sleep(1100);
      await keys.write(new TextEncoder().encode(text));
    },
    async [Symbol.asyncDispose]() {
      await keys.close().catch(() => {});
      await tmux("detach-client", "-a");
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}

/** The pane `roster restore` relaunched `sid` in, once its successor registered. */
async function resumedPane(m: Machine, sid: string, crashedPid: number): Promise<string> {
  await waitUntil(
    async () =>
      (await m.rows()).some((r) =>
        r.session_id === sid && r.session_pid !== crashedPid && r.liveness === "alive"
      ),
    `the successor of ${sid} registered`,
    { everyMs: 200 },
  );
  const r = await m.sh(`${m.bin}/tmux`, [
    "list-panes",
    "-a",
    "-F",
    "#{pane_id} #{pane_current_path}",
  ]);
  const line = r.stdout.split("\n").find((l) => l.endsWith(` ${m.home}/work/${sid}`));
  assert(line, r.stdout);
  return line.split(" ")[0];
}

Deno.test({
  name:
    "restore: text typed into the resumed pane holds its continue back; a key elsewhere does not",
  ...opts,
  async fn(t) {
    await using root = await tempDir();
    await using m = await machine(root.path);
    Deno.writeTextFileSync(`${m.log}/activity`, "");
    const on = await m.sh(`${m.bin}/roster`, ["continuation-mode", "on"]);
    assertEquals(on.code, 0, on.stderr);
    // tmux counts attaching as the client's last key, so a client on the resumed pane that
    // attached within the minute is a person at it either way: the step that can tell keys from
    // no keys is the one with the key in another pane.
    await using person = await attach(m);
    const login = await person.pane();
    /** Restores `sid` while `meanwhile` runs once it is up, then lets it go idle. */
    const restoreWith = async (sid: string, meanwhile: (pane: string) => Promise<void>) => {
      const pid = await crashed(m, sid);
      const pending = m.restore(["--json", "--session-id", sid, "--continue-timeout", "60s"]);
      await meanwhile(await resumedPane(m, sid, pid));
      Deno.writeTextFileSync(`${m.log}/go-${sid}`, "");
      const r = await pending;
      assertEquals(r.code, 0, r.stderr);
      const [o] = JSON.parse(
        r.stdout,
      ) as (Report & { continued: boolean; continue_reason: string })[];
      assertEquals(o.result, "restored", r.stdout);
      return { o, got: readOr(`${m.log}/got-${sid}`) };
    };

    await t.step("a key into another pane of the server: the continue is sent", async () => {
      const { o, got } = await restoreWith("S-other", async () => {
        assertEquals(await person.pane(), login);
        await person.type("x");
      });
      assertEquals([o.continued, o.continue_reason], [true, null], o.continue_reason);
      assertMatch(got, /^Roster continuation \S+: this session was interrupted /);
    });
    await t.step(
      "text typed into the resumed pane, not sent: held back, never typed over",
      async () => {
        let resumed = "";
        const { o, got } = await restoreWith("S-typed", async (pane) => {
          resumed = pane;
          await person.show(pane);
          await person.type("wait, I am typing");
        });
        assertEquals(o.continued, false);
        assertMatch(o.continue_reason, /user-active/);
        assertEquals(got, "", "nothing was submitted");
        // What the person typed is theirs to send: Enter submits it alone.
        await person.type("\r");
        await waitUntil(() => readOr(`${m.log}/got-S-typed`) !== "", "the person's line", {
          everyMs: 100,
        });
        assertEquals(readOr(`${m.log}/got-S-typed`), "wait, I am typing\n");
        assertEquals(await person.pane(), resumed);
      },
    );
    await t.step(
      "a person at the pane once the continue is typed: no Enter pressed over their text",
      async () => {
        // Its prompt hook says nothing, so restore would press Enter again (a paste can swallow
        // the first): not once a person is at the pane.
        const sid = "S-late";
        const got = () => readOr(`${m.log}/got-${sid}`);
        Deno.writeTextFileSync(`${m.log}/mute-${sid}`, "");
        const pid = await crashed(m, sid);
        const pending = m.restore(["--json", "--session-id", sid, "--continue-timeout", "60s"]);
        const pane = await resumedPane(m, sid, pid);
        Deno.writeTextFileSync(`${m.log}/go-${sid}`, "");
        await waitUntil(() => got().startsWith("Roster continuation"), "the continue", {
          everyMs: 100,
        });
        await person.show(pane);
        await person.type("half typed, not sent");
        const r = await pending;
        assertEquals(r.code, 0, r.stderr);
        const [o] = JSON.parse(r.stdout) as Report[];
        assertEquals(o.continued, true, r.stdout);
        assertEquals(got().split("\n").filter((l) => l !== "").length, 1, got());
        await person.type("\r");
        await waitUntil(() => got().includes("half typed, not sent\n"), "the person's line", {
          everyMs: 100,
        });
      },
    );
  },
});

Deno.test({
  name: "restore: Codex's continue is claimed before its relaunch and goes as its first prompt",
  ...opts,
  async fn(t) {
    await using root = await tempDir();
    await using m = await machine(root.path);
    const on = await m.sh(`${m.bin}/roster`, ["continuation-mode", "on"]);
    assertEquals(on.code, 0, on.stderr);
    const pid = await crashedCodex(m, "C-a");
    await t.step("--dry-run shows the resume command and says the continue is added", async () => {
      const r = await m.restore(["--dry-run"]);
      assertEquals(r.code, 0, r.stderr);
      assertMatch(
        r.stdout,
        /would relaunch codex \d+ \(C-a\): codex resume --no-daemon C-a \(dead \(exited\)\), with its continue as the last argument when a real run claims one/,
      );
      assertEquals(m.codexLaunches(), []);
    });
    await t.step(
      "the relaunch gets the claimed continue as its prompt, and registers",
      async () => {
        const r = await m.restore(["--json"]);
        assertEquals(r.code, 0, r.stdout + r.stderr);
        const [o] = JSON.parse(r.stdout) as Report[];
        assertEquals([o.result, o.continued, o.continue_reason], ["restored", true, null]);
        const id = o.continuation_id!;
        assertMatch(id, /^[0-9a-f]+$/);
        const [launch] = m.codexLaunches();
        // The claim was in the ledger before the command started.
        assertEquals(launch.slice(0, 2), ["C-a", "1"]);
        assertMatch(
          launch[2],
          new RegExp(`^Roster continuation ${id}: .*Continuation id: ${id}[.]$`),
        );
        // The command reported is the one run, prompt and all.
        assertEquals(o.command, ["codex", "resume", "--no-daemon", "C-a", launch[2]]);
        const old = rowOf(await m.rows(), pid)!;
        assertEquals(old.reason, "resumed");
        assertEquals((old.successor as { pid: number }).pid, o.successor_pid);
      },
    );
    await t.step("a rerun sends nothing again", async () => {
      const r = await m.restore(["--json"]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals((JSON.parse(r.stdout) as Report[])[0].result, "skipped");
      assertEquals(m.codexLaunches().length, 1);
    });
    const dies = await crashedCodex(m, "C-b");
    Deno.writeTextFileSync(`${m.log}/die-C-b`, "");
    await t.step("a relaunch that fails after its claim says the continue is spent", async () => {
      const r = await m.restore(["--json", "--session-id", "C-b"]);
      assertEquals(r.code, 1, r.stdout + r.stderr);
      const [o] = JSON.parse(r.stdout) as Report[];
      assertEquals([o.session_pid, o.result, o.failures], [dies, "failed", 1]);
      assertMatch(
        o.reason,
        /^exited.*; its continue \(continuation [0-9a-f]+\) went with this relaunch as its first prompt and is spent: it may or may not have reached the model, and it is never sent again \(at most once\)$/,
      );
      const launch = m.codexLaunches().at(-1)!;
      assertEquals(launch.slice(0, 2), ["C-b", "2"]);
      assertMatch(launch[2], /^Roster continuation /);
      assertEquals(o.command, ["codex", "resume", "--no-daemon", "C-b", launch[2]]);
    });
    await t.step("the retry relaunches it without a continue: at most once", async () => {
      Deno.removeSync(`${m.log}/die-C-b`);
      const r = await m.restore(["--json", "--session-id", "C-b"]);
      assertEquals(r.code, 0, r.stdout + r.stderr);
      const [o] = JSON.parse(r.stdout) as Report[];
      assertEquals([o.result, o.continued, o.continuation_id], ["restored", false, null]);
      assertMatch(o.continue_reason!, /already claimed/);
      assertEquals(o.command, ["codex", "resume", "--no-daemon", "C-b"]);
      assertEquals(m.codexLaunches().at(-1), ["C-b", "2", ""]);
      assertEquals(m.codexLaunches().length, 3);
    });
  },
});
