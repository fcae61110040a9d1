/**
 * The check flow in-process: what each verdict writes (and does not), the claim pass under a
 * held lock, and the recovery of a claim left without its record. The CLI's view of the same
 * is e2e_test.ts; the crash drills are there too.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { spawnSleeper, tempDir, writeJson } from "../helpers.ts";
import { FACTS, PANE, PLAN, testJudge } from "./fixtures.ts";
import { readAudit } from "../../src/continuation/audit.ts";
import {
  checkContinuation,
  type CheckRequest,
  needsClaimPass,
} from "../../src/continuation/check.ts";
import { createClaim, ensureLedger, writePlan } from "../../src/continuation/ledger.ts";
import { acquireDispatchLock } from "../../src/continuation/lock.ts";
import type { Decision, Facts } from "../../src/continuation/rules.ts";
import type { Plan } from "../../src/continuation/schema.ts";

/** Every file's name and bytes, for "nothing was written"; `.lock` (an empty flock) aside. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of Deno.readDirSync(dir)) {
    if (e.name === ".lock" || e.name === ".lock.gate") continue;
    out[e.name] = e.isFile ? Deno.readTextFileSync(`${dir}/${e.name}`) : "(not a file)";
  }
  return out;
}

const read = (path: string) => JSON.parse(Deno.readTextFileSync(path));

Deno.test("needsClaimPass: only a dispatch or a skip of a released plan", () => {
  const plan = { state: "released", token: "t" } as Plan;
  const planned = { ...plan, state: "planned" } as Plan;
  const skip: Decision = { kind: "skip", class: "veto", reason: "hold" };
  assertEquals(needsClaimPass({ kind: "dispatch" }, plan), true);
  assertEquals(needsClaimPass({ kind: "dispatch" }, null), false);
  assertEquals([needsClaimPass(skip, plan), needsClaimPass(skip, planned)], [true, false]);
  assertEquals(needsClaimPass(skip, null), false);
  const others: Decision[] = [
    { kind: "wait", until: 0, reason: "spacing" },
    { kind: "stop", reason: "claimed" },
    { kind: "vetoed", reason: "hold", class: "veto" },
  ];
  for (const v of others) assertEquals(needsClaimPass(v, plan), false, v.kind);
});

Deno.test("checkContinuation", async (t) => {
  await using tmp = await tempDir();
  const dir = ensureLedger(`${tmp.path}/l`);
  const judge = await testJudge();
  // The interrupted session: a real process, killed and reaped, named by its start token.
  const s = spawnSleeper();
  const probe = judge.probe(s.pid, true);
  await s.kill();
  const plan = (key: string): Plan => ({
    ...PLAN,
    key,
    token: `token-${key}`,
    session: {
      ...PLAN.session,
      session_pid: s.pid,
      start_token: probe.kind === "exists" ? probe.info.startToken : null,
      boot_id: judge.here.bootId,
      host: judge.here.host,
      tmux_pane: PANE,
    },
    frozen_marker: FACTS.last_entry_id,
  });
  const notes: string[] = [];
  const run = (key: string, claim: boolean, facts: Facts = FACTS) => {
    const req: CheckRequest = {
      dir,
      home: `${tmp.path}/home`,
      key,
      facts,
      judge,
      claim,
      note: (m) => notes.push(m),
    };
    return checkContinuation(req);
  };
  writeJson(`${dir}/config.json`, { mode: "on" });
  writePlan(dir, plan("k"));

  await t.step("without a claim: the verdict, and nothing written", async () => {
    const before = snapshot(dir);
    assertEquals(await run("k", false), { verdict: { kind: "dispatch" } });
    assertEquals(snapshot(dir), before);
  });

  await t.step("dry-run with a claim: what on would do, and nothing written", async () => {
    writeJson(`${dir}/config.json`, { mode: "dry-run" });
    const before = snapshot(dir);
    const r = await run("k", true);
    assertEquals(r.verdict, {
      kind: "skip",
      class: "veto",
      reason: "disabled",
      would: { kind: "dispatch" },
    });
    assertEquals(snapshot(dir), before);
    writeJson(`${dir}/config.json`, { mode: "on" });
  });

  await t.step("a live lock holder: wait locked, briefly; nothing written", async () => {
    const before = snapshot(dir);
    const held = await acquireDispatchLock(dir, judge, 0);
    assert("held" in held);
    const started = Date.now();
    const r = await run("k", true);
    held.held.release();
    assert(r.verdict.kind === "wait", JSON.stringify(r.verdict));
    assertEquals(r.verdict.reason, "locked");
    assert(Date.now() - started >= 450, "waited for the holder first");
    assert(r.verdict.until - Date.now() <= 1_000);
    assertEquals(snapshot(dir), before);
  });

  await t.step("a claim: the claim, its audit line, .last-dispatch and the outcome", async () => {
    const r = await run("k", true);
    assertEquals(r.verdict, { kind: "dispatch" });
    const id = r.claimed!.id;
    assertMatch(id, /^[0-9a-f]{24}$/);
    assert(r.claimed!.message.includes(`Continuation id: ${id}.`));
    const claim = read(`${dir}/k.claim`);
    assertEquals([claim.key, claim.token, claim.continuation_id, claim.pid], [
      "k",
      "token-k",
      id,
      Deno.pid,
    ]);
    const outcome = read(`${dir}/k.outcome`);
    assertEquals([outcome.outcome, outcome.continuation_id, outcome.at], [
      "dispatched",
      id,
      claim.at,
    ]);
    assertEquals(Date.parse(read(`${dir}/.last-dispatch`).at), Date.parse(claim.at));
    const lines = readAudit(dir).filter((l) => l.event === "claim");
    assertEquals(lines.map((l) => [l.key, l.continuation_id, l.recovered]), [["k", id, undefined]]);
  });

  await t.step("claimed: stop claimed, and a finished claim is left as it is", async () => {
    const before = snapshot(dir);
    assertEquals(await run("k", true), { verdict: { kind: "stop", reason: "claimed" } });
    assertEquals(snapshot(dir), before);
  });

  await t.step("a claim without audit line or outcome: completed, once", async () => {
    writePlan(dir, plan("k2"));
    const claim = {
      key: "k2",
      token: "token-k2",
      continuation_id: "c2",
      pid: 1,
      at: "2026-03-01T12:00:00.000Z",
    };
    assert(createClaim(dir, claim));
    for (let i = 0; i < 2; i++) {
      assertEquals(await run("k2", true), { verdict: { kind: "stop", reason: "claimed" } });
    }
    const lines = readAudit(dir).filter((l) => l.key === "k2");
    assertEquals(lines.map((l) => [l.event, l.continuation_id, l.recovered]), [
      ["claim", "c2", true],
    ]);
    const outcome = read(`${dir}/k2.outcome`);
    assertEquals([outcome.outcome, outcome.continuation_id, outcome.claim_pid, outcome.pid], [
      "lost",
      "c2",
      1,
      Deno.pid,
    ]);
  });

  await t.step("a skip of a released plan: final, with its audit line and outcome", async () => {
    writePlan(dir, plan("k3"));
    const r = await run("k3", true, { ...FACTS, ack_resumed: false });
    assertEquals(r.verdict, { kind: "skip", class: "process-end", reason: "ack" });
    const skip = read(`${dir}/k3.skip`);
    assertEquals([skip.class, skip.reason, skip.token], ["process-end", "ack", "token-k3"]);
    assertEquals(read(`${dir}/k3.outcome`).outcome, "skipped");
    assertEquals(readAudit(dir).filter((l) => l.key === "k3").map((l) => l.event), ["skip"]);
    assertEquals((await run("k3", true)).verdict, {
      kind: "vetoed",
      reason: "ack",
      class: "process-end",
    });
  });

  await t.step("a damaged plan: no plan, and a note that says why", async () => {
    Deno.writeTextFileSync(`${dir}/k4.plan.json`, "{");
    Deno.chmodSync(`${dir}/k4.plan.json`, 0o600);
    assertEquals(await run("k4", true), { verdict: { kind: "stop", reason: "not-released" } });
    assertEquals(notes, ["roster: note: the plan of k4 is damaged (not valid JSON)"]);
  });
});
