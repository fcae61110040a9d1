/**
 * An adversary's corpus, run through the CLI as a hook would run it: terminal escapes in stored
 * strings and paths, a reader that goes away, bytes that are not UTF-8 in variables and the cwd,
 * links and loose directories at every level of the store and the ledger, FIFOs swapped in under
 * a racing writer, an empty hostname, a relative HOME and an over-long cwd. (Other users'
 * directories: multiuser_test.ts.)
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  cliArgs,
  type CliResult,
  HANG_MS,
  hostDir,
  NO_PID,
  roster,
  rosterJson,
  run,
  spawnSleeper,
  tempDir,
  waitUntil,
  writeJson,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { hasStackTrace } from "./store_check.ts";
import { FACTS, PANE } from "../continuation/fixtures.ts";

/** Every character a terminal may act on, except the newline that ends a line. */
const RAW =
  // deno-lint-ignore no-control-regex
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/u;

/** What a hostile repository name or record field carries: OSC title and clipboard, C1, bidi. */
const PAYLOAD = "\x1b]0;pwned\x07" + "\u009d52;c;cHduZWQ=\u009c" + "\u0090q\u009c" +
  "\u009e\u009f\u009b31m" + "\u202a\u202b\u202c\u202d\u202e" + "\u2066\u2067\u2068\u2069" +
  "\u2028\u2029\u200e\u200f\u061c" + "\x7f" + "\x08\r";

function assertNoRaw(text: string, what: string) {
  const m = RAW.exec(text);
  assert(
    m === null,
    `${what} carries U+${(m?.[0].codePointAt(0) ?? 0).toString(16).padStart(4, "0")}: ${
      JSON.stringify(text.slice(0, 300))
    }`,
  );
}

/** A bash function running roster as a hook would (exported, so that nested shells have it). */
const ROSTER_FN = `roster() { ${
  [Deno.execPath(), ...cliArgs([])].map((a) => `'${a}'`).join(" ")
} "$@"; }; export -f roster`;

/**
 * Runs `script` in bash with a `roster` function that runs the CLI: for what Deno.Command
 * cannot pass (bytes that are not UTF-8, a deleted or over-long cwd, a closed pipe).
 */
async function bash(script: string, env: Record<string, string> = {}): Promise<CliResult> {
  const base: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  for (const k of ["DENO_DIR", "HOME", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) base[k] = v;
  }
  // Its own scratch directory as cwd: whatever a case leaves behind goes with it.
  await using scratch = await tempDir("roster-bash-");
  return await run("bash", ["-c", `${ROSTER_FN}\n${script}`], {
    ...base,
    NO_COLOR: "1",
    ...env,
  }, scratch.path);
}

const exists = (p: string) => {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
const entries = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

/** One line on stderr, `roster: ...`, no stack trace. */
function assertOneLine(r: CliResult, pattern: RegExp) {
  assert(!hasStackTrace(r.stderr), r.stderr);
  assertEquals(r.stderr.split("\n").length, 2, r.stderr);
  assertMatch(r.stderr, pattern);
}

Deno.test("terminal escapes: nothing a terminal acts on reaches stdout or stderr", async (t) => {
  // Deno drops C1 characters from a script's arguments, so the payload comes in the way an
  // attacker's would: a record's fields, a directory name (the cwd), a variable (ROSTER_HOME).
  await using dir = await tempDir();
  await using s = spawnSleeper();
  const home = `${dir.path}/home`;
  const cwd = `${dir.path}/repo${PAYLOAD}`;
  Deno.mkdirSync(cwd);
  await t.step("register prints the agent escaped", async () => {
    const r = await roster(
      ["register", "--pid", String(s.pid), "--agent", PAYLOAD, "--home", home],
      {
        cwd,
      },
    );
    assertEquals(r.code, 0, r.stderr);
    assertNoRaw(r.stdout, "register's line");
  });
  await t.step(
    "list: the table and JSON carry the payload escaped, JSON decodes back",
    async () => {
      const path = `${hostDir(home)}/${s.pid}.json`;
      const record = JSON.parse(Deno.readTextFileSync(path));
      Deno.writeTextFileSync(path, JSON.stringify({ ...record, agent: PAYLOAD, runtime: PAYLOAD }));
      const table = await roster(["list", "--home", home]);
      assertEquals(table.code, 0);
      assertNoRaw(table.stdout, "the table");
      assert(table.stdout.includes("\\x1b]0;pwned"), table.stdout);
      const json = await roster(["list", "--home", home, "--json"]);
      assertNoRaw(json.stdout, "list --json");
      const rows = JSON.parse(json.stdout) as Row[];
      assertEquals([rows[0].agent, rows[0].runtime, rows[0].cwd], [PAYLOAD, PAYLOAD, cwd]);
    },
  );
  await t.step("prune's per-row lines print store paths escaped", async () => {
    const phome = `${dir.path}/store${PAYLOAD}`;
    const env = { ROSTER_HOME: phome };
    assertEquals((await roster(["register", "--pid", String(s.pid)], { env })).code, 0);
    // A record of a pid no process holds (dead), so that prune prints a per-row line.
    const own = Deno.readTextFileSync(`${hostDir(phome)}/${s.pid}.json`);
    const dead = own.replace(/"session_pid": \d+/, `"session_pid": ${NO_PID}`);
    Deno.writeTextFileSync(`${hostDir(phome)}/${NO_PID}.json`, dead, { mode: 0o600 });
    const p = await roster(["prune"], { env });
    assertEquals(p.code, 0, p.stderr);
    assert(p.stdout.includes(`${NO_PID}`), p.stdout);
    assertNoRaw(p.stdout, "prune's lines");
  });
  await t.step("error messages print paths escaped (stderr)", async () => {
    const file = `${dir.path}/file${PAYLOAD}`;
    Deno.writeTextFileSync(file, "");
    const r = await roster(["list"], { env: { ROSTER_HOME: file } });
    assertEquals(r.code, 2);
    assertNoRaw(r.stderr, "the ROSTER_HOME error");
    const chome = `${dir.path}/c${PAYLOAD}`;
    Deno.mkdirSync(chome, { mode: 0o700 });
    Deno.writeTextFileSync(`${chome}/continuations`, "");
    const c = await roster(["continuation-plan", "--key", "k", "--session", String(s.pid)], {
      env: { ROSTER_HOME: chome },
    });
    assert(c.code !== 0, c.stdout);
    assert(c.stderr.includes("c\\x1b]0;pwned"), c.stderr);
    assertNoRaw(c.stderr, "continuation-plan's error");
  });
});

Deno.test("a reader that goes away keeps the exit code that carries the answer", async (t) => {
  await using home = await tempDir();
  await using s = spawnSleeper();
  // `| true` exits at once, long before roster writes its answer: the write meets EPIPE.
  const piped = async (args: string) =>
    Number(
      (await bash(`roster ${args} --home '${home.path}' | true; echo "\${PIPESTATUS[0]}"`))
        .stdout.trim(),
    );
  await t.step("check of a dead pid: 3", async () => {
    assertEquals(await piped(`check ${NO_PID}`), 3);
    assertEquals(await piped(`check ${s.pid}`), 0);
  });
  await t.step("token --verify with a token that differs: 3", async () => {
    assertEquals(await piped(`token --verify ${s.pid} 1`), 3);
  });
  await t.step("continuation-check: the verdict's code (a dry run never 0)", async () => {
    const plain = await roster(["continuation-check", "--key", "k", "--home", home.path]);
    assert(plain.code >= 10, plain.stdout);
    assertEquals(await piped("continuation-check --key k"), plain.code);
    assertEquals(await piped("continuation-check --key k --json"), plain.code);
  });
  await t.step("list | head: still 0", async () => {
    assertEquals(await piped("list --all"), 0);
  });
});

Deno.test("bytes that are not UTF-8 in variables and the cwd are never an unexpected failure", async (t) => {
  await using dir = await tempDir();
  await using s = spawnSleeper();
  const home = `${dir.path}/home`;
  const ff = `$(printf 'x\\377')`;
  // Each variable with the hook commands that read it (a --pid makes the pid variables moot).
  const reg = `register --pid ${s.pid} --home '${home}'`;
  const cases: [string, string][] = [
    ...["TMUX_PANE", "ROSTER_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "ROSTER_AGENT"].map((
      v,
    ): [string, string] => [v, reg]),
    ["ROSTER_RUNTIME", reg],
    ["ROSTER_TEST_PAUSE_AT", reg],
    ["ROSTER_SESSION_PID", `register --home '${home}'`],
    ["CLAUDE_PID", `register --home '${home}'`],
    ["ROSTER_SESSION_PID", `unregister --home '${home}'`],
    ["CLAUDE_PID", `unregister --home '${home}'`],
    ["CLAUDE_PID", `unregister --pid ${NO_PID} --home '${home}'`],
    ["CLAUDE_PID", `whoami --home '${home}'`],
    ["ROSTER_SESSION_PID", `check ${s.pid} --home '${home}'`],
    ["CLAUDE_CONFIG_DIR", `list --discover --home '${home}'`],
  ];
  await t.step("every variable roster reads, with the hook commands that read it", async () => {
    for (let i = 0; i < cases.length; i += 4) {
      await Promise.all(
        cases.slice(i, i + 4).map(async ([v, c]) => {
          const r = await bash(`export ${v}=${ff}; roster ${c}`);
          const what = `${v} with ${c}: exit ${r.code}: ${r.stderr}`;
          assert(!/Unexpected failure/.test(r.stderr), what);
          assert(!hasStackTrace(r.stderr), what);
          // 3: whoami found no session (not found, not a failure).
          const found = c.startsWith("whoami") ? [0, 1, 2, 3] : [0, 1, 2];
          assert(found.includes(r.code), what);
          if (c.startsWith("unregister")) assertEquals(r.code, 0, what);
          if (c.startsWith("register") || c.startsWith("list")) {
            assertEquals(r.code, 2, what);
            assertMatch(r.stderr, new RegExp(`^roster: Invalid ${v}: not valid UTF-8`), what);
          }
        }),
      );
    }
  });
  await t.step("HOME and ROSTER_HOME: a usage error naming the variable", async () => {
    for (const v of ["HOME", "ROSTER_HOME", "XDG_STATE_HOME"]) {
      const r = await bash(`unset ROSTER_HOME; export ${v}=${ff}; roster list`);
      assertEquals(r.code, 2, `${v}: ${r.stderr}`);
      assertOneLine(r, new RegExp(`^roster: Invalid ${v}: not valid UTF-8`));
    }
  });
  await t.step(
    "unregister --pid at session end removes the record despite the bad value",
    async () => {
      const gone = spawnSleeper();
      await rosterJson(home, ["register", "--pid", String(gone.pid)]);
      await gone.kill();
      const r = await bash(
        `export CLAUDE_PID=${ff} ROSTER_SESSION_PID=${ff}; roster unregister --pid ${gone.pid} --home '${home}'`,
      );
      assertEquals(r.code, 0, r.stderr);
      assert(!exists(`${hostDir(home)}/${gone.pid}.json`), r.stdout);
    },
  );
  await t.step('a cwd that is not UTF-8: registered, its cwd unknown ("")', async () => {
    const r = await bash(
      `mkdir -p '${dir.path}'/${ff} && cd '${dir.path}'/${ff} && roster register --pid ${s.pid} --home '${home}' --json`,
    );
    assertEquals(r.code, 0, r.stderr);
    assertEquals((JSON.parse(r.stdout) as Row).cwd, "");
    const listed = await rosterJson<Row[]>(home, ["list"]);
    assertEquals(listed.find((x) => x.session_pid === s.pid)?.liveness, "alive");
  });
  await t.step("a cwd deeper than PATH_MAX is not blamed on --cwd", async () => {
    const name = "d".repeat(200);
    const r = await bash(
      `cd '${dir.path}' && for i in $(seq 25); do mkdir -p ${name} && cd ${name} || exit 9; done; ` +
        `roster register --pid ${s.pid} --home '${home}' --json`,
    );
    assert(!/--cwd/.test(r.stderr), r.stderr);
    assertEquals(r.code, 0, r.stderr);
    assertEquals((JSON.parse(r.stdout) as Row).cwd, "");
  });
});

Deno.test("a relative HOME never puts the store under the current directory", async () => {
  await using dir = await tempDir();
  await using s = spawnSleeper();
  const r = await bash(
    `cd '${dir.path}' && unset ROSTER_HOME XDG_STATE_HOME; HOME=rel roster register --pid ${s.pid}`,
    // Deno keeps its own cache under HOME unless told otherwise.
    { DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/root"}/.cache/deno` },
  );
  assertEquals(r.code, 2, r.stderr);
  assertOneLine(r, /^roster: Invalid HOME: not an absolute path: rel/);
  assertEquals(entries(dir.path), []);
});

Deno.test("an empty hostname: the record reads back valid and alive", async () => {
  const perl = new Deno.Command("sh", { args: ["-c", "command -v perl && command -v unshare"] })
    .outputSync();
  if (!perl.success || Deno.uid() !== 0 || Deno.build.arch !== "x86_64") {
    console.log("skipped: needs root, perl and unshare on x86_64 Linux (a private UTS namespace)");
    return;
  }
  await using home = await tempDir();
  await using s = spawnSleeper();
  // sethostname(2) with length 0 (syscall 170 on x86_64), in a private UTS namespace.
  const r = await bash(
    `exec unshare -u bash -c 'perl -e \"my \\$h = q(); syscall(170, \\$h, 0) == 0 or die\" && ` +
      `[ -z "$(cat /proc/sys/kernel/hostname)" ] && roster register --pid ${s.pid} --home "$0" && ` +
      `roster list --json --all --home "$0"' '${home.path}'`,
  );
  assertEquals(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout.slice(r.stdout.indexOf("["))) as Row[];
  assertEquals(rows.map((x) => [x.session_pid, x.liveness, x.malformed]), [[
    s.pid,
    "alive",
    false,
  ]]);
});

Deno.test("links and loose directories at every level: nothing is written through them", async (t) => {
  await using s = spawnSleeper();
  const register = (home: string) => roster(["register", "--pid", String(s.pid), "--home", home]);
  for (const level of ["places", "host"]) {
    await t.step(
      `a symlinked ${level} directory: refused every time, the target untouched`,
      async () => {
        await using dir = await tempDir();
        const home = `${dir.path}/home`;
        const target = `${dir.path}/target`;
        Deno.mkdirSync(target, { mode: 0o700 });
        if (level === "places") {
          Deno.mkdirSync(home, { mode: 0o700 });
          Deno.symlinkSync(target, `${home}/places`);
        } else {
          Deno.mkdirSync(`${home}/places`, { recursive: true, mode: 0o700 });
          Deno.symlinkSync(target, hostDir(home));
        }
        for (let i = 0; i < 3; i++) {
          const r = await register(home);
          assertEquals(r.code, 1, `call ${i + 1}: ${r.stdout}`);
          assertOneLine(r, /^roster: Store directory is a symbolic link: /);
        }
        assertEquals(entries(target), []);
        const l = await roster(["list", "--home", home]);
        assertEquals(l.code, 1, l.stdout);
      },
    );
  }
  await t.step(
    "a symlinked sessions directory (the older layouts'): never written through, list refused",
    async () => {
      await using dir = await tempDir();
      const home = `${dir.path}/home`;
      const target = `${dir.path}/target`;
      Deno.mkdirSync(target, { mode: 0o700 });
      Deno.mkdirSync(home, { mode: 0o700 });
      Deno.symlinkSync(target, `${home}/sessions`);
      for (let i = 0; i < 3; i++) await register(home);
      assertEquals(entries(target), []);
      const l = await roster(["list", "--home", home]);
      assertEquals(l.code, 1, l.stdout);
      assertOneLine(l, /^roster: Store directory is a symbolic link: /);
    },
  );
  await t.step(
    "a record that is a link to a file elsewhere: unregister leaves the target",
    async () => {
      await using dir = await tempDir();
      const home = `${dir.path}/home`;
      await rosterJson(home, ["register", "--pid", String(s.pid)]);
      const victim = `${dir.path}/victim.json`;
      Deno.writeTextFileSync(victim, "keep");
      const gone = NO_PID + 7;
      Deno.symlinkSync(victim, `${hostDir(home)}/${gone}.json`);
      await roster(["unregister", "--pid", String(gone), "--home", home]);
      await roster(["prune", "--older-than", "0s", "--home", home]);
      assertEquals(Deno.readTextFileSync(victim), "keep");
    },
  );
  await t.step("a home whose parent anyone may rewrite (0777, not sticky): refused", async () => {
    await using dir = await tempDir();
    const open = `${dir.path}/open`;
    Deno.mkdirSync(open);
    Deno.chmodSync(open, 0o777);
    const home = `${open}/home`;
    for (const args of [["register", "--pid", String(s.pid)], ["list"]]) {
      const r = await roster([...args, "--home", home]);
      assertEquals(r.code, 1, `${args[0]}: ${r.stdout}`);
      assertOneLine(r, /^roster: Refusing the store: another user can rewrite .*: .*\/open\n$/);
    }
    assertEquals(entries(open), []);
  });
  await t.step("the same parent, sticky (like /tmp): accepted, the entry is checked", async () => {
    await using dir = await tempDir();
    const shared = `${dir.path}/shared`;
    Deno.mkdirSync(shared);
    Deno.chmodSync(shared, 0o1777);
    const r = await register(`${shared}/home`);
    assertEquals(r.code, 0, r.stderr);
  });
  await t.step("a symlinked continuations/ is refused; nothing is written through it", async () => {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    // A session id, so the plan names an identity and only the link can refuse it.
    await rosterJson(home, ["register", "--pid", String(s.pid), "--session-id", "S1"]);
    const target = `${dir.path}/target`;
    Deno.mkdirSync(target, { mode: 0o700 });
    Deno.symlinkSync(target, `${home}/continuations`);
    const r = await roster([
      "continuation-plan",
      "--key",
      "k",
      "--session",
      String(s.pid),
      "--home",
      home,
    ]);
    assertEquals(r.code, 1, r.stdout);
    assertOneLine(r, /symbolic link/);
    assertEquals(entries(target), []);
  });
  await t.step("a ledger whose parent anyone may rewrite: no plan, no claim", async () => {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    const gone = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(gone.pid), "--session-id", "S1"], {
      env: { TMUX_PANE: PANE },
    });
    await gone.kill();
    const open = `${dir.path}/open`;
    Deno.mkdirSync(open);
    Deno.chmodSync(open, 0o777);
    const ledger = `${open}/ledger`;
    const plan = await roster([
      "continuation-plan",
      "--key",
      "k",
      "--session",
      String(gone.pid),
      "--release",
      "--home",
      home,
      "--ledger",
      ledger,
    ]);
    assertEquals(plan.code, 1, plan.stdout);
    assertOneLine(plan, /another user/);
    // A ledger someone else planted there: the check refuses to claim in it.
    Deno.mkdirSync(ledger, { mode: 0o700 });
    const c = await roster(
      [
        "continuation-check",
        "--key",
        "k",
        "--claim",
        "--facts",
        "-",
        "--home",
        home,
        "--ledger",
        ledger,
      ],
      { stdin: JSON.stringify(FACTS) },
    );
    assert(c.code !== 0, c.stdout);
    assertEquals(entries(ledger), []);
  });
});

/**
 * Far beyond any call's time on a loaded machine (a shared CI box runs calls for seconds), far
 * below for ever: the old code blocked in open(2) until it was killed.
 */

Deno.test("FIFOs swapped in under a racing writer never hang list or register", async () => {
  await using home = await tempDir();
  await using s = spawnSleeper();
  await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
  const dir = hostDir(home.path);
  const good = Deno.readTextFileSync(`${dir}/${s.pid}.json`);
  // The writer swaps each name between a regular record and a FIFO (a hard link renamed over
  // it), as fast as it can: a reader's look and its open land on different files.
  const swapper = `
    const [dir, good] = Deno.args;
    const n = 16;
    for (let i = 0; i < n; i++) {
      const pid = ${NO_PID} + 100 + i;
      Deno.writeTextFileSync(dir + "/f" + i, good.replace(/"session_pid": \\d+/, '"session_pid": ' + pid), { mode: 0o600 });
      new Deno.Command("mkfifo", { args: [dir + "/p" + i] }).outputSync();
    }
    for (;;) {
      for (let i = 0; i < n; i++) {
        const name = dir + "/" + (${NO_PID} + 100 + i) + ".json";
        for (const src of ["/f", "/p"]) {
          try { Deno.linkSync(dir + src + i, dir + "/t" + i); Deno.renameSync(dir + "/t" + i, name); } catch {}
        }
      }
    }`;
  const writer = new Deno.Command(Deno.execPath(), {
    args: ["eval", swapper, dir, good],
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    await new Promise((ok) => setTimeout(ok, 500));
    const runs: Promise<CliResult>[] = [];
    for (let i = 0; i < 40; i++) {
      runs.push(
        i % 4 === 3
          ? roster(["register", "--pid", String(s.pid), "--home", home.path], {
            timeoutMs: HANG_MS,
          })
          : roster(["list", "--all", "--home", home.path], { timeoutMs: HANG_MS }),
      );
      if (runs.length % 4 === 0) {
        for (const r of await Promise.all(runs.splice(0))) {
          assertEquals(r.code, 0, r.stderr);
        }
      }
    }
  } finally {
    writer.kill("SIGKILL");
    await writer.status;
  }
});

Deno.test("a FIFO swapped in for the sweep queue between its look and its open never hangs register", async () => {
  // register appends its name to `.sweep.next` holding the lock shared: a write-only open of a
  // FIFO put there after the lstat would block until a reader came, with the lock held.
  await using home = await tempDir();
  await using s = spawnSleeper();
  const dir = hostDir(home.path);
  const queue = `${dir}/.sweep.next`;
  // A register's cleanup hands `.sweep.next` over to `.sweep` when that runs dry; the next one
  // pushes the kept names again: register until the file that registers append to is there.
  for (let i = 0; !exists(queue); i++) {
    assert(i < 5, "no register made the queue");
    const r = await roster(["register", "--pid", String(s.pid), "--home", home.path, "--quiet"]);
    assertEquals(r.code, 0, r.stderr);
  }
  // A new session's register, the one that appends (a refreshed record is not queued again).
  await using s2 = spawnSleeper();
  const point = "sweep:before-open";
  const child = new Deno.Command(Deno.execPath(), {
    args: cliArgs(["register", "--pid", String(s2.pid), "--home", home.path, "--quiet"]),
    env: { ROSTER_TEST_PAUSE_AT: point },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const marker = `${dir}/.pause-${point}-${child.pid}`;
  try {
    await waitUntil(() => exists(marker), `never reached ${point}`);
    Deno.removeSync(queue);
    assertEquals((await run("mkfifo", [queue], {})).code, 0);
    Deno.removeSync(marker);
    // The cleanup that follows opens the queue files too: let it past the point each time.
    const output = child.output();
    let finished = false;
    output.finally(() => finished = true);
    (async () => {
      while (!finished) {
        if (exists(marker)) Deno.removeSync(marker);
        await new Promise((ok) => setTimeout(ok, 10));
      }
    })();
    const timer = new Promise<null>((ok) => setTimeout(() => ok(null), HANG_MS));
    const done = await Promise.race([output, timer]);
    finished = true;
    assert(done !== null, `register hung on a FIFO for ${HANG_MS} ms`);
    assertEquals(done.code, 0, new TextDecoder().decode(done.stderr));
    // The FIFO was refused on the handle (not a file), not replaced or written through (the
    // cleanup's hand-over may have renamed it to `.sweep`, where it is refused again).
    const fifos = [queue, `${dir}/.sweep`].filter((p) => exists(p) && Deno.lstatSync(p).isFifo);
    assertEquals(fifos.length, 1, "the FIFO is left alone");
    const rows = await rosterJson<Row[]>(home.path, ["list"]);
    assertEquals(rows.map((r) => r.session_pid).sort(), [s.pid, s2.pid].sort());
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* it finished */ }
  }
});

Deno.test("list --discover: unrelated files never push a live session past the cap", async () => {
  await using dir = await tempDir();
  await using home = await tempDir();
  const sessions = `${dir.path}/sessions`;
  Deno.mkdirSync(sessions);
  const live = Array.from({ length: 5 }, () => spawnSleeper());
  try {
    for (const p of live) {
      writeJson(`${sessions}/${p.pid}.json`, {
        pid: p.pid,
        sessionId: `s-${p.pid}`,
        cwd: "/w",
        startedAt: Date.now(),
      });
    }
    for (let i = 0; i < 20_000; i++) Deno.writeTextFileSync(`${sessions}/notes-${i}.txt`, "");
    const rows = await rosterJson<Row[]>(home.path, ["list", "--discover"], {
      env: { CLAUDE_CONFIG_DIR: dir.path },
    });
    assertEquals(
      rows.map((r) => r.session_pid).sort(),
      live.map((p) => p.pid).sort(),
    );
  } finally {
    for (const p of live) await p.kill();
  }
});

Deno.test("whoami where an ancestor's record cannot be read: exit 1 naming it, never not found", async () => {
  // The test process is the roster child's parent: a damaged record under its pid may be the
  // caller's session, so "no session owns this process" (3) would be a guess.
  await using home = await tempDir();
  Deno.mkdirSync(hostDir(home.path), { recursive: true, mode: 0o700 });
  const path = `${hostDir(home.path)}/${Deno.pid}.json`;
  Deno.writeTextFileSync(path, "{ not json", { mode: 0o600 });
  const r = await roster(["whoami", "--home", home.path]);
  assertEquals(r.code, 1, r.stderr);
  assertMatch(
    r.stderr,
    new RegExp(
      `^roster: Cannot tell which session owns this process: the record of pid ${Deno.pid} cannot be read`,
    ),
  );
  // One written before that process started (a torn record of a pid reused since) is not its.
  const before = new Date("2001-01-01T00:00:00Z");
  Deno.utimeSync(path, before, before);
  const stale = await roster(["whoami", "--home", home.path]);
  assertEquals(stale.code, 3, stale.stderr);
  Deno.removeSync(path);
  const none = await roster(["whoami", "--home", home.path]);
  assertEquals(none.code, 3, none.stderr);
});
