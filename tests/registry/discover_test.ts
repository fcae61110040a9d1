/**
 * list --discover: Claude Code's own session files, read safely and never written, judged by
 * pid and start time; pure parts first, then the CLI against real processes.
 */
import { assert, assertEquals } from "../assert.ts";
import { roster, rosterJson, spawnSleeper, tempDir, writeJson } from "../helpers.ts";
import {
  claudeSessionsDir,
  judgeSession,
  mergeDiscovered,
  parseClaudeSession,
  pidDomainOf,
  type SourcedRow,
} from "../../src/registry/discover.ts";
import type { Probe, ProcessInfo } from "../../src/process/types.ts";
import type { Row } from "../../src/registry/row.ts";
import { processBackend } from "../../src/process/mod.ts";

const T = 1_800_000_000_000;
const exists = (startedAtMs: number | null, over: Partial<ProcessInfo> = {}): Probe => ({
  kind: "exists",
  info: { pid: 7, ppid: 1, startToken: "1", startedAtMs, zombie: false, name: "claude", ...over },
});

Deno.test("claudeSessionsDir", async (t) => {
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  await t.step("$CLAUDE_CONFIG_DIR wins, else ~/.claude", () => {
    assertEquals(
      claudeSessionsDir(env({ CLAUDE_CONFIG_DIR: "/c", HOME: "/h" }), "linux"),
      "/c/sessions",
    );
    assertEquals(claudeSessionsDir(env({ HOME: "/h" }), "linux"), "/h/.claude/sessions");
    assertEquals(
      claudeSessionsDir(env({ CLAUDE_CONFIG_DIR: "", HOME: "/h" }), "darwin"),
      "/h/.claude/sessions",
    );
    assertEquals(
      claudeSessionsDir(env({ USERPROFILE: "C:\\Users\\me" }), "windows"),
      "C:\\Users\\me\\.claude\\sessions",
    );
    assertEquals(claudeSessionsDir(env({}), "linux"), null);
  });
});

Deno.test("parseClaudeSession", async (t) => {
  const good = { pid: 7, sessionId: "s", cwd: "/w", startedAt: T, status: "idle", kind: "x" };
  await t.step("the fields roster uses, other fields ignored", () => {
    assertEquals(parseClaudeSession(good, 7), {
      pid: 7,
      sessionId: "s",
      cwd: "/w",
      startedAtMs: T,
      procStart: null,
      pidDomain: null,
      tmux: null,
      status: "idle",
    });
    const full = { ...good, procStart: "55525", pidDomain: "linux:m:pid:[1]", tmux: "s:@1.%3" };
    assertEquals(
      Object.values(parseClaudeSession(full, 7)!).slice(4),
      ["55525", "linux:m:pid:[1]", "s:@1.%3", "idle"],
    );
    assertEquals(parseClaudeSession({ ...good, procStart: 55525 }, 7)?.procStart, null);
  });
  await t.step("sessionId and cwd may be missing", () => {
    assertEquals(parseClaudeSession({ pid: 7, startedAt: T }, 7), {
      pid: 7,
      sessionId: null,
      cwd: null,
      startedAtMs: T,
      procStart: null,
      pidDomain: null,
      tmux: null,
      status: null,
    });
  });
  const odd: [string, unknown][] = [
    ["not an object", [good]],
    ["a pid unlike the file name", { ...good, pid: 8 }],
    ["a pid that is not a number", { ...good, pid: "7" }],
    ["no startedAt", { ...good, startedAt: undefined }],
    ["startedAt in seconds as text", { ...good, startedAt: "1800000000" }],
    ["startedAt not finite", { ...good, startedAt: 1e300 }],
    // From 10000-01-01 on, Date writes a signed six-digit year: no RFC 3339 date-time.
    ["startedAt in the year 10000", { ...good, startedAt: 253_402_300_800_000 }],
    ["startedAt negative", { ...good, startedAt: -5 }],
    ["a sessionId that is not text", { ...good, sessionId: 5 }],
    ["a cwd too long", { ...good, cwd: "x".repeat(5000) }],
  ];
  for (const [name, value] of odd) {
    await t.step(`skips ${name}`, () => assertEquals(parseClaudeSession(value, 7), null));
  }
});

Deno.test("judgeSession", async (t) => {
  const HERE = "linux:m:pid:[1]";
  const byTime = (startedAtMs = T) => ({ startedAtMs, procStart: null, pidDomain: null });
  const exact = (procStart: string, pidDomain = HERE) => ({ startedAtMs: T, procStart, pidDomain });
  await t.step(
    "procStart where pidDomain is this one: compared exactly, whatever the times",
    () => {
      // A forward clock step: startedAt far from the start time, still the same process.
      assertEquals(judgeSession(exact("1"), exists(T + 86_400_000), HERE), {
        liveness: "alive",
        reason: "running",
      });
      // A reused pid that started within seconds of startedAt: another token, dead.
      assertEquals(judgeSession(exact("2"), exists(T + 1_000), HERE), {
        liveness: "dead",
        reason: "pid-reused",
      });
      assertEquals(judgeSession(exact("1"), exists(T, { startToken: null }), HERE), {
        liveness: "unknown",
        reason: "unverifiable",
      });
    },
  );
  await t.step("a pidDomain from another machine or pid namespace: unknown", () => {
    assertEquals(judgeSession(exact("1", "linux:m:pid:[2]"), exists(T), HERE), {
      liveness: "unknown",
      reason: "other-pid-ns",
    });
    assertEquals(judgeSession(exact("1", "linux:other:pid:[1]"), { kind: "gone" }, HERE), {
      liveness: "unknown",
      reason: "other-host",
    });
  });
  await t.step("without procStart: within 30 s of startedAt running, else unknown", () => {
    for (const d of [-30_000, 0, 30_000]) {
      assertEquals(judgeSession(byTime(), exists(T + d), HERE).reason, "running");
    }
    // Never dead on timing alone: an earlier boot's file and a stepped clock look the same.
    for (const d of [-86_400_000, -30_001, 30_001, 86_400_000]) {
      assertEquals(judgeSession(byTime(), exists(T + d), HERE), {
        liveness: "unknown",
        reason: "unverifiable",
      });
    }
  });
  await t.step("gone, zombie, unsupported: as for records", () => {
    assertEquals(judgeSession(exact("1"), { kind: "gone" }, HERE), {
      liveness: "dead",
      reason: "exited",
    });
    assertEquals(judgeSession(byTime(), exists(T, { zombie: true }), HERE).reason, "zombie");
    assertEquals(judgeSession(byTime(), { kind: "unsupported" }, null).reason, "unsupported");
  });
  await t.step("pidDomainOf: Linux, machine id and pid namespace", () => {
    assertEquals(pidDomainOf({ machineId: "m", pidNs: "pid:[1]" }, "linux"), HERE);
    assertEquals(pidDomainOf({ machineId: null, pidNs: "pid:[1]" }, "linux"), null);
    assertEquals(pidDomainOf({ machineId: "m", pidNs: "pid:[1]" }, "darwin"), null);
  });
});

Deno.test("mergeDiscovered drops a discovered pid a live registered row already covers", () => {
  const reg = (pid: number, liveness: Row["liveness"], host = "h") =>
    ({ session_pid: pid, liveness, host }) as Row;
  const found = (pid: number) => ({ session_pid: pid, source: "claude" }) as SourcedRow;
  const merged = mergeDiscovered(
    [reg(1, "alive"), reg(2, "dead"), reg(3, "alive", "other")],
    [found(1), found(2), found(3), found(4)],
    "h",
  );
  assertEquals(merged.map((r) => [r.session_pid, r.source]), [
    [1, "roster"],
    [2, "roster"],
    [3, "roster"],
    [2, "claude"],
    [3, "claude"],
    [4, "claude"],
  ]);
});

/** When this boot began, read independently of roster: /proc/stat's btime (Linux). */
/** The start token as Claude Code reads it: /proc/<pid>/stat field 22. */
function tokenOf(pid: number): string {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

/** A start time as the process backend reports it, for files that name a real process. */
async function startOf(pid: number): Promise<number> {
  const p = (await processBackend()).probe(pid);
  if (p.kind !== "exists" || p.info.startedAtMs === null) throw new Error(`No start for ${pid}`);
  return p.info.startedAtMs;
}

Deno.test("roster list --discover", async (t) => {
  await using home = await tempDir();
  await using config = await tempDir();
  const dir = `${config.path}/sessions`;
  Deno.mkdirSync(dir);
  await using live = spawnSleeper();
  await using stepped = spawnSleeper();
  await using unsure = spawnSleeper();
  await using reused = spawnSleeper();
  const gone = spawnSleeper();
  await gone.kill();
  const file = (pid: number, body: unknown) => {
    writeJson(`${dir}/${pid}.json`, body);
    return `${dir}/${pid}.json`;
  };
  const liveStart = await startOf(live.pid);
  file(live.pid, { pid: live.pid, sessionId: "s-live", cwd: "/w", startedAt: liveStart + 700 });
  // The process started 20 s after the file says: what a small step of the clock looks like.
  file(stepped.pid, {
    pid: stepped.pid,
    sessionId: "s-stepped",
    startedAt: (await startOf(stepped.pid)) - 20_000,
  });
  // Two minutes off, in this boot: another process, or a bigger step; roster cannot tell.
  file(unsure.pid, {
    pid: unsure.pid,
    sessionId: "s-unsure",
    startedAt: (await startOf(unsure.pid)) - 120_000,
  });
  // Claude Code 2.1's procStart and pidDomain: the pid is someone else's now, though it started
  // within a second of the file's startedAt (timing alone would call it running)...
  const domain = `linux:${Deno.readTextFileSync("/etc/machine-id").trim()}:` +
    Deno.readLinkSync("/proc/self/ns/pid");
  const reusedStart = await startOf(reused.pid);
  file(reused.pid, {
    pid: reused.pid,
    sessionId: "s-old",
    startedAt: reusedStart + 500,
    procStart: String(Number(tokenOf(reused.pid)) - 1),
    pidDomain: domain,
  });
  // ...and a live one after a forward wall-clock step of a day (timing alone: never running).
  await using clockStepped = spawnSleeper();
  file(clockStepped.pid, {
    pid: clockStepped.pid,
    sessionId: "s-ntp",
    startedAt: (await startOf(clockStepped.pid)) - 86_400_000,
    procStart: tokenOf(clockStepped.pid),
    pidDomain: domain,
    tmux: "main:@1.%7",
    status: "busy",
  });
  // A file from another pid namespace (a container): not judged from here.
  await using foreign = spawnSleeper();
  file(foreign.pid, {
    pid: foreign.pid,
    sessionId: "s-foreign",
    startedAt: await startOf(foreign.pid),
    procStart: tokenOf(foreign.pid),
    pidDomain: domain.replace(/pid:\[\d+\]$/, "pid:[1]"),
  });
  file(gone.pid, { pid: gone.pid, sessionId: "s-gone", cwd: "/w", startedAt: liveStart });
  const env = { CLAUDE_CONFIG_DIR: config.path };
  const list = (...more: string[]) => rosterJson<Row[]>(home.path, ["list", ...more], { env });
  type Sourced = Row & { source?: string };
  const judged = (rows: Sourced[]) =>
    rows.map((r) => [r.session_pid, r.source, r.session_id, r.liveness, r.reason]).sort();

  await t.step(
    "live and unknown sessions appear with their source; dead ones with --all",
    async () => {
      const rows = await list("--discover") as Sourced[];
      assert(rows.every((r) => r.agent === "claude"));
      assertEquals(
        judged(rows),
        [
          [live.pid, "claude", "s-live", "alive", "running"],
          [stepped.pid, "claude", "s-stepped", "alive", "running"],
          [unsure.pid, "claude", "s-unsure", "unknown", "unverifiable"],
          [clockStepped.pid, "claude", "s-ntp", "alive", "running"],
          [foreign.pid, "claude", "s-foreign", "unknown", "other-pid-ns"],
        ].sort(),
      );
      const ntp = rows.find((r) => r.session_pid === clockStepped.pid) as Sourced & {
        status?: string;
      };
      assertEquals([ntp.tmux_pane, ntp.status], ["%7", "busy"]);
      const all = await list("--discover", "--all") as Sourced[];
      assertEquals(
        judged(all),
        [
          ...judged(rows),
          [reused.pid, "claude", "s-old", "dead", "pid-reused"],
          [gone.pid, "claude", "s-gone", "dead", "exited"],
        ].sort(),
      );
    },
  );
  await t.step(
    "a discovered row has every field a registered row has (lifecycle too)",
    async () => {
      const [found] = await list("--discover");
      await using other = await tempDir();
      await using s = spawnSleeper();
      await rosterJson(other.path, ["register", "--pid", String(s.pid), "--agent", "mine"]);
      const [registered] = await rosterJson<Row[]>(other.path, ["list"]);
      const missing = Object.keys(registered).filter((k) => !Object.hasOwn(found, k));
      assertEquals(missing, [], "fields a discovered row lacks");
      // Claude Code's own id is its native session id, as a registering hook records it.
      assertEquals(found.native_session_id, found.session_id);
    },
  );
  await t.step("the row carries the process's token, good for token --verify", async () => {
    const [row] = await list("--discover");
    const r = await roster(["token", "--verify", String(live.pid), row.start_token!]);
    assertEquals(r.code, 0, r.stderr);
  });
  await t.step("without --discover nothing is read and rows have no source", async () => {
    assertEquals(await list("--all"), []);
    await rosterJson(home.path, ["register", "--pid", String(reused.pid), "--agent", "mine"]);
    const rows = await list() as Sourced[];
    assertEquals(rows.map((r) => [r.session_pid, r.source]), [[reused.pid, undefined]]);
  });
  await t.step(
    "registered rows say roster; a live registered pid is not listed twice",
    async () => {
      await rosterJson(home.path, ["register", "--pid", String(live.pid), "--agent", "mine"]);
      const rows = await list("--discover", "--all") as Sourced[];
      assertEquals(
        rows.map((r) => [r.session_pid, r.source]).sort(),
        [
          [gone.pid, "claude"],
          [live.pid, "roster"],
          [reused.pid, "roster"],
          [stepped.pid, "claude"],
          [unsure.pid, "claude"],
          [clockStepped.pid, "claude"],
          [foreign.pid, "claude"],
        ].sort(),
      );
    },
  );
  await t.step("filters apply to discovered rows", async () => {
    const shown = await list("--discover", "--agent", "claude");
    assertEquals(
      shown.map((r) => r.session_pid).sort(),
      [stepped.pid, unsure.pid, clockStepped.pid, foreign.pid].sort(),
    );
    const dead = await list("--discover", "--state", "dead", "--agent", "claude");
    assertEquals(dead.map((r) => r.session_pid), [gone.pid]);
    const unknown = await list("--discover", "--state", "unknown");
    assertEquals(unknown.map((r) => r.session_pid).sort(), [unsure.pid, foreign.pid].sort());
  });
  await t.step("odd files are skipped silently", async () => {
    // Each would list as its own row if read: its pid matches its name.
    const body = (pid: number) => ({ pid, startedAt: liveStart, sessionId: `odd-${pid}` });
    Deno.writeTextFileSync(`${dir}/11.json`, "not json");
    Deno.chmodSync(`${dir}/11.json`, 0o600);
    Deno.writeFileSync(`${dir}/12.json`, new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), { mode: 0o600 });
    file(13, { pid: 14, startedAt: liveStart });
    file(15, body(15));
    Deno.chmodSync(`${dir}/15.json`, 0o666); // writable by others
    writeJson(`${config.path}/elsewhere`, body(16));
    Deno.symlinkSync(`${config.path}/elsewhere`, `${dir}/16.json`);
    Deno.mkdirSync(`${dir}/17.json`);
    new Deno.Command("mkfifo", { args: [`${dir}/18.json`] }).outputSync();
    file(19, { ...body(19), pad: "x".repeat(70_000) }); // over 64 KiB
    Deno.writeTextFileSync(`${dir}/notes.txt`, JSON.stringify(body(21)));
    if (Deno.uid() === 0) {
      file(20, body(20));
      Deno.chownSync(`${dir}/20.json`, 65534, 65534); // another user's
    }
    const r = await roster(["list", "--discover", "--all", "--json", "--home", home.path], {
      env,
    });
    assertEquals([r.code, r.stderr], [0, ""]);
    const pids = (JSON.parse(r.stdout) as Row[]).map((x) => x.session_pid).sort();
    assertEquals(
      pids,
      [live.pid, stepped.pid, unsure.pid, reused.pid, gone.pid, clockStepped.pid, foreign.pid]
        .sort(),
    );
  });
  await t.step("a missing sessions directory is no error", async () => {
    const r = await roster(["list", "--discover", "--json", "--home", home.path], {
      env: { CLAUDE_CONFIG_DIR: `${config.path}/nowhere` },
    });
    assertEquals(r.code, 0, r.stderr);
  });
  await t.step("--discover never writes", async () => {
    const before = snapshot(dir);
    await list("--discover", "--all");
    assertEquals(snapshot(dir), before);
    assert(before.length > 0);
  });
});

/** Names, sizes and mtimes of a directory's entries. */
function snapshot(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => {
    const i = Deno.lstatSync(`${dir}/${e.name}`);
    return `${e.name} ${i.size} ${i.mtime?.getTime()} ${i.mode}`;
  }).sort();
}

Deno.test("list --discover's table has a SOURCE column; a plain list does not", async () => {
  await using home = await tempDir();
  await using config = await tempDir();
  Deno.mkdirSync(`${config.path}/sessions`);
  await using live = spawnSleeper();
  writeJson(`${config.path}/sessions/${live.pid}.json`, {
    pid: live.pid,
    sessionId: "s",
    cwd: "/w",
    startedAt: await startOf(live.pid),
  });
  const env = { CLAUDE_CONFIG_DIR: config.path };
  const table = await roster(["list", "--discover", "--home", home.path], { env });
  assertEquals(table.code, 0, table.stderr);
  const [header, row] = table.stdout.split("\n");
  assertEquals(header.split(/\s+/).slice(0, 5), ["PID", "LIVENESS", "AGENT", "SOURCE", "RUNTIME"]);
  assert(/\bclaude\s+claude\b/.test(row), row);
  const plain = await roster(["list", "--home", home.path], { env });
  assertEquals(plain.stdout.split("\n")[0].includes("SOURCE"), false);
});
