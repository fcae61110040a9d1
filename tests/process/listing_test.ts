/**
 * The process table's listing (src/process/linux.ts exitedBefore): once a call has probed
 * LISTING_AFTER gone pids, a pid missing from one listing of /proc is judged exited without an
 * open of its own, but only for a process that started before the listing was taken.
 */
import { assert, assertEquals } from "../assert.ts";
import { linuxBackend, LISTING_AFTER } from "../../src/process/linux.ts";
import {
  parseLoadavgTasks,
  parseStat,
  parseUptimeTicks,
  tokenTicks,
} from "../../src/process/linux_proc.ts";
import { libc } from "../../src/process/libc.ts";
import { LivenessJudge } from "../../src/identity/liveness.ts";
import {
  canUnshareTime,
  hostDir,
  roster,
  rosterJson,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";

/** The listing reads /proc through libc, which exists only on Linux (glibc). */
const NO_LIBC = Deno.build.os !== "linux" || libc() === null;

Deno.test("parseUptimeTicks and tokenTicks", async (t) => {
  await t.step("uptime in clock ticks, rounded down as the kernel writes it", () => {
    assertEquals(parseUptimeTicks("350.12 600.45\n"), 35012);
    assertEquals(parseUptimeTicks("0.07 0.00\n"), 7);
    assertEquals(parseUptimeTicks("9.99\n"), 999);
  });
  await t.step("any other shape is no uptime", () => {
    for (const bad of ["", "350 600", ".12 1", "350.1 2", "350.123 1", "-5.00 1", "3a.00 1"]) {
      assertEquals(parseUptimeTicks(bad), null, JSON.stringify(bad));
    }
  });
  await t.step("loadavg's task count", () => {
    assertEquals(parseLoadavgTasks("0.20 0.18 0.12 1/80 11206\n"), 80);
    for (const bad of ["", "0.20 0.18 0.12 80 11206", "0.20 0.18 0.12 1/ 1", "a b c 1/x 2"]) {
      assertEquals(parseLoadavgTasks(bad), null, JSON.stringify(bad));
    }
  });
  await t.step("tokens: digits only", () => {
    assertEquals(tokenTicks("424242"), 424242);
    for (const bad of ["", "-5", "12a", "darwin:1", "1".repeat(16)]) {
      assertEquals(tokenTicks(bad), null, JSON.stringify(bad));
    }
  });
});

/** A /proc of fixtures: `pids` listed, uptime 50.00 s (5,000 ticks), mounted without hidepid=. */
async function fixtureProc(pids: number[]) {
  const root = await tempDir();
  for (const pid of pids) {
    Deno.mkdirSync(`${root.path}/${pid}`);
    Deno.writeTextFileSync(
      `${root.path}/${pid}/stat`,
      `${pid} (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 100 20 21`,
    );
  }
  Deno.mkdirSync(`${root.path}/self`);
  Deno.writeTextFileSync(`${root.path}/self/mountinfo`, plainProc(root.path));
  Deno.writeTextFileSync(`${root.path}/uptime`, "50.00 10.00\n");
  Deno.writeTextFileSync(`${root.path}/loadavg`, "0.20 0.18 0.12 1/80 11206\n");
  // Names that are no pid: the listing must not take them for one.
  for (const name of ["self", "0123", "12x", "1234567890123456"]) {
    Deno.mkdirSync(`${root.path}/${name}`, { recursive: true });
  }
  return root;
}

const plainProc = (root: string) => `22 1 0:21 / ${root} rw,nosuid - proc proc rw\n`;

/** Probes `count` pids the fixture does not hold: the call's gone pids before a listing. */
function probeGone(b: ReturnType<typeof linuxBackend>, count: number, from = 900_000) {
  for (let i = 0; i < count; i++) assertEquals(b.probe(from + i).kind, "gone");
}

Deno.test({ name: "exitedBefore over a fixture /proc", ignore: NO_LIBC }, async (t) => {
  await using root = await fixtureProc([100, 200]);
  const b = linuxBackend(root.path, () => true);
  await t.step("no listing before LISTING_AFTER gone pids", () => {
    probeGone(b, LISTING_AFTER - 1);
    assertEquals(b.exitedBefore(300, "10"), false);
  });
  await t.step("then a pid it lacks, started before it, has exited", () => {
    probeGone(b, 1, 800_000);
    assertEquals(b.exitedBefore(300, "10"), true);
    assertEquals(b.exitedBefore(300, "4899"), true);
  });
  await t.step("a listed pid is probed, whatever its token", () => {
    assertEquals(b.exitedBefore(100, "10"), false);
    assertEquals(b.exitedBefore(200, "10"), false);
  });
  await t.step("names that are no pid are not listed as pids", () => {
    assertEquals(b.exitedBefore(123, "10"), true);
    assertEquals(b.exitedBefore(0, "10"), true);
    assertEquals(b.exitedBefore(1234567890123456, "10"), true);
    assertEquals([...libc()!.readPids(root.path, 100)!].sort(), [100, 200]);
    assertEquals(libc()!.readPids(root.path, 1), null, "more pids than the limit");
    assertEquals(libc()!.readPids(`${root.path}/missing`, 100), null);
  });
  await t.step("a process that may have started after the uptime was read is probed", () => {
    // 5,000 ticks: the uptime itself, and the second before it (the margin), prove nothing.
    assertEquals(b.exitedBefore(300, "4900"), false);
    assertEquals(b.exitedBefore(300, "4999"), false);
    assertEquals(b.exitedBefore(300, "5000"), false);
    assertEquals(b.exitedBefore(300, "123456"), false);
  });
  await t.step("a token that is no tick count is probed", () => {
    assertEquals(b.exitedBefore(300, "-5"), false);
    assertEquals(b.exitedBefore(300, "darwin:5"), false);
  });
});

Deno.test({
  name: "a host of many processes lists only once the gone pids would have paid for it",
  ignore: NO_LIBC,
}, async () => {
  await using root = await fixtureProc([100]);
  Deno.writeTextFileSync(`${root.path}/loadavg`, "9.00 9.00 9.00 3/2000 99999\n");
  const b = linuxBackend(root.path, () => true);
  probeGone(b, LISTING_AFTER);
  assertEquals(b.exitedBefore(300, "10"), false);
  probeGone(b, 999 - LISTING_AFTER, 700_000);
  assertEquals(b.exitedBefore(300, "10"), false);
  probeGone(b, 1, 600_000);
  assertEquals(b.exitedBefore(300, "10"), true);
});

Deno.test({ name: "no listing where /proc may hide processes", ignore: NO_LIBC }, async (t) => {
  const mountinfo = (text: (root: string) => string) => (root: string) =>
    Deno.writeTextFileSync(`${root}/self/mountinfo`, text(root));
  for (
    const [label, spoil] of [
      ["hidepid=2", mountinfo((r) => `22 1 0:21 / ${r} rw - proc proc rw,hidepid=2\n`)],
      [
        "hidepid=invisible",
        mountinfo((r) => `22 1 0:21 / ${r} rw - proc proc rw,hidepid=invisible\n`),
      ],
      ["no mountinfo line for it", mountinfo(() => "")],
      ["no loadavg to size the listing by", (r: string) => Deno.removeSync(`${r}/loadavg`)],
      ["no uptime to read", (r: string) => Deno.removeSync(`${r}/uptime`)],
    ] as const
  ) {
    await t.step(label, async () => {
      await using root = await fixtureProc([100]);
      spoil(root.path);
      const b = linuxBackend(root.path, () => true);
      probeGone(b, LISTING_AFTER + 10);
      assertEquals(b.exitedBefore(300, "10"), false);
    });
  }
});

/** Gone pids enough for this host's listing: its task count (twice the threshold) at least. */
function gonePidsToList(): number {
  const tasks = parseLoadavgTasks(Deno.readTextFileSync("/proc/loadavg")) ?? 0;
  return Math.max(LISTING_AFTER, tasks);
}

/** The start token roster records for a live pid. */
const tokenOf = (pid: number) => parseStat(Deno.readTextFileSync(`/proc/${pid}/stat`))!.starttime;

Deno.test({ name: "exitedBefore on the real /proc", ignore: NO_LIBC }, async (t) => {
  const b = linuxBackend();
  const hides = (() => {
    const mountinfo = Deno.readTextFileSync("/proc/self/mountinfo");
    return mountinfo.split("\n").some((l) => l.split(" ")[4] === "/proc" && /hidepid=/.test(l));
  })();
  await using before = spawnSleeper();
  const beforeToken = tokenOf(before.pid);
  const exited = spawnSleeper();
  const exitedToken = tokenOf(exited.pid);
  await exited.kill();
  // Both started at least a few clock ticks before the listing is taken: a process of the
  // last second is probed, never judged by it.
  await new Promise((r) => setTimeout(r, 1_200));
  // Gone pids above pid_max: no process can hold them while the test runs.
  const pidMax = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());
  probeGone(b, gonePidsToList(), pidMax + 1);
  await t.step("a live process started before the listing is never called exited", () => {
    assertEquals(b.exitedBefore(before.pid, beforeToken), false);
    assertEquals(b.exitedBefore(Deno.pid, tokenOf(Deno.pid)), false);
  });
  await t.step({
    name: "a process that exited before the listing is exited without a probe",
    ignore: hides,
    fn: () => {
      assertEquals(b.exitedBefore(exited.pid, exitedToken), true);
      assertEquals(b.exitedBefore(pidMax + 5, "1"), true);
    },
  });
  await t.step("a process started after the listing is probed, not called exited", async () => {
    // Its pid was free when the listing was taken (or it is listed): either way not exited.
    await using after = spawnSleeper();
    assertEquals(b.exitedBefore(after.pid, tokenOf(after.pid)), false);
    const judge = new LivenessJudge(b, { host: "h", machineId: null, bootId: null, pidNs: null });
    const identity = {
      host: "h",
      session_pid: after.pid,
      start_token: tokenOf(after.pid),
      boot_id: null,
      machine_id: null,
      pid_ns: null,
    };
    assertEquals(judge.verdict(identity).liveness, "alive");
    assertEquals(
      judge.verdict({ ...identity, session_pid: before.pid, start_token: beforeToken }),
      {
        liveness: "alive",
        reason: "running",
      },
    );
  });
});

Deno.test({
  name: "list and prune over a store of many exited sessions, as a person runs them",
  ignore: NO_LIBC,
}, async (t) => {
  await using home = await tempDir();
  await using a = spawnSleeper();
  await using b = spawnSleeper();
  for (const s of [a, b]) {
    const r = await roster(["register", "--pid", `${s.pid}`, "--agent", "t", "--home", home.path]);
    assertEquals(r.code, 0, r.stderr);
  }
  const dir = hostDir(home.path);
  const live = JSON.parse(Deno.readTextFileSync(`${dir}/${a.pid}.json`));
  // More exited sessions than LISTING_AFTER, on pids above pid_max that nothing can hold.
  const pidMax = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());
  const dead = gonePidsToList() + 100;
  for (let i = 1; i <= dead; i++) {
    writeJson(`${dir}/${pidMax + i}.json`, { ...live, session_pid: pidMax + i, start_token: "1" });
  }
  // And one whose pid is free but whose start token lies in the future: no listing proves that
  // one gone (it could be a process started after the listing), so its own probe says.
  writeJson(`${dir}/${pidMax + dead + 1}.json`, {
    ...live,
    session_pid: pidMax + dead + 1,
    start_token: "99999999999",
  });
  await t.step("list: every live session alive, every exited one dead", async () => {
    const rows = await rosterJson<{ session_pid: number; liveness: string; reason: string }[]>(
      home.path,
      ["list", "--all"],
    );
    assertEquals(rows.length, dead + 3);
    const alive = rows.filter((r) => r.liveness === "alive").map((r) => r.session_pid).sort();
    assertEquals(alive, [a.pid, b.pid].sort());
    assert(rows.every((r) => r.liveness === "alive" || r.reason === "exited"));
  });
  await t.step("prune removes exactly the exited ones and keeps the live", async () => {
    const r = await roster(["prune", "--home", home.path, "--json"]);
    assertEquals(r.code, 0, r.stderr);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".json"));
    assertEquals(names.sort(), [`${a.pid}.json`, `${b.pid}.json`].sort());
  });
});

Deno.test({
  name: "in a time namespace ahead of the host, a process started after the listing is probed",
  ignore: NO_LIBC || !canUnshareTime(),
}, async () => {
  // The uptime the namespace shows runs 100,000 s ahead; start tokens come without the offset,
  // so the listing's uptime must too, or every later process would read as started before it.
  const child = new URL("./listing_child.ts", import.meta.url).pathname;
  const out = await new Deno.Command("unshare", {
    args: [
      "--time",
      "--boottime",
      "100000",
      Deno.execPath(),
      "run",
      "-A",
      child,
      String(gonePidsToList()),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  assertEquals(JSON.parse(new TextDecoder().decode(out.stdout)), { exited: true, late: false });
});
