/**
 * Scale: stores far larger than any host should hold still list and prune completely (no
 * stack overflow past ~130,000 rows, no lost list of what was removed), and every reader of the
 * whole store (doctor, continuation-plan, wait --session-id too) runs in memory bounded by a
 * row (each run here gets a V8 heap of 64 MiB, which a store of 150,000 rows held whole
 * overflows), and housekeeping never costs a session its registration: prune releases the
 * store lock between bounded batches.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  cleanEnv,
  cliArgs,
  hostDir,
  MAIN,
  NO_PID,
  PERMS,
  roster,
  spawnSleeper,
  tempDir,
} from "../helpers.ts";

const encoder = new TextEncoder();

/**
 * Writes `n` valid records of this host whose pids no process can hold (above pid_max), so
 * each is dead, with distinct times (newest first is pid order), made from the record a real
 * register wrote. Returns their pids.
 */
async function writeDeadRecords(home: string, n: number): Promise<number[]> {
  await using owner = spawnSleeper();
  const reg = await roster(["register", "--pid", String(owner.pid), "--home", home, "--quiet"]);
  assertEquals(reg.code, 0, reg.stderr);
  const dir = hostDir(home);
  const template = JSON.parse(Deno.readTextFileSync(`${dir}/${owner.pid}.json`));
  Deno.removeSync(`${dir}/${owner.pid}.json`);
  // A store written before the cleanup queue: nothing queued.
  for (const name of [".sweep", ".sweep.next"]) {
    try {
      Deno.removeSync(`${dir}/${name}`);
    } catch { /* not there */ }
  }
  const base = Date.parse("2026-01-01T00:00:00Z");
  const pids: number[] = [];
  for (let i = 0; i < n; i++) {
    const pid = NO_PID + i;
    pids.push(pid);
    const record = {
      ...template,
      session_pid: pid,
      start_token: "1",
      registered_at: new Date(base + i * 1000).toISOString(),
    };
    Deno.writeFileSync(`${dir}/${pid}.json`, encoder.encode(JSON.stringify(record)), {
      mode: 0o600,
    });
  }
  return pids;
}

function recordNames(home: string): string[] {
  const names: string[] = [];
  for (const e of Deno.readDirSync(hostDir(home))) {
    if (/^[1-9][0-9]*\.json$/.test(e.name)) names.push(e.name);
  }
  return names;
}

/** The heap each run gets: rows held whole (about 1 KiB each) cannot fit. */
const HEAP_MIB = 64;

/**
 * Runs roster as a hook would, with a capped V8 heap, and reads its stdout line by line
 * without keeping it: `onLine` sees each line. Returns the exit code and stderr.
 */
async function rosterCapped(
  args: string[],
  onLine: (line: string) => void,
): Promise<{ code: number; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...PERMS,
      `--v8-flags=--max-old-space-size=${HEAP_MIB}`,
      MAIN,
      ...args,
    ],
    env: { ...cleanEnv(), NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Generous: on a machine shared by several test suites a pass over 150,000 records can take
  // ten times its CPU time.
  const timer = setTimeout(() => child.kill("SIGKILL"), 1_800_000);
  const stderr = new Response(child.stderr).text();
  let rest = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const line of lines) onLine(line);
  }
  if (rest !== "") onLine(rest);
  const { code } = await child.status;
  clearTimeout(timer);
  return { code, stderr: await stderr };
}

Deno.test("scale: list and prune over 150,000 records finish and report every row", async (t) => {
  await using home = await tempDir();
  const n = 150_000;
  const pids = await writeDeadRecords(home.path, n);

  await t.step(
    "list --all prints a table of every row, newest first (it overflowed the stack)",
    async () => {
      const lines: string[] = [];
      let count = 0;
      const r = await rosterCapped(["list", "--all", "--home", home.path], (line) => {
        if (count++ < 2) lines.push(line);
      });
      assertEquals(r.code, 0, r.stderr.slice(0, 2000));
      assertEquals(r.stderr, "");
      assertEquals(count, n + 1);
      assert(lines[0].startsWith("PID"), lines[0]);
      assert(lines[1].startsWith(`${pids[n - 1]} `), lines[1]);
    },
  );

  await t.step(
    "list --all --json streams every row as one JSON array (it held them all)",
    async () => {
      const seen: number[] = [];
      let first = "";
      let last = "";
      const r = await rosterCapped(["list", "--all", "--json", "--home", home.path], (line) => {
        if (first === "") first = line;
        last = line;
        const m = /^ {4}"session_pid": (\d+),$/.exec(line);
        if (m) seen.push(Number(m[1]));
      });
      assertEquals(r.code, 0, r.stderr.slice(0, 2000));
      assertEquals([first, last], ["[", "]"]);
      assertEquals(seen.length, n);
      assertEquals(seen[0], pids[n - 1]);
      assertEquals(seen[n - 1], pids[0]);
    },
  );

  await t.step(
    "doctor, continuation-plan and wait --session-id stream the store (they held every row)",
    async () => {
      const counts: string[] = [];
      const doctor = await rosterCapped(["doctor", "--home", home.path], (line) => {
        if (line.startsWith("store ")) counts.push(line);
      });
      assertEquals(doctor.code, 0, doctor.stderr.slice(0, 2000));
      assertEquals(counts, [`store       0 alive, ${n} dead, 0 unknown (0 malformed)`]);
      // The plan finds the pid's one row among them all, then refuses it for what it lacks.
      const plan = await rosterCapped(
        ["continuation-plan", "--session", String(pids[0]), "--key", "k1", "--home", home.path],
        () => {},
      );
      assertEquals(plan.code, 2, plan.stderr.slice(0, 2000));
      assert(/no session id and no tmux pane/.test(plan.stderr), plan.stderr.slice(0, 2000));
      const wait = await rosterCapped(
        ["wait", "--session-id", "nobody", "--timeout", "1s", "--home", home.path],
        () => {},
      );
      assertEquals(wait.code, 3, wait.stderr.slice(0, 2000));
      assertEquals(wait.stderr, "roster: No live session with --session-id nobody on this host\n");
    },
  );

  await t.step("prune removes every dead record and names each one", async () => {
    const named = new Set<number>();
    let summary = "";
    const r = await rosterCapped(["prune", "--home", home.path], (line) => {
      if (summary === "") summary = line;
      else named.add(Number(line.trim().split(/\s+/)[0]));
    });
    assertEquals(r.code, 0, r.stderr.slice(0, 2000));
    assertEquals(summary, `Removed ${n} records (${n} dead, 0 unknown); kept 0.`);
    assertEquals(named.size, n);
    for (const pid of [pids[0], pids[n >> 1], pids[n - 1]]) assert(named.has(pid), `${pid}`);
    assertEquals(recordNames(home.path).length, 0);
  });
});

Deno.test("scale: a register during a long prune is not held up until the prune ends", async () => {
  await using home = await tempDir();
  const n = 40_000;
  await writeDeadRecords(home.path, n);
  await using owner = spawnSleeper();
  const dir = hostDir(home.path);
  const before = Deno.statSync(dir).mtime!.getTime();

  const prune = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMS, MAIN, "prune", "--home", home.path, "--json"],
    env: cleanEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const pruned = prune.output();
  // The prune holds the lock once it removes records: the host directory's mtime moves.
  const deadline = Date.now() + 120_000;
  while (Deno.statSync(dir).mtime!.getTime() === before) {
    assert(Date.now() < deadline, "prune never started removing records");
    await new Promise((ok) => setTimeout(ok, 5));
  }
  const reg = await roster(
    ["register", "--pid", String(owner.pid), "--home", home.path, "--quiet"],
    { timeoutMs: 120_000 },
  );
  // Counted the moment register is done: a prune that kept the lock for its whole pass has
  // removed every dead record by then (or made register give up after 10 s).
  const leftWhenRegistered = recordNames(home.path).length;
  const out = await pruned;
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(reg.code, 0, reg.stderr);
  assertEquals(reg.stderr, "");
  assertEquals(out.code, 0, stderr);
  assert(
    leftWhenRegistered > 1 + n / 10,
    `register waited for the prune: ${leftWhenRegistered} of ${n} records left when it finished`,
  );
  const result = JSON.parse(new TextDecoder().decode(out.stdout));
  // Register's own cleanup never reaches these: they were never queued.
  assertEquals(result.dead_removed, n);
  assertEquals(recordNames(home.path), [`${owner.pid}.json`]);
});

Deno.test("scale: register's cleanup takes its candidates from the queue, never a listing", async () => {
  await using home = await tempDir();
  const [unqueued] = await writeDeadRecords(home.path, 1);
  const path = `${hostDir(home.path)}/${unqueued}.json`;
  const before = Deno.readTextFileSync(path);
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  for (const s of [a, b]) {
    const r = await roster(["register", "--pid", String(s.pid), "--home", home.path, "--quiet"]);
    assertEquals(r.code, 0, r.stderr);
  }
  // A listing would have found it and stamped it ended: no register looked at it.
  assertEquals(Deno.readTextFileSync(path), before);
  // prune reads everything and queues what it keeps; a dead record it removes.
  const p = await roster(["prune", "--home", home.path]);
  assertEquals(p.code, 0, p.stderr);
  assertEquals(recordNames(home.path).sort(), [`${a.pid}.json`, `${b.pid}.json`].sort());
  const queued = Deno.readTextFileSync(`${hostDir(home.path)}/.sweep`).trim().split("\n").sort();
  assertEquals(queued, [String(a.pid), String(b.pid)].sort());
});

Deno.test("scale: list and prune whose temp file cannot grow still print every row", async (t) => {
  // Past 2 MiB of output rows go to a temp file (src/cli/external_sort.ts). When that file could not
  // grow (a full disk: ENOSPC; here a file size limit: EFBIG, the same failed write), list
  // failed, and prune failed after removing records: exit 1 and no report of what it removed.
  await using home = await tempDir();
  await using tmp = await tempDir();
  const n = 5_000; // about 1 KiB of JSON each: several MiB of rows
  const pids = await writeDeadRecords(home.path, n);
  const limited = async (args: string[]) => {
    const out = await new Deno.Command("bash", {
      // An ignored SIGXFSZ makes a write past the limit fail with EFBIG instead of killing.
      args: [
        "-c",
        'trap "" XFSZ; ulimit -f 1024; exec "$@"',
        "bash",
        Deno.execPath(),
        ...cliArgs(
          args,
        ),
      ],
      env: { ...cleanEnv(), TMPDIR: tmp.path, NO_COLOR: "1" },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    return {
      code: out.code,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  };

  await t.step("list --all --json", async () => {
    const r = await limited(["list", "--all", "--json", "--home", home.path]);
    assertEquals([r.code, r.stderr], [0, ""]);
    const rows: { session_pid: number }[] = JSON.parse(r.stdout);
    assertEquals(rows.map((row) => row.session_pid), pids.toReversed());
  });

  await t.step("prune --json", async () => {
    const r = await limited(["prune", "--json", "--home", home.path]);
    assertEquals([r.code, r.stderr], [0, ""]);
    const result = JSON.parse(r.stdout);
    assertEquals(result.dead_removed, n);
    assertEquals(
      result.removed.map((row: { session_pid: number }) => row.session_pid),
      pids.toReversed(),
    );
    assertEquals(recordNames(home.path).length, 0);
  });
  // Nothing left behind in the temp directory either.
  assertEquals([...Deno.readDirSync(tmp.path)], []);
});
