/**
 * `roster wait` end to end: it returns when the processes end (not after a polling period:
 * the kernel tells it through a pidfd on Linux), a pid with no process has already ended, the
 * timeout has its own exit code, and --session-id waits for the session's process.
 */
import { assertEquals, assertMatch } from "../assert.ts";
import {
  cleanEnv,
  cliArgs,
  type CliResult,
  HANG_MS,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
} from "../helpers.ts";
import { assertSchema } from "../schema.ts";

const EXIT_TIMEOUT = 124;

/** Starts `roster wait` in the background; `watching` resolves once it holds `n` pidfds. */
function startWait(args: string[], n: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: cliArgs(args),
    env: { ...cleanEnv(), NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const done = child.output().then((o): CliResult => {
    const r = {
      code: o.code,
      stdout: new TextDecoder().decode(o.stdout),
      stderr: new TextDecoder().decode(o.stderr),
    };
    if (args.includes("--json") && r.stdout !== "") assertSchema(args, r.stdout);
    return r;
  });
  const watching = async () => {
    for (const deadline = Date.now() + HANG_MS; Date.now() < deadline;) {
      let pidfds = 0;
      try {
        for (const e of Deno.readDirSync(`/proc/${child.pid}/fd`)) {
          const link = Deno.readLinkSync(`/proc/${child.pid}/fd/${e.name}`);
          if (link === "anon_inode:[pidfd]") pidfds++;
        }
      } catch { /* not Linux, or it is gone */ }
      if (pidfds >= n) return true;
      await new Promise((ok) => setTimeout(ok, 25));
    }
    return false;
  };
  return { done, watching };
}

Deno.test("roster wait", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  /** Registers `pid` as a session of `sid`; its row (the record's path). */
  const registered = (pid: number, sid: string) =>
    rosterJson<{ path: string }>(home, ["register", "--pid", String(pid), "--session-id", sid]);

  await t.step("returns once every process has ended", async () => {
    const a = spawnSleeper();
    const b = spawnSleeper();
    const waiting = startWait(["wait", "--home", home, String(a.pid), String(b.pid), "--json"], 2);
    // It waits on a pidfd per process: the kernel says when each ends (no polling).
    assertEquals(await waiting.watching(), Deno.build.os === "linux");
    await a.kill();
    await new Promise((ok) => setTimeout(ok, 100));
    await b.kill();
    const r = await waiting.done;
    assertEquals(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assertEquals(out.outcome, "exited");
    assertEquals(out.pids.map((p: { exited: boolean }) => p.exited), [true, true]);
    if (Deno.build.os === "linux") assertEquals(out.mechanism, "pidfd");
  });

  await t.step("a pid no process holds has already ended: exit 0 at once", async () => {
    const r = await roster(["wait", "--home", home, "4200000"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "");
  });

  await t.step("--timeout: exit 124, naming what is still running", async () => {
    await using s = spawnSleeper();
    const r = await roster(["wait", "--home", home, "--timeout", "300ms", String(s.pid)]);
    assertEquals(r.code, EXIT_TIMEOUT);
    assertMatch(
      r.stderr,
      new RegExp(`^roster: Timed out after 300ms: still running: ${s.pid}\\n$`),
    );
  });

  await t.step("a --timeout longer than one timer holds (30d) waits, not times out", async () => {
    // A timer longer than 2^31-1 ms fires at once: the timeout is re-armed in steps.
    const s = spawnSleeper();
    const waiting = startWait(["wait", "--home", home, "--timeout", "30d", String(s.pid)], 1);
    assertEquals(await waiting.watching(), Deno.build.os === "linux");
    await new Promise((ok) => setTimeout(ok, 300));
    await s.kill();
    const r = await waiting.done;
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stderr, "");
  });

  await t.step("a parked session's process that still runs is waited for", async () => {
    // Parked is the lifecycle's word, not the process's: the pid has not ended.
    await using s = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(s.pid), "--session-id", "parked-w"]);
    const park = await roster(["park", "--home", home, "--pid", String(s.pid), "--quiet"]);
    assertEquals(park.code, 0, park.stderr);
    const r = await roster(["wait", "--home", home, "--timeout", "300ms", String(s.pid)]);
    assertEquals(r.code, EXIT_TIMEOUT, r.stderr);
    assertMatch(r.stderr, new RegExp(`still running: ${s.pid}\\n$`));
  });

  await t.step("a parked session whose pid was reused since has ended", async () => {
    // The process's verdict, not the lifecycle's: another process holds the pid now.
    await using s = spawnSleeper();
    const row = await registered(s.pid, "parked-reused");
    const park = await roster(["park", "--home", home, "--pid", String(s.pid), "--quiet"]);
    assertEquals(park.code, 0, park.stderr);
    const rec = JSON.parse(await Deno.readTextFile(row.path));
    assertEquals(typeof rec.parked_at, "string");
    await Deno.writeTextFile(row.path, JSON.stringify({ ...rec, start_token: "1" }));
    const r = await roster(["wait", "--home", home, "--timeout", "5s", String(s.pid)]);
    assertEquals(r.code, 0, r.stderr);
  });

  await t.step("--session-id waits for the process of that session", async () => {
    const s = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(s.pid), "--session-id", "sess-w"]);
    const waiting = startWait(["wait", "--home", home, "--session-id", "sess-w"], 1);
    assertEquals(await waiting.watching(), Deno.build.os === "linux");
    await s.kill();
    const r = await waiting.done;
    assertEquals(r.code, 0, r.stderr);
  });

  await t.step("--session-id with no live session of that id: exit 3", async () => {
    const r = await roster(["wait", "--home", home, "--session-id", "no-such-session"]);
    assertEquals(r.code, 3);
    assertMatch(r.stderr, /No live session with --session-id no-such-session/);
  });

  await t.step("a pid whose record's process is gone and reused counts as ended", async () => {
    // A record whose token no longer matches: its session is over even though the pid runs.
    await using s = spawnSleeper();
    const row = await registered(s.pid, "reused");
    const rec = JSON.parse(await Deno.readTextFile(row.path));
    rec.start_token = "1";
    await Deno.writeTextFile(row.path, JSON.stringify(rec));
    const r = await roster(["wait", "--home", home, "--timeout", "5s", "--session-id", "reused"]);
    assertEquals(r.code, 3, r.stderr);
  });

  await t.step("neither pids nor --session-id is a usage error", async () => {
    const r = await roster(["wait", "--home", home]);
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /Missing PID for wait/);
  });
});
