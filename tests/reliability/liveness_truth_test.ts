/**
 * Liveness truth, cross-checked against the system's own tools: for every process on the
 * machine roster's start time agrees with `ps -o lstart=` to the second and its verdict is
 * alive; for 200 exited pids it is dead. Whatever else runs on the host (a Codex app-server,
 * which `register` rightly refuses without a session id, thousands of processes) changes
 * nothing: the records are written as a registration writes them, without register's policy
 * on which pid a hook may name, and one `list` judges them all.
 */
import { assert, assertEquals } from "../assert.ts";
import { rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import { linuxBackend } from "../../src/process/linux.ts";
import { LivenessJudge } from "../../src/identity/liveness.ts";
import { writeRecord } from "../../src/registry/store_write.ts";
import type { Row } from "../../src/registry/row.ts";
import { NO_LIFECYCLE, type SessionRecord } from "../../src/registry/record.ts";

/** `ps -eo pid=,lstart=` in UTC: pid to start time in epoch seconds. */
function psStartTimes(): Map<number, number> {
  const out = new Deno.Command("ps", {
    args: ["-eo", "pid=,lstart="],
    env: { LC_ALL: "C", TZ: "UTC" },
    stdout: "piped",
  }).outputSync();
  const months = "JanFebMarAprMayJunJulAugSepOctNovDec";
  const map = new Map<number, number>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^\s*(\d+)\s+\w{3}\s+(\w{3})\s+(\d+)\s+(\d+):(\d+):(\d+)\s+(\d{4})$/.exec(line);
    if (!m) continue;
    const t = Date.UTC(+m[7], months.indexOf(m[2]) / 3, +m[3], +m[4], +m[5], +m[6]) / 1000;
    map.set(Number(m[1]), t);
  }
  return map;
}

Deno.test("every running process: start time agrees with ps, verdict alive", async () => {
  const backend = linuxBackend();
  const ps = psStartTimes();
  assert(ps.size > 5, "ps listed the processes");
  const checked: number[] = [];
  /** Each checked pid's start token when it was checked: a later process on the pid is another. */
  const tokens = new Map<number, string | null>();
  for (const [pid, psSeconds] of ps) {
    const p = backend.probe(pid);
    if (p.kind !== "exists" || p.info.zombie) continue; // exited since ps ran
    const ms = p.info.startedAtMs;
    assert(ms !== null, `start time of ${pid}`);
    // ps truncates to the second; allow one second for rounding of clock ticks.
    assert(
      Math.abs(Math.floor(ms / 1000) - psSeconds) <= 1,
      `pid ${pid}: ${ms} vs ps ${psSeconds}`,
    );
    checked.push(pid);
    tokens.set(pid, p.info.startToken);
  }
  assert(checked.length > 5);

  // The verdict through the CLI, for every one of them.
  await using home = await tempDir();
  const judge = judgeHere(backend);
  for (const pid of checked) {
    await writeRecord(home.path, recordOf(backend, pid, tokens.get(pid)!), judge);
  }
  const rows = await rosterJson<Row[]>(home.path, ["list", "--all"]);
  assertEquals(rows.length, checked.length);
  for (const r of rows) {
    // Only a process that really ended in the meantime may be anything but alive.
    if (r.liveness !== "alive") {
      assert(ended(r.session_pid!), `pid ${r.session_pid} was ${r.liveness} (${r.reason})`);
    }
  }
  assert(rows.filter((r) => r.liveness === "alive").length > 5);

  /**
   * Whether the process checked on `pid` has ended: gone, a zombie, or the pid now another
   * process's. On a busy machine pids wrap around, and a short-lived process's pid can be taken
   * again between its register and this look (seen in CI: six consecutive pids).
   */
  function ended(pid: number): boolean {
    const p = backend.probe(pid);
    return p.kind === "gone" || (p.kind === "exists" && p.info.zombie) ||
      (p.kind === "exists" && p.info.startToken !== tokens.get(pid));
  }
});

/** The judge of this host, as the CLI builds it. */
function judgeHere(backend: ReturnType<typeof linuxBackend>): LivenessJudge {
  return new LivenessJudge(backend, {
    host: Deno.hostname(),
    bootId: backend.bootId(),
    machineId: backend.machineId?.() ?? null,
    pidNs: backend.pidNamespace?.() ?? null,
  });
}

/** The record a registration of `pid` (start token `token`) by --pid writes. */
function recordOf(
  backend: ReturnType<typeof linuxBackend>,
  pid: number,
  token: string | null,
): SessionRecord {
  return {
    schema: 1,
    session_pid: pid,
    pid_source: "flag",
    pid_verified: false,
    hosted: false,
    start_token: token,
    process_started_at: null,
    boot_id: backend.bootId(),
    machine_id: backend.machineId?.() ?? null,
    pid_ns: backend.pidNamespace?.() ?? null,
    host: Deno.hostname(),
    agent: "truth",
    runtime: null,
    session_id: null,
    cwd: "/",
    tmux_pane: null,
    registered_at: new Date().toISOString(),
    registrar: { pid: Deno.pid, version: "test", path: "test" },
    ...NO_LIFECYCLE,
    os: "linux",
  };
}

Deno.test("200 exited pids are dead/exited", async () => {
  await using home = await tempDir();
  const backend = linuxBackend();
  const judge = judgeHere(backend);
  const sleepers = Array.from({ length: 200 }, () => spawnSleeper());
  try {
    for (const s of sleepers) {
      const p = backend.probe(s.pid);
      assert(p.kind === "exists");
      await writeRecord(home.path, recordOf(backend, s.pid, p.info.startToken), judge);
    }
    const alive = await rosterJson<Row[]>(home.path, ["list"]);
    assertEquals(alive.filter((r) => r.reason === "running").length, 200);
  } finally {
    await Promise.all(sleepers.map((s) => s.kill()));
  }
  const rows = await rosterJson<Row[]>(home.path, ["list", "--all"]);
  assertEquals(rows.length, 200);
  for (const r of rows) {
    assertEquals([r.liveness, r.reason], ["dead", "exited"], `pid ${r.session_pid}`);
  }
});
