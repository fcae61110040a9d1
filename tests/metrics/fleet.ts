/**
 * A host's store and ledger built for real, as hooks and a restore engine build them: live
 * sessions (real sleeping processes), a dead one (killed and reaped), a malformed file, and
 * continuation keys in every state the commands can leave them in. The metrics tests check
 * what roster reports against what this built.
 */
import { hostDir, roster, rosterJson, type Sleeper, spawnSleeper, writeJson } from "../helpers.ts";
import { FACTS } from "../continuation/fixtures.ts";
import type { Row } from "../../src/registry/mod.ts";

/** An agent name that needs every escape of the exposition format. */
export const ODD_AGENT = 'odd "agent" \\ with\na newline';

export interface Fleet extends AsyncDisposable {
  home: string;
  /** The live sessions' rows (from `list --json`), each a running sleeper. */
  live: Row[];
  deadPid: number;
  malformedPid: number;
  /** Ends the live session of `pid`: its process is killed and reaped. */
  end(pid: number): Promise<void>;
  /** The expected `roster_sessions` samples: agent/liveness/reason -> count. */
  sessions: { agent: string; liveness: string; reason: string; count: number }[];
}

const ok = (r: { code: number; stderr: string }, what: string, codes = [0]) => {
  if (!codes.includes(r.code)) throw new Error(`${what} exited ${r.code}: ${r.stderr}`);
};

/** Builds the fleet host under `home`; the session cwd is `cwd`. Dispose to end its processes. */
export async function buildFleet(home: string, cwd: string): Promise<Fleet> {
  const sleepers: Sleeper[] = [];
  const dispose = async () => {
    for (const s of sleepers) await s.kill();
  };
  try {
    const register = async (agent: string, sessionId: string) => {
      const s = spawnSleeper();
      sleepers.push(s);
      ok(
        await roster([
          "register",
          "--pid",
          String(s.pid),
          "--agent",
          agent,
          "--session-id",
          sessionId,
          "--home",
          home,
          "--quiet",
        ], { cwd }),
        "register",
      );
      return s;
    };
    await register("claude", "c1");
    await register("claude", "c2");
    await register("codex", "x1");
    await register(ODD_AGENT, "o1");
    // Registered last: register removes dead records on its way, so nothing registers after.
    const dead = await register("codex", "x2");
    await dead.kill();

    const malformedPid = 4_100_000;
    Deno.writeTextFileSync(`${hostDir(home)}/${malformedPid}.json`, "{ not json");
    Deno.chmodSync(`${hostDir(home)}/${malformedPid}.json`, 0o600);

    // The ledger: one key in each state the commands leave.
    const ledger = `${home}/continuations`;
    const plan = async (key: string, extra: string[] = []) =>
      ok(
        await roster([
          "continuation-plan",
          "--key",
          key,
          "--session",
          String(dead.pid),
          "--spacing",
          "0s",
          "--home",
          home,
          ...extra,
        ]),
        `continuation-plan ${key}`,
      );
    const check = async (key: string, facts: Record<string, unknown>, code: number) =>
      ok(
        await roster(
          ["continuation-check", "--key", key, "--facts", "-", "--claim", "--home", home],
          { stdin: JSON.stringify(facts) },
        ),
        `continuation-check ${key}`,
        [code],
      );
    await plan("k-planned");
    await plan("k-released", ["--release"]);
    await plan("k-vetoed", ["--release"]);
    await plan("k-timeout", ["--release", "--deadline", "1s"]);
    await plan("k-dispatched", ["--release"]);
    // The facts of the dead session's plan: no pane, an empty transcript.
    const facts = { ...FACTS, session_id: "x2", pane_key: null, last_entry_id: null };
    await new Promise((r) => setTimeout(r, 1_100));
    await check("k-timeout", facts, 11); // past its deadline: skip process-end `timeout`
    writeJson(`${ledger}/config.json`, { mode: "on" });
    // Another session's facts: veto `identity`, written (a check with continuations off writes
    // nothing since the lifecycle work, so it cannot make this veto).
    await check("k-vetoed", { ...facts, session_id: "someone-else" }, 11);
    await check("k-dispatched", facts, 0);
    Deno.writeTextFileSync(`${ledger}/k-damaged.plan.json`, "{ damaged");
    Deno.chmodSync(`${ledger}/k-damaged.plan.json`, 0o600);
    Deno.writeTextFileSync(`${ledger}/hold`, "");

    const rows = await rosterJson<Row[]>(home, ["list", "--all"]);
    const live = rows.filter((r) => r.liveness === "alive");
    if (live.length !== 4) throw new Error(`expected 4 live rows: ${JSON.stringify(rows)}`);
    return {
      home,
      live,
      deadPid: dead.pid,
      malformedPid,
      end: async (pid) => await sleepers.find((s) => s.pid === pid)!.kill(),
      sessions: [
        { agent: "claude", liveness: "alive", reason: "running", count: 2 },
        { agent: "codex", liveness: "alive", reason: "running", count: 1 },
        { agent: "codex", liveness: "dead", reason: "exited", count: 1 },
        { agent: ODD_AGENT, liveness: "alive", reason: "running", count: 1 },
        { agent: "", liveness: "unknown", reason: "malformed", count: 1 },
      ],
      [Symbol.asyncDispose]: dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** The rest of what buildFleet leaves, as metric samples: name, labels, value. */
export const EXPECTED_LEDGER: [string, Record<string, string>, number][] = [
  ["roster_prunable_records", { kind: "dead" }, 1],
  ["roster_prunable_records", { kind: "malformed" }, 1],
  ["roster_continuation_keys", { state: "planned" }, 1],
  ["roster_continuation_keys", { state: "released" }, 1],
  ["roster_continuation_keys", { state: "skipped" }, 2],
  ["roster_continuation_keys", { state: "dispatched" }, 1],
  ["roster_continuation_keys", { state: "damaged" }, 1],
  ["roster_continuation_keys", { state: "claimed" }, 0],
  ["roster_continuation_keys", { state: "lost" }, 0],
  ["roster_continuation_dispatches_total", { outcome: "dispatched" }, 1],
  ["roster_continuation_dispatches_total", { outcome: "lost" }, 0],
  ["roster_continuation_vetoes_total", { reason: "identity" }, 1],
  ["roster_continuation_vetoes_total", { reason: "disabled" }, 0],
  ["roster_continuation_vetoes_total", { reason: "hold" }, 0],
  ["roster_continuation_skips_total", { reason: "timeout" }, 1],
  ["roster_continuation_skips_total", { reason: "ack" }, 0],
  ["roster_continuation_audit_events_total", { event: "claim" }, 1],
  ["roster_continuation_audit_events_total", { event: "skip" }, 2],
  ["roster_continuation_mode", { mode: "on" }, 1],
  ["roster_continuation_mode", { mode: "off" }, 0],
  ["roster_continuation_hold", {}, 1],
];
