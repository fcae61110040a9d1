import { assert, assertEquals } from "../assert.ts";
import type { HostIdentity } from "../../src/identity/identity.ts";
import {
  judgeLiveness,
  LivenessJudge,
  ownSessionVerdict,
  tokenOs,
} from "../../src/identity/liveness.ts";
import { linuxBackend } from "../../src/process/linux.ts";
import type { Probe, ProcessBackend, ProcessInfo } from "../../src/process/types.ts";
import { exactTokens } from "../../src/process/types.ts";
import { spawnSleeper } from "../helpers.ts";

const info = (over: Partial<ProcessInfo> = {}): ProcessInfo => ({
  pid: 10,
  ppid: 1,
  startToken: "T1",
  startedAtMs: 0,
  zombie: false,
  name: "x",
  ...over,
});
const rec = { host: "h", boot_id: "B1", start_token: "T1" as string | null, session_pid: 10 };
const here: HostIdentity = { host: "h", bootId: "B1" };
const run = (r: Parameters<typeof judgeLiveness>[0], p: Probe, h = here, cmp = exactTokens) =>
  judgeLiveness(r, h, { probe: () => p, compareTokens: cmp });
const exists = (o?: Partial<ProcessInfo>): Probe => ({ kind: "exists", info: info(o) });

Deno.test("liveness matrix", async (t) => {
  await t.step(
    "running",
    () => assertEquals(run(rec, exists()), { liveness: "alive", reason: "running" }),
  );
  await t.step(
    "pid-only when the record has no token",
    () =>
      assertEquals(run({ ...rec, start_token: null }, exists()), {
        liveness: "alive",
        reason: "pid-only",
      }),
  );
  await t.step(
    "exited",
    () => assertEquals(run(rec, { kind: "gone" }), { liveness: "dead", reason: "exited" }),
  );
  await t.step(
    "zombie",
    () => assertEquals(run(rec, exists({ zombie: true })), { liveness: "dead", reason: "zombie" }),
  );
  await t.step(
    "zombie even without a recorded token",
    () =>
      assertEquals(run({ ...rec, start_token: null }, exists({ zombie: true })).liveness, "dead"),
  );
  await t.step(
    "pid-reused",
    () =>
      assertEquals(run(rec, exists({ startToken: "T2" })), {
        liveness: "dead",
        reason: "pid-reused",
      }),
  );
  await t.step(
    "rebooted wins over a matching token",
    () =>
      assertEquals(run(rec, exists(), { host: "h", bootId: "B2" }), {
        liveness: "dead",
        reason: "rebooted",
      }),
  );
  await t.step(
    "no boot id here: a record without one is judged by token alone",
    () =>
      assertEquals(
        run({ ...rec, boot_id: null }, exists(), { host: "h", bootId: null }).reason,
        "running",
      ),
  );
  await t.step("other host is unknown and never probed", () => {
    let probed = false;
    const v = judgeLiveness(rec, { host: "other", bootId: "B1" }, {
      probe: () => {
        probed = true;
        return { kind: "gone" };
      },
      compareTokens: exactTokens,
    });
    assertEquals(v, { liveness: "unknown", reason: "other-host" });
    assertEquals(probed, false);
  });
  await t.step(
    "same name, another machine: other-host; another pid namespace: other-pid-ns",
    () => {
      const cases: [Record<string, string>, Partial<HostIdentity>, string][] = [
        [{ machine_id: "m1" }, { machineId: "m2" }, "other-host"],
        [
          { machine_id: "m1", pid_ns: "pid:[1]" },
          { machineId: "m2", pidNs: "pid:[2]" },
          "other-host",
        ],
        [{ pid_ns: "pid:[1]" }, { pidNs: "pid:[2]" }, "other-pid-ns"],
        [
          { machine_id: "m", pid_ns: "pid:[1]" },
          { machineId: "m", pidNs: "pid:[2]" },
          "other-pid-ns",
        ],
      ];
      for (const [r, h, reason] of cases) {
        const v = judgeLiveness({ ...rec, ...r }, { ...here, ...h }, {
          probe: () => {
            throw new Error("probed");
          },
          compareTokens: exactTokens,
        });
        assertEquals(v, { liveness: "unknown", reason });
      }
    },
  );
  await t.step("a pid the listing proves gone is exited, never probed", () => {
    const look = {
      probe: (): Probe => {
        throw new Error("probed");
      },
      compareTokens: exactTokens,
      exitedBefore: (pid: number, token: string) => pid === 10 && token === "T1",
    };
    assertEquals(judgeLiveness(rec, here, look), { liveness: "dead", reason: "exited" });
  });
  await t.step("the judge's verdict is judgeLiveness's, for every row of the matrix", () => {
    const probes: Probe[] = [
      exists(),
      exists({ startToken: "T2" }),
      exists({ startToken: null }),
      exists({ zombie: true }),
      { kind: "gone" },
      { kind: "unsupported" },
    ];
    const records = [rec, { ...rec, start_token: null }, { ...rec, boot_id: "B0" }];
    for (const p of probes) {
      const backend = { probe: () => p, compareTokens: exactTokens } as unknown as ProcessBackend;
      for (const r of records) {
        assertEquals(
          new LivenessJudge(backend, here).verdict(r),
          run(r, p),
          JSON.stringify([r, p]),
        );
      }
    }
    const other = { ...rec, pid_ns: "pid:[1]", session_id: "s1" };
    const there = { ...here, pidNs: "pid:[2]" };
    const backend = {
      probe: () => exists(),
      compareTokens: exactTokens,
    } as unknown as ProcessBackend;
    // Never own-session from the judge: only the registry knows whether a record of a declared
    // id ended or is the newest of its id (registry/lifecycle.ts ownSessionOf).
    assertEquals(
      new LivenessJudge(backend, there, new Set(["s1"])).verdict(other),
      { liveness: "unknown", reason: "other-pid-ns" },
    );
  });
  await t.step("seen from another pid namespace, the caller's declared session is its own", () => {
    const other = { liveness: "unknown", reason: "other-pid-ns" } as const;
    const declared = new Set(["s1"]);
    assertEquals(ownSessionVerdict(other, "s1", declared), {
      liveness: "alive",
      reason: "own-session",
    });
    assertEquals(ownSessionVerdict(other, "s2", declared), other);
    assertEquals(ownSessionVerdict(other, null, declared), other);
    // Only across a pid namespace: elsewhere the process itself is judged.
    const gone = { liveness: "dead", reason: "exited" } as const;
    assertEquals(ownSessionVerdict(gone, "s1", declared), gone);
    const host = { liveness: "unknown", reason: "other-host" } as const;
    assertEquals(ownSessionVerdict(host, "s1", declared), host);
  });
  await t.step("identities unknown on either side are not a difference", () => {
    const v = run({ ...rec, machine_id: null, pid_ns: "pid:[1]" }, exists(), {
      ...here,
      machineId: "m",
      pidNs: null,
    });
    assertEquals(v.reason, "running");
  });
  await t.step(
    "unverifiable: exists but token unreadable",
    () =>
      assertEquals(run(rec, exists({ startToken: null })), {
        liveness: "unknown",
        reason: "unverifiable",
      }),
  );
  await t.step(
    "unsupported",
    () =>
      assertEquals(run(rec, { kind: "unsupported" }), {
        liveness: "unknown",
        reason: "unsupported",
      }),
  );
  await t.step(
    "uncertain token comparison is unknown, never dead",
    () =>
      assertEquals(run(rec, exists({ startToken: "T9" }), here, () => "uncertain"), {
        liveness: "unknown",
        reason: "unverifiable",
      }),
  );
});

/** The real-/proc steps need Linux's backend. */
const NOT_LINUX = Deno.build.os !== "linux";

Deno.test(
  { name: "LivenessJudge remembers live processes only, and judges real ones", ignore: NOT_LINUX },
  async (t) => {
    const real = linuxBackend();
    const probes: number[] = [];
    const backend: ProcessBackend = {
      ...real,
      probe: (pid) => (probes.push(pid), real.probe(pid)),
    };
    const here: HostIdentity = { host: "h", bootId: real.bootId() };
    const judge = new LivenessJudge(backend, here);
    const sleeper = spawnSleeper();
    try {
      const first = real.probe(sleeper.pid);
      assert(first.kind === "exists" && first.info.startToken !== null);
      const record = {
        host: "h",
        boot_id: here.bootId,
        start_token: first.info.startToken,
        session_pid: sleeper.pid,
      };
      await t.step("a live session is alive, probed once for two records", () => {
        assertEquals(judge.verdict(record), { liveness: "alive", reason: "running" });
        assertEquals(judge.verdict(record), { liveness: "alive", reason: "running" });
        assertEquals(probes.filter((p) => p === sleeper.pid).length, 1);
      });
      await t.step("another start token on the live pid is pid-reused", () => {
        assertEquals(judge.verdict({ ...record, start_token: "1" }), {
          liveness: "dead",
          reason: "pid-reused",
        });
      });
      await t.step("once it exits, a fresh probe says so and nothing stale is kept", async () => {
        await sleeper.kill();
        assertEquals(judge.verdict(record, true), { liveness: "dead", reason: "exited" });
        probes.length = 0;
        assertEquals(judge.verdict(record), { liveness: "dead", reason: "exited" });
        // A gone pid is not remembered: asked again, it can only name a newer process.
        assertEquals(judge.verdict(record), { liveness: "dead", reason: "exited" });
        assertEquals(probes, [sleeper.pid, sleeper.pid]);
      });
    } finally {
      await sleeper.kill();
    }
  },
);

Deno.test("another OS under the same hostname is another host (issue 22 item 7)", async (t) => {
  const linux: HostIdentity = { host: "h", bootId: "B1", machineId: "M1", os: "linux" };
  const windows: HostIdentity = { host: "h", bootId: null, machineId: null, os: "windows" };
  const gone: Probe = { kind: "gone" };
  const OTHER = { liveness: "unknown", reason: "other-host" };
  await t.step("a Windows record seen from Linux: never probed, never dead", () => {
    const win = { host: "h", boot_id: null, start_token: "windows:1339", session_pid: 10 };
    assertEquals(run({ ...win, os: "windows" }, gone, linux), OTHER);
  });
  await t.step("a Linux record seen from Windows, the other way", () => {
    const lin = { host: "h", boot_id: "B1", machine_id: "M1", start_token: "77", session_pid: 10 };
    assertEquals(run({ ...lin, os: "linux" }, gone, windows), OTHER);
  });
  await t.step("a record from before the os field: its start token's scheme says its OS", () => {
    const win = { host: "h", boot_id: null, start_token: "windows:1339", session_pid: 10 };
    assertEquals(run(win, gone, linux), OTHER);
    assertEquals(run({ ...rec, start_token: "77" }, gone, windows), OTHER);
    assertEquals(tokenOs("darwin:1.000002"), "darwin");
    assertEquals(tokenOs("ps:17"), null);
    assertEquals(tokenOs(null), null);
  });
  await t.step("the same OS, or one not known, is judged by its probe as before", () => {
    const dead = { liveness: "dead", reason: "exited" };
    assertEquals(run({ ...rec, os: "linux" }, gone, { ...here, os: "linux" }), dead);
    assertEquals(run({ ...rec, start_token: null }, gone, { ...here, os: "linux" }), dead);
    assertEquals(run({ ...rec, os: "windows" }, gone, here), dead);
  });
});

Deno.test("clones of one image: another boot is a reboot only if this machine ran it", async (t) => {
  const history = (...boots: string[]) => () => new Set(boots);
  const host: HostIdentity = { host: "h", bootId: "B1", machineId: "M", os: "linux" };
  const theirs = { ...rec, boot_id: "B0", machine_id: "M", os: "linux" };
  const REBOOTED = { liveness: "dead", reason: "rebooted" };
  await t.step("a boot this machine's history holds: it rebooted since, dead", () => {
    assertEquals(run(theirs, exists(), { ...host, pastBoots: history("B0", "B1") }), REBOOTED);
  });
  await t.step("a boot it never ran (a clone's): unknown, never dead, never probed", () => {
    const clone = { ...host, pastBoots: history("B1") };
    assertEquals(run(theirs, { kind: "gone" }, clone), {
      liveness: "unknown",
      reason: "other-host",
    });
  });
  await t.step("a history that cannot be read proves nothing: unknown", () => {
    assertEquals(
      run(theirs, { kind: "gone" }, { ...host, pastBoots: () => null }).liveness,
      "unknown",
    );
  });
  await t.step("a boot id that cannot be read here: unknown, never probed (retest F2)", () => {
    const blind = { ...host, bootId: null, pastBoots: history("B1") };
    const probed = () => {
      throw new Error("probed");
    };
    const look = { probe: probed, compareTokens: exactTokens, exitedBefore: () => true };
    for (const r of [theirs, { ...theirs, boot_id: "B1" }]) {
      assertEquals(judgeLiveness(r, blind, look), { liveness: "unknown", reason: "unverifiable" });
    }
    assertEquals(run({ ...theirs, boot_id: null }, { kind: "gone" }, blind).reason, "exited");
  });
  await t.step("no history kept by the caller: another boot is a reboot, as before", () => {
    assertEquals(run(theirs, exists(), host), REBOOTED);
  });
  await t.step("a record from before histories (no os): a reboot only if proven (F1)", () => {
    const { os: _os, ...older } = theirs;
    const booted = Date.parse("2026-12-02T12:00:00Z");
    const at = (registered_at: string, activity_at: string | null = null) => ({
      ...older,
      registered_at,
      activity_at,
    });
    const clone = { ...host, pastBoots: history("B1"), bootStartedMs: () => booted };
    // Written since this boot began: a clone's older roster, still running there.
    const unknown = { liveness: "unknown", reason: "other-host" };
    assertEquals(run(at("2026-12-02T12:30:00Z"), { kind: "gone" }, clone), unknown);
    assertEquals(
      run(at("2026-12-02T11:00:00Z", "2026-12-02T12:30:00Z"), { kind: "gone" }, clone),
      unknown,
    );
    // Written before this boot began: this machine's past, its sessions restorable.
    assertEquals(run(at("2026-12-02T11:00:00Z"), exists(), clone), REBOOTED);
    // In this machine's history: rebooted, if written before this boot began.
    const ran = { ...clone, pastBoots: history("B0", "B1") };
    assertEquals(run(at("2026-12-02T11:00:00Z"), exists(), ran), REBOOTED);
    assertEquals(run(at("2026-12-02T12:30:00Z"), { kind: "gone" }, ran), unknown);
    // Neither time nor boot time known: unproven.
    assertEquals(run({ ...older, registered_at: null }, { kind: "gone" }, clone), unknown);
    // Not a record (a lock owner, a plan's session: os-less by design): as before.
    assertEquals(run(older, exists(), clone), REBOOTED);
    const noBoot = { ...clone, bootStartedMs: () => null };
    assertEquals(run(at("2026-12-02T11:00:00Z"), { kind: "gone" }, noBoot), unknown);
  });
  await t.step("written since this boot began: never this machine's past, history or not", () => {
    // A disk copied from a running machine: its history holds that machine's live boot B0,
    // whose sessions go on writing their records in the shared home.
    const booted = Date.parse("2026-12-02T12:00:00Z");
    const copy = { ...host, pastBoots: history("B0", "B1"), bootStartedMs: () => booted };
    const unknown = { liveness: "unknown", reason: "other-host" };
    const at = (registered_at: string, activity_at: string | null = null) => ({
      ...theirs,
      registered_at,
      activity_at,
    });
    assertEquals(run(at("2026-12-02T12:30:00Z"), { kind: "gone" }, copy), unknown);
    assertEquals(
      run(at("2026-12-02T11:00:00Z", "2026-12-02T12:00:00Z"), { kind: "gone" }, copy),
      unknown,
    );
    // Written before it: this machine's past, restorable.
    assertEquals(run(at("2026-12-02T11:59:59Z"), exists(), copy), REBOOTED);
    // The boot's start not known: the history decides, as before.
    assertEquals(
      run(at("2026-12-02T12:30:00Z"), exists(), { ...copy, bootStartedMs: () => null }),
      REBOOTED,
    );
  });
  await t.step("the boot's start is read only for a record of another boot, written when", () => {
    let asked = 0;
    const counting = {
      ...host,
      pastBoots: history("B0", "B1"),
      bootStartedMs: () => (asked++, 0),
    };
    const { os: _os, ...older } = theirs;
    run({ ...theirs, registered_at: null }, exists(), counting);
    run({ ...theirs, boot_id: "B1", registered_at: "2026-12-02T11:00:00Z" }, exists(), counting);
    run(older, exists(), counting);
    run({ ...older, registered_at: "2026-12-02T11:00:00Z", boot_id: "B1" }, exists(), counting);
    assertEquals(asked, 0);
    run({ ...older, registered_at: "2026-12-02T11:00:00Z", boot_id: "B9" }, exists(), counting);
    run({ ...theirs, registered_at: "2026-12-02T11:00:00Z" }, exists(), counting);
    assertEquals(asked, 2);
  });
});
