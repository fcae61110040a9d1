/**
 * A /proc that is not the caller's pid namespace's (issue 24, item 1): a process that entered a
 * container's pid namespace but kept the host's mounts (`nsenter -p` without `-m`), one made by
 * `unshare -fp` without `--mount-proc`, and one in the host's namespace under a container's
 * /proc (`nsenter -m` alone). Their /proc/<pid> are another namespace's pids, so no record of the
 * caller's namespace may be judged from them: each is `unknown (foreign-proc)`, never dead (or
 * alive), prune keeps it and the listing shortcut never runs. Real namespaces, a real sleeper.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { canUnsharePid } from "../pidns.ts";
import { cleanEnv, cliArgs, DEFAULT_TIMEOUT_MS, run, spawnSleeper, tempDir } from "../helpers.ts";
import { linuxBackend } from "../../src/process/linux.ts";
import { procShowsOwnNs } from "../../src/process/linux_proc.ts";
import { LivenessJudge } from "../../src/identity/liveness.ts";
import { writeRecord } from "../../src/registry/store_write.ts";
import type { SessionRecord } from "../../src/registry/record.ts";
import { RosterError } from "../../src/errors.ts";

interface JsonRow {
  session_pid: number;
  liveness: string;
  reason: string;
  agent: string | null;
  start_token: string | null;
}

Deno.test("procShowsOwnNs: only a /proc that proves it is the reader's namespace's", () => {
  const status = (nspid: string | null) =>
    `Name:\tdeno\nPid:\t42\n${nspid === null ? "" : `NSpid:\t${nspid}\n`}PPid:\t1\n`;
  assert(procShowsOwnNs("42", status("42"), 42), "one namespace: the mount's is the reader's");
  assert(!procShowsOwnNs("42", status("42\t7"), 7), "an ancestor's mount: self is not getpid");
  assert(!procShowsOwnNs("9042", status("9042\t42"), 42), "an ancestor's mount");
  assert(!procShowsOwnNs("42", status("42\t42"), 42), "two levels that happen to agree");
  assert(!procShowsOwnNs(null, null, 42), "the reader is not in the mount's namespace");
  assert(!procShowsOwnNs("42", null, 42), "status unreadable: not proven");
  assert(procShowsOwnNs("42", status(null), 42), "before Linux 4.1: self and Pid agree");
  assert(!procShowsOwnNs("42", status(null).replace("Pid:\t42", "Pid:\t43"), 42));
  assert(!procShowsOwnNs("", status("42"), 42));
  assert(procShowsOwnNs("42", status(" 42 \t"), 42), "blanks around the one entry");
  assert(!procShowsOwnNs("42", status("42 7"), 42), "two entries split by a space");
  assert(procShowsOwnNs("42", status(null).replace("Pid:\t42", "Pid:\t42 \t"), 42));
  assert(!procShowsOwnNs("42", status(null).replace("Pid:\t42", "Pid:\t42x"), 42));
});

const ENV = { ...cleanEnv(), NO_COLOR: "1" };
const rosterCmd = (args: string[]) => [Deno.execPath(), ...cliArgs(args)];

/** Runs `prefix... roster args` to completion; a hang fails the test at the bound. */
function under(prefix: string[], args: string[]) {
  const [cmd, ...rest] = [...prefix, ...rosterCmd(args)];
  return run(cmd, rest, ENV, undefined, DEFAULT_TIMEOUT_MS);
}

function rowsOf(r: { code: number; stdout: string; stderr: string }): JsonRow[] {
  assertEquals(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as JsonRow[];
}

function pruneOf(r: { code: number; stdout: string; stderr: string }): { removed: unknown[] } {
  assertEquals(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** The host pid of the first process of the pid namespace `unshare` (pid `launcher`) made. */
async function initOf(launcher: number): Promise<number> {
  for (let i = 0; i < 600; i++) {
    try {
      const kids = Deno.readTextFileSync(`/proc/${launcher}/task/${launcher}/children`).trim();
      if (kids !== "") return Number(kids.split(" ")[0]);
    } catch { /* not yet */ }
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error("unshare's child never appeared");
}

function installedTool(name: string): boolean {
  try {
    return new Deno.Command(name, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const usable = () => canUnsharePid() && installedTool("nsenter");

Deno.test({
  name: "a container's live session seen through another namespace's /proc is unknown",
  ignore: Deno.build.os !== "linux",
}, async (t) => {
  if (!usable()) return;
  await using home = await tempDir();
  // The container: its own pid namespace and /proc; its first process starts a sleeper,
  // registers it as a session from inside (where /proc is right), says so, and waits.
  const script = `sleep 600 & SP=$!; ${
    rosterCmd(["register", "--pid", "$SP", "--agent", "claude", "--home", home.path, "--quiet"])
      .map((a) => a.startsWith("$") ? a : `'${a}'`).join(" ")
  } && echo "$SP" && wait`;
  const container = new Deno.Command("unshare", {
    args: ["--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", script],
    env: ENV,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const reader = container.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const first = await Promise.race([
      reader.read(),
      new Promise<never>((_, no) => setTimeout(() => no(new Error("no register")), 60_000)),
    ]);
    const innerPid = Number(first.value?.trim());
    assert(innerPid > 1, `the container's sleeper: ${first.value}`);
    const init = await initOf(container.pid);
    const inside = ["nsenter", "-t", String(init), "-p", "-m", "--"];
    const pidOnly = ["nsenter", "-t", String(init), "-p", "--"];

    await t.step("inside, with its own /proc, the session is alive", async () => {
      const rows = rowsOf(await under(inside, ["list", "--all", "--json", "--home", home.path]));
      assertEquals(rows.map((r) => [r.session_pid, r.liveness, r.reason]), [
        [innerPid, "alive", "running"],
      ]);
    });

    await t.step("its pid namespace with the host's /proc: unknown, never dead", async () => {
      const rows = rowsOf(await under(pidOnly, ["list", "--all", "--json", "--home", home.path]));
      assertEquals(rows.map((r) => [r.session_pid, r.liveness, r.reason]), [
        [innerPid, "unknown", "foreign-proc"],
      ]);
      const check = await under(pidOnly, ["check", String(innerPid), "--home", home.path]);
      assert(check.code !== 3, `check must not say dead: ${check.code} ${check.stdout}`);
    });

    await t.step("prune there keeps the record", async () => {
      const pruned = pruneOf(await under(pidOnly, ["prune", "--json", "--home", home.path]));
      assertEquals(pruned.removed, []);
      const rows = rowsOf(await under(inside, ["list", "--all", "--json", "--home", home.path]));
      assertEquals(rows.map((r) => r.liveness), ["alive"]);
    });

    await t.step("there, register, park, unregister and activity write nothing", async () => {
      // Retest of issue 24: register from that /proc replaced the record (start token and all)
      // with a token-less one that read `alive (pid-only)` for whatever held the pid next.
      const h = ["--home", home.path];
      const pid = String(innerPid);
      const before = rowsOf(await under(inside, ["list", "--all", "--json", ...h]));
      const reg = await under(pidOnly, ["register", "--pid", pid, "--agent", "claude", ...h]);
      assertEquals(reg.code, 1, reg.stdout + reg.stderr);
      assert(reg.stderr.includes("another pid namespace's"), reg.stderr);
      const guessed = await under(pidOnly, ["register", "--agent", "claude", ...h]);
      assertEquals(guessed.code, 1, guessed.stderr);
      assert(guessed.stderr.includes("another pid namespace's"), guessed.stderr);
      const park = await under(pidOnly, ["park", "--pid", pid, ...h]);
      assertEquals(park.code, 1, park.stdout + park.stderr);
      assert(park.stderr.includes("another pid namespace's"), park.stderr);
      const act = await under(pidOnly, ["activity", "working", "--pid", pid, ...h]);
      assertEquals(act.code, 1, act.stdout + act.stderr);
      assert(act.stderr.includes("another pid namespace's"), act.stderr);
      // unregister exits 0 in every case (README), the reason on stderr.
      const unreg = await under(pidOnly, ["unregister", "--pid", pid, "--json", ...h]);
      assertEquals(unreg.code, 0, unreg.stderr);
      assertEquals(JSON.parse(unreg.stdout).outcome, "refused");
      assert(unreg.stderr.includes("another pid namespace's"), unreg.stderr);
      const after = rowsOf(await under(inside, ["list", "--all", "--json", ...h]));
      assertEquals(after, before);
      assertEquals(after.map((r) => [r.liveness, r.reason]), [["alive", "running"]]);
      assert(after[0].start_token !== null, JSON.stringify(after));
    });

    await t.step("the host's namespace under the container's /proc: unknown", async () => {
      // The host's own live sleeper, registered on the host; then read from the container's
      // mount namespace, whose /proc shows none of the host's pids (not even the reader).
      await using sleeper = spawnSleeper();
      const reg = await run(Deno.execPath(), [
        ...cliArgs(["register", "--pid", String(sleeper.pid), "--agent", "codex"]),
        "--home",
        home.path,
        "--quiet",
      ], ENV);
      assertEquals(reg.code, 0, reg.stderr);
      const mountOnly = ["nsenter", "-t", String(init), "-m", "--"];
      const rows = rowsOf(await under(mountOnly, ["list", "--all", "--json", "--home", home.path]));
      const host = rows.find((r) => r.session_pid === sleeper.pid);
      assertEquals([host?.liveness, host?.reason], ["unknown", "foreign-proc"]);
      assert(rows.every((r) => r.liveness !== "dead"), JSON.stringify(rows));
      const pruned = pruneOf(await under(mountOnly, ["prune", "--json", "--home", home.path]));
      assertEquals(pruned.removed, []);
    });
  } finally {
    try {
      container.kill("SIGKILL");
    } catch { /* gone */ }
    await container.status;
    await container.stderr.cancel().catch(() => {});
  }
});

Deno.test({
  name: "unshare -fp without --mount-proc: register there is refused, nothing is written",
  ignore: Deno.build.os !== "linux",
}, async () => {
  if (!canUnsharePid()) return;
  await using home = await tempDir();
  // roster runs in a fresh pid namespace, under the host's /proc: pid 2 there (the sleeper) is
  // some host process's pid here (kthreadd), which says nothing of the sleeper. A token-less
  // record of it would read alive (pid-only) from a /proc of that namespace for any holder.
  const q = (args: string[]) => rosterCmd(args).map((a) => `'${a}'`).join(" ");
  const script = `sleep 600 & SP=$!; ${
    q(["register", "--agent", "claude", "--home", home.path, "--quiet"]).replace(
      "'register'",
      "'register' --pid \"$SP\"",
    )
  }; RC=$?; kill -9 "$SP"; wait; [ "$RC" = 1 ] || exit 9; ${
    q(["list", "--all", "--json", "--home", home.path])
  }`;
  const r = await run("unshare", ["--pid", "--fork", "--kill-child", "sh", "-c", script], ENV);
  assert(r.stderr.includes("another pid namespace's"), r.stderr);
  assertEquals(rowsOf(r), []);
});

Deno.test({
  name: "a record with a start token is never replaced by one without",
  ignore: Deno.build.os !== "linux",
}, async () => {
  await using home = await tempDir();
  await using sleeper = spawnSleeper();
  const reg = await run(Deno.execPath(), [
    ...cliArgs(["register", "--pid", String(sleeper.pid), "--agent", "codex"]),
    "--home",
    home.path,
    "--quiet",
  ], ENV);
  assertEquals(reg.code, 0, reg.stderr);
  const [row] = rowsOf(
    await run(Deno.execPath(), cliArgs(["list", "--json", "--home", home.path]), ENV),
  ) as (JsonRow & { path: string })[];
  const before = Deno.readTextFileSync(row.path);
  const record = JSON.parse(before) as SessionRecord;
  assert(record.start_token !== null, before);
  // The same process registered by a caller that could read no start token for it.
  const backend = linuxBackend();
  const judge = new LivenessJudge(backend, {
    host: record.host,
    bootId: backend.bootId(),
    machineId: backend.machineId(),
    pidNs: backend.pidNamespace(),
    os: "linux",
  });
  const blind = { ...record, start_token: null, process_started_at: null };
  const err = await assertRejects(() => writeRecord(home.path, blind, judge), RosterError);
  assert(err.message.includes("start token"), err.message);
  assertEquals(Deno.readTextFileSync(row.path), before);
});
