/**
 * Start-up reads only what a call runs: `deno run` reads and analyses every module a literal
 * `import("...")` names before main.ts starts, so each hook command is watched with strace and
 * the roster source files it opens are checked (issue 16: load only what the command needs).
 */
import { assert, assertEquals } from "../assert.ts";
import {
  cleanEnv,
  cliArgs,
  DEFAULT_TIMEOUT_MS,
  ROOT,
  run,
  spawnSleeper,
  tempDir,
} from "../helpers.ts";

/**
 * The roster source files (paths under src/) a call opened, the paths under `home` it looked
 * for and did not find, and its exit code.
 */
async function sourcesOpened(
  args: string[],
  log: string,
  home: string,
): Promise<{ code: number; src: string[]; missing: string[] }> {
  const trace = "trace=open,openat,stat,lstat,newfstatat,statx";
  const out = await new Deno.Command("strace", {
    args: ["-f", "-qq", "-o", log, "-e", trace, Deno.execPath(), ...cliArgs(args)],
    env: cleanEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  const src = new Set<string>();
  const missing = new Set<string>();
  for (const line of Deno.readTextFileSync(log).split("\n")) {
    const path = /"([^"]+)"/.exec(line)?.[1];
    if (path?.startsWith(`${ROOT}src/`) && !line.includes("ENOENT")) {
      src.add(path.slice(ROOT.length));
    }
    if (path?.startsWith(`${home}/`) && line.includes("ENOENT")) missing.add(path);
  }
  return { code: out.code, src: [...src].sort(), missing: [...missing].sort() };
}

/**
 * Modules no hook command runs on Linux: other OSes' backends, help, completions, schemas, the
 * table (a hook prints one row in words at most), and the whole-store reader (whoami reads it
 * only inside a sandbox's pid namespace, for a session id the harness declares).
 */
const NEVER_ON_A_HOOK = [
  "src/process/darwin.ts",
  "src/process/freebsd.ts",
  "src/process/windows.ts",
  "src/process/windows_wait.ts",
  "src/process/ps.ts",
  "src/process/bsd.ts",
  "src/process/kqueue.ts",
  "src/cli/help.ts",
  "src/cli/completions.ts",
  "src/cli/schemas.ts",
  "src/registry/discover.ts",
  "src/cli/table.ts",
  "src/cli/list_view.ts",
  "src/registry/scan.ts",
  "src/fs/dirstream.ts",
  // libc is loaded by list and prune alone; the Linux backend asks process/types.ts for it.
  "src/process/libc.ts",
];

/** The owner's code (the harness table, the ancestor walk): only commands that name an owner. */
const OWNER = "src/registry/owner.ts";
/** The sweep queue: only register's cleanup (and prune) use it. */
const SWEEP = "src/registry/sweep.ts";
/**
 * The store's writers, each read only by the commands that write that way (registry/store.ts):
 * register's (with the lock and the pause points), unregister's removal, and park, resume and a
 * continuation's hold. `check` and `whoami` only read.
 */
const STORE_WRITE = "src/registry/store_write.ts";
const STORE_REMOVE = "src/registry/store_remove.ts";
const STORE_UPDATE = "src/registry/store_update.ts";
const LOCK = ["src/fs/flock.ts", "src/pause.ts"];
/** A continuation claim's side (the dispatch lock, durable writes, recovery): `--claim` only. */
const CLAIM = [
  "src/continuation/claim.ts",
  "src/continuation/lock.ts",
  "src/continuation/recover.ts",
  "src/continuation/message.ts",
  "src/continuation/audit.ts",
  "src/fs/flock.ts",
];

Deno.test({
  name: "each hook command reads its own modules and no other command's",
  // strace is installed by .ci/setup.d/strace.sh; on Linux its absence fails the test.
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    await using home = await tempDir();
    await using session = spawnSleeper();
    const h = ["--home", home.path];
    // name, arguments, exit codes, the command's module, modules this command must not read
    const cases: [string, string[], number[], string | null, string[]][] = [
      ["--version", ["--version"], [0], null, [OWNER, SWEEP, ...LOCK]],
      [
        "register --quiet",
        ["register", "--pid", `${session.pid}`, "-q", ...h],
        [0],
        "register",
        [STORE_REMOVE, STORE_UPDATE],
      ],
      [
        "check PID",
        ["check", `${session.pid}`, ...h],
        [0],
        "check",
        [OWNER, SWEEP, STORE_WRITE, STORE_REMOVE, STORE_UPDATE, ...LOCK],
      ],
      [
        "unregister --quiet",
        ["unregister", "--pid", `${session.pid}`, "-q", ...h],
        [0],
        "unregister",
        [SWEEP, STORE_WRITE, STORE_UPDATE, "src/pause.ts"],
      ],
      [
        "whoami",
        ["whoami", ...h],
        [0, 3],
        "whoami",
        [SWEEP, STORE_WRITE, STORE_REMOVE, STORE_UPDATE, ...LOCK],
      ],
      [
        "continuation-check",
        ["continuation-check", "--key", "k", ...h],
        [0, 10, 11, 12, 13],
        "continuation_check",
        [OWNER, SWEEP, STORE_WRITE, STORE_REMOVE, STORE_UPDATE, ...CLAIM],
      ],
    ];
    for (const [name, args, codes, command, never] of cases) {
      await t.step(name, async () => {
        const { code, src, missing } = await sourcesOpened(
          args,
          `${home.path}/strace.log`,
          home.path,
        );
        assert(codes.includes(code), `${name} exited ${code}`);
        const commands = src.filter((p) => p.startsWith("src/cli/commands/"));
        assertEquals(commands, command === null ? [] : [`src/cli/commands/${command}.ts`]);
        for (const p of [...NEVER_ON_A_HOOK, ...never]) {
          assert(!src.includes(p), `${name} read ${p}`);
        }
        if (name === "check PID") {
          // Its record is in this place's directory: the older layout's, missing here, is
          // not looked for (a first failed call, and the exception, cost start-up).
          assertEquals(missing, []);
        }
        if (command === null) {
          // --version: main.ts's own imports, nothing of the store or the continuation ledger.
          assert(!src.some((p) => /^src\/(registry\/store|continuation\/)/.test(p)), `${src}`);
        }
      });
    }
  },
});

/** Registers the session `pid` in the home `h` names (`--home DIR`), as its start hook would. */
async function register(pid: number, h: string[]) {
  const reg = await new Deno.Command(Deno.execPath(), {
    args: cliArgs(["register", "--pid", `${pid}`, "-q", ...h]),
    env: cleanEnv(),
    clearEnv: true,
  }).output();
  assertEquals(reg.code, 0);
}

/** The lines of an strace of one roster call, `trace` the syscalls traced. */
async function traced(args: string[], log: string, trace = "trace=open,openat"): Promise<string[]> {
  const out = await new Deno.Command("strace", {
    args: ["-f", "-qq", "-o", log, "-e", trace, Deno.execPath(), ...cliArgs(args)],
    env: cleanEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  assertEquals(out.code, 0, args.join(" "));
  return Deno.readTextFileSync(log).split("\n");
}

Deno.test({
  name: "activity and unregister read the record once, under the lock, and the machine id once",
  // strace is installed by .ci/setup.d/strace.sh; on Linux its absence fails the test.
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using home = await tempDir();
    await using session = spawnSleeper();
    const h = ["--home", home.path];
    await register(session.pid, h);
    const record = `/${session.pid}.json"`;
    const reads = (lines: string[]) =>
      lines.filter((l) => l.includes(record) && !l.includes("ENOENT")).length;
    const log = `${home.path}/strace.log`;
    const activity = ["activity", "working", "--pid", `${session.pid}`, "-q", ...h];
    const lines = await traced(activity, log);
    assertEquals(reads(lines), 1);
    // The host key and the host identity both need the machine id: one read serves both.
    const machineIds = lines.filter((l) => /"\/etc\/machine-id"/.test(l) && !l.includes("ENOENT"));
    assertEquals(machineIds.length, 1, machineIds.join("\n"));
    const unregister = ["unregister", "--pid", `${session.pid}`, "-q", ...h];
    assertEquals(reads(await traced(unregister, log)), 1);
  },
});

Deno.test({
  name: "activity --pid touches the session's record, walking no ancestor and matching no harness",
  // strace is installed by .ci/setup.d/strace.sh; on Linux its absence fails the test.
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using home = await tempDir();
    await using session = spawnSleeper();
    const h = ["--home", home.path];
    await register(session.pid, h);
    const args = ["activity", "working", "--pid", `${session.pid}`, "-q", ...h];
    const lines = await traced(args, `${home.path}/strace.log`, "trace=open,openat,readlink");
    const stats = new Set<string>();
    for (const line of lines) {
      const m = /"\/proc\/(\d+)\/stat"/.exec(line);
      if (m) stats.add(m[1]);
    }
    // This process started before the session: register's check that the named pid is the
    // caller's ancestor would read it on its way up. activity reads the session alone: a --pid
    // needs no walk, nor the caller's parent where one starts.
    assert(stats.has(`${session.pid}`), `${[...stats]}`);
    assertEquals([...stats], [`${session.pid}`]);
    // Its own record says it is no shared server: its executable and command line, which
    // would say so, are not read.
    const harness = lines.filter((l) => /"\/proc\/\d+\/(exe|cmdline)"/.test(l));
    assertEquals(harness, []);
  },
});

Deno.test("activity runs no regex: V8 compiles each one again in every process (src/chars.ts)", async (t) => {
  await using home = await tempDir();
  await using session = spawnSleeper();
  const h = ["--home", home.path];
  await register(session.pid, h);
  // Every regex match goes through RegExp.prototype.exec once it is replaced (test, replace,
  // split and match all call it): the call is counted, then main.ts runs as a hook runs it.
  const entry = `${home.path}/count_regexes.ts`;
  Deno.writeTextFileSync(
    entry,
    `const exec = RegExp.prototype.exec;
const seen: string[] = [];
RegExp.prototype.exec = function (this: RegExp, s: string) {
  seen.push(String(this));
  return exec.call(this, s);
};
const { main } = await import(${JSON.stringify(`${ROOT}main.ts`)});
const code = await main(Deno.args);
console.log(JSON.stringify({ code, seen }));
`,
  );
  // As the recipes call it (src/hooks/recipes.ts): quiet, the tool call's id from the hook's
  // JSON on stdin, and with no --pid the walk up the caller's ancestors (none is a harness).
  const pid = ["--pid", `${session.pid}`];
  const input = JSON.stringify({ session_id: "s1", tool_use_id: "t1", tool_name: "Bash" });
  const calls: [string, string[], string][] = [
    ["working", ["activity", "working", ...pid, "-q", ...h], ""],
    ["--tool-start -", ["activity", "--tool-start", "-", ...pid, "-q", ...h], input],
    ["--tool-end -", ["activity", "--tool-end", "-", ...pid, "-q", ...h], input],
    ["idle, no --pid", ["activity", "idle", "-q", ...h], ""],
  ];
  for (const [name, args, stdin] of calls) {
    await t.step(name, async () => {
      const out = await run(
        Deno.execPath(),
        ["run", "--quiet", "--allow-all", entry, ...args],
        cleanEnv(),
        undefined,
        DEFAULT_TIMEOUT_MS,
        stdin,
      );
      const { code, seen } = JSON.parse(out.stdout.slice(out.stdout.lastIndexOf("{")));
      assertEquals(code, 0, out.stderr);
      assertEquals(seen, []);
    });
  }
});
