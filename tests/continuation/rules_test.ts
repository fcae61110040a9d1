/** The pure decision: every rule in order, every verdict, each fact missing in turn. */
import { assert, assertEquals } from "../assert.ts";
import { FACTS as HARNESS_FACTS } from "./fixtures.ts";
import type { Plan } from "../../src/continuation/schema.ts";
import {
  decide,
  type Decision,
  FACT_NAMES,
  type Facts,
  mayWriteSkip,
  parseFacts,
  type Situation,
} from "../../src/continuation/rules.ts";
import { VERDICT_EXIT } from "../../src/exit.ts";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

const PLAN: Plan = {
  schema: 1,
  key: "k",
  token: "t1",
  state: "released",
  session: {
    session_pid: 4242,
    start_token: "99",
    boot_id: "b",
    host: "h",
    session_id: "S1",
    agent: "claude",
    runtime: "node",
    cwd: "/w",
    tmux_pane: "%3",
  },
  frozen_marker: "m1",
  interrupted_at: iso(NOW - 60_000),
  cause: "hard",
  tool_calls: [{ id: "c1", name: "Bash" }],
  not_before: null,
  deadline: iso(NOW + 3_600_000),
  spacing_ms: 5_000,
};

/** Facts under which the base situation dispatches. */
const FACTS: Required<Omit<Facts, "watchdog_token">> = { ...HARNESS_FACTS, pane_key: "%3" };

function base(over: Partial<Situation> = {}, facts: Partial<Facts> = {}): Situation {
  return {
    plan: PLAN,
    expectedToken: null,
    claimed: false,
    skip: null,
    now: NOW,
    lastDispatchMs: null,
    owner: "dead",
    lifecycle: null,
    mode: "on",
    hold: false,
    facts: { ...FACTS, ...facts },
    watchdog: null,
    ...over,
  };
}

const withoutFact = (name: keyof Facts): Facts => {
  const f: Facts = { ...FACTS };
  delete f[name];
  return f;
};

const skip = (cls: "process-end" | "veto", reason: string): Decision => ({
  kind: "skip",
  class: cls,
  reason,
});

Deno.test("decide: each rule and verdict", async (t) => {
  await t.step("the base situation dispatches", () => {
    assertEquals(decide(base()), { kind: "dispatch" });
  });

  await t.step("1. not acknowledged: skip process-end ack, before anything else", () => {
    assertEquals(decide(base({}, { ack_resumed: false })), skip("process-end", "ack"));
    // Even with no plan and a claim: rule 1 comes first.
    assertEquals(
      decide(base({ plan: null, claimed: true }, { ack_resumed: false })),
      skip("process-end", "ack"),
    );
  });

  await t.step("2. no plan, another token, not released: stop not-released", () => {
    const notReleased: Decision = { kind: "stop", reason: "not-released" };
    assertEquals(decide(base({ plan: null })), notReleased);
    assertEquals(decide(base({ plan: { ...PLAN, state: "planned" } })), notReleased);
    assertEquals(decide(base({ expectedToken: "t0" })), notReleased);
    assertEquals(decide(base({ expectedToken: "t1" })), { kind: "dispatch" });
    // Before the claim is even looked at.
    assertEquals(decide(base({ plan: null, claimed: true })), notReleased);
  });

  await t.step("2. a claim exists: stop claimed (before any skip file)", () => {
    assertEquals(decide(base({ claimed: true })), { kind: "stop", reason: "claimed" });
    assertEquals(
      decide(base({
        claimed: true,
        skip: { class: "veto", reason: "hold", token: "t1", pid: 9, at: iso(NOW) },
      })),
      { kind: "stop", reason: "claimed" },
    );
  });

  await t.step("2. a skip exists: vetoed with its reason; a damaged one fails closed", () => {
    assertEquals(
      decide(base({
        skip: { class: "process-end", reason: "timeout", token: "t1", pid: 9, at: iso(NOW) },
      })),
      { kind: "vetoed", reason: "timeout", class: "process-end" },
    );
    assertEquals(decide(base({ skip: { damaged: "not valid JSON" } })), {
      kind: "vetoed",
      reason: "skip-damaged",
      class: null,
    });
  });

  await t.step("2. past the deadline: skip process-end timeout", () => {
    const plan = { ...PLAN, deadline: iso(NOW - 1) };
    assertEquals(decide(base({ plan })), skip("process-end", "timeout"));
    assertEquals(decide(base({ plan: { ...PLAN, deadline: iso(NOW) } })), { kind: "dispatch" });
    assertEquals(decide(base({ plan: { ...PLAN, deadline: null } })), { kind: "dispatch" });
  });

  await t.step("2. before not_before: wait until then", () => {
    const plan = { ...PLAN, not_before: iso(NOW + 30_000) };
    assertEquals(decide(base({ plan })), {
      kind: "wait",
      until: NOW + 30_000,
      reason: "not-before",
    });
    assertEquals(decide(base({ plan: { ...PLAN, not_before: iso(NOW) } })), { kind: "dispatch" });
  });

  await t.step("2. within spacing of the last dispatch: wait until then", () => {
    assertEquals(decide(base({ lastDispatchMs: NOW - 2_000 })), {
      kind: "wait",
      until: NOW + 3_000,
      reason: "spacing",
    });
    assertEquals(decide(base({ lastDispatchMs: NOW - 5_000 })), { kind: "dispatch" });
    // A last dispatch in the future (clock stepped back) counts as now, not as forever.
    assertEquals(decide(base({ lastDispatchMs: NOW + 86_400_000 })), {
      kind: "wait",
      until: NOW + 5_000,
      reason: "spacing",
    });
    assertEquals(
      decide(base({ lastDispatchMs: NOW, plan: { ...PLAN, spacing_ms: 0 } })),
      { kind: "dispatch" },
    );
  });

  await t.step("the order inside rule 2: timeout before not_before before spacing", () => {
    const plan = { ...PLAN, deadline: iso(NOW - 1), not_before: iso(NOW + 1) };
    assertEquals(decide(base({ plan, lastDispatchMs: NOW })), skip("process-end", "timeout"));
    const waiting = { ...PLAN, not_before: iso(NOW + 1) };
    assertEquals(decide(base({ plan: waiting, lastDispatchMs: NOW })).kind, "wait");
    assertEquals(
      (decide(base({ plan: waiting, lastDispatchMs: NOW })) as { reason: string }).reason,
      "not-before",
    );
  });

  await t.step("3. owner alive: stop owner-alive; unknown or unjudged: skip veto", () => {
    assertEquals(decide(base({ owner: "alive" })), { kind: "stop", reason: "owner-alive" });
    assertEquals(decide(base({ owner: "unknown" })), skip("veto", "owner-unknown"));
    assertEquals(decide(base({ owner: null })), skip("veto", "owner-unknown"));
    // Rule 2 still comes first.
    assertEquals(decide(base({ owner: "alive", claimed: true })).kind, "stop");
    assertEquals(
      (decide(base({ owner: "alive", claimed: true })) as { reason: string }).reason,
      "claimed",
    );
  });

  await t.step("3. parked: stop parked, whatever the ledger and the owner say", () => {
    const parked = { lifecycle: { state: "parked" as const } };
    assertEquals(decide(base(parked)), { kind: "stop", reason: "parked" });
    assertEquals(decide(base({ ...parked, owner: "alive" })), { kind: "stop", reason: "parked" });
    assertEquals(decide(base({ ...parked, mode: "off" })), { kind: "stop", reason: "parked" });
    // Neither parked nor resumed: as without a record.
    assertEquals(decide(base({ lifecycle: { state: "none" } })), { kind: "dispatch" });
    // Rule 2 still comes first: a claimed key is claimed.
    assertEquals(decide(base({ ...parked, claimed: true })), { kind: "stop", reason: "claimed" });
  });

  await t.step("3. resumed: only through a running successor, by its identity", () => {
    const resumed = (running: boolean, session_id = "S9", tmux_pane: string | null = "%7") => ({
      lifecycle: { state: "resumed" as const, successor: { running, session_id, tmux_pane } },
    });
    assertEquals(decide(base(resumed(false))), { kind: "stop", reason: "resumed" });
    // The predecessor's own identity (the plan's) no longer matches: the continue goes to the
    // successor, never to the predecessor's pane directly.
    assertEquals(decide(base(resumed(true))), skip("veto", "identity"));
    assertEquals(
      decide(base(resumed(true), { session_id: "S9", pane_key: "%7" })),
      { kind: "dispatch" },
    );
    assertEquals(decide(base(resumed(true, "S1", "%3"))), { kind: "dispatch" });
    assertEquals(
      decide(base(resumed(true, "S9", null), { session_id: "S9", pane_key: "%3" })),
      skip("veto", "identity"),
    );
  });

  await t.step("4. mode off: skip veto disabled; hold: skip veto hold", () => {
    assertEquals(decide(base({ mode: "off" })), skip("veto", "disabled"));
    assertEquals(decide(base({ hold: true })), skip("veto", "hold"));
    assertEquals(decide(base({ mode: "off", hold: true })), skip("veto", "disabled"));
    // The owner rule comes before the mode.
    assertEquals(decide(base({ mode: "off", owner: "alive" })).kind, "stop");
  });

  await t.step("4. dry-run: disabled, carrying the verdict mode on would give", () => {
    assertEquals(decide(base({ mode: "dry-run" })), {
      ...skip("veto", "disabled"),
      would: { kind: "dispatch" },
    });
    assertEquals(decide(base({ mode: "dry-run", hold: true })), {
      ...skip("veto", "disabled"),
      would: skip("veto", "hold"),
    });
    assertEquals(decide(base({ mode: "dry-run" }, { user_active: true })), {
      ...skip("veto", "disabled"),
      would: skip("veto", "user-active"),
    });
  });

  await t.step("5. identity: session_id or pane_key differ", () => {
    assertEquals(decide(base({}, { session_id: "S2" })), skip("veto", "identity"));
    assertEquals(decide(base({}, { pane_key: "%4" })), skip("veto", "identity"));
    assertEquals(decide(base({}, { session_id: null })), skip("veto", "identity"));
    // A plan with no pane matches a harness that reports none, and nothing else.
    const noPane = { ...PLAN, session: { ...PLAN.session, tmux_pane: null } };
    assertEquals(decide(base({ plan: noPane }, { pane_key: null })), { kind: "dispatch" });
    assertEquals(decide(base({ plan: noPane })), skip("veto", "identity"));
  });

  await t.step("6. a new transcript entry: skip veto new-entry", () => {
    assertEquals(decide(base({}, { last_entry_id: "m2" })), skip("veto", "new-entry"));
    assertEquals(decide(base({}, { last_entry_id: null })), skip("veto", "new-entry"));
    // No frozen marker in the plan: only an empty transcript matches it.
    const noMarker = { ...PLAN, frozen_marker: null };
    assertEquals(decide(base({ plan: noMarker })), skip("veto", "new-entry"));
    assertEquals(decide(base({ plan: noMarker }, { last_entry_id: null })), {
      kind: "dispatch",
    });
  });

  await t.step("7. a person is there: skip veto user-active", () => {
    for (
      const f of [
        { user_active: true },
        { editor_text: "half a sentence" },
        { prompt_open: true },
      ]
    ) {
      assertEquals(decide(base({}, f)), skip("veto", "user-active"), JSON.stringify(f));
    }
    assertEquals(decide(base({}, { editor_text: " \n\t " })), { kind: "dispatch" });
    assertEquals(decide(base({}, { editor_text: null })), { kind: "dispatch" });
    // user-active before busy.
    assertEquals(decide(base({}, { user_active: true, idle: false })), skip("veto", "user-active"));
  });

  await t.step("7. busy: not idle or messages pending", () => {
    assertEquals(decide(base({}, { idle: false })), skip("veto", "busy"));
    assertEquals(decide(base({}, { pending_messages: 2 })), skip("veto", "busy"));
    assertEquals(decide(base({}, { pending_messages: true })), skip("veto", "busy"));
    assertEquals(decide(base({}, { pending_messages: false })), { kind: "dispatch" });
  });

  await t.step("8. a live watchdog: skip veto watchdog; unknown fails closed", () => {
    assertEquals(
      decide(base({ watchdog: "alive" }, { watchdog_pid: 77 })),
      skip("veto", "watchdog"),
    );
    assertEquals(
      decide(base({ watchdog: "unknown" }, { watchdog_pid: 77 })),
      skip("veto", "watchdog-unknown"),
    );
    assertEquals(
      decide(base({ watchdog: null }, { watchdog_pid: 77 })),
      skip("veto", "watchdog-unknown"),
    );
    assertEquals(decide(base({ watchdog: "dead" }, { watchdog_pid: 77 })), { kind: "dispatch" });
    // null: the harness says there is none; the judged value is not looked at.
    assertEquals(decide(base({ watchdog: "alive" }, { watchdog_pid: null })), {
      kind: "dispatch",
    });
  });

  await t.step("exit codes", () => {
    assertEquals(VERDICT_EXIT, { dispatch: 0, wait: 10, skip: 11, stop: 12, vetoed: 13 });
  });
});

Deno.test("decide: each fact missing in turn vetoes fact-missing:<name>", async (t) => {
  // watchdog_token is optional: it only refines the judgement of watchdog_pid.
  for (const name of FACT_NAMES.filter((n) => n !== "watchdog_token")) {
    await t.step(name, () => {
      const s = base();
      s.facts = withoutFact(name);
      assertEquals(decide(s), skip("veto", `fact-missing:${name}`));
    });
  }
  await t.step("no facts at all: the first rule's fact", () => {
    assertEquals(decide(base({ facts: {} })), skip("veto", "fact-missing:ack_resumed"));
  });
  await t.step("a fact is needed only by its rule: an earlier verdict wins", () => {
    const s = base({ claimed: true });
    s.facts = withoutFact("watchdog_pid");
    assertEquals(decide(s), { kind: "stop", reason: "claimed" });
    const held = base({ hold: true });
    held.facts = withoutFact("session_id");
    assertEquals(decide(held), skip("veto", "hold"));
  });
  await t.step("every fact is needed by some rule", () => {
    assertEquals(FACT_NAMES.length, 11);
  });
});

Deno.test("mayWriteSkip: only a released plan, still the one judged, is skipped for good", async (t) => {
  await t.step("a released plan: yes, with no token expected or the same token", () => {
    assertEquals(mayWriteSkip(PLAN, null), true);
    assertEquals(mayWriteSkip(PLAN, "t1"), true);
  });
  await t.step("no plan, a plan not released, or another plan's token: no", () => {
    assertEquals(mayWriteSkip(null, null), false);
    assertEquals(mayWriteSkip({ ...PLAN, state: "planned" }, null), false);
    assertEquals(mayWriteSkip({ ...PLAN, state: "planned" }, "t1"), false);
    assertEquals(mayWriteSkip(PLAN, "t0"), false);
  });
  await t.step(
    "the rule-1 skip of a planned plan is still the answer: only the write differs",
    () => {
      const s = base({ plan: { ...PLAN, state: "planned" } }, { ack_resumed: false });
      assertEquals(decide(s), skip("process-end", "ack"));
      assertEquals(mayWriteSkip(s.plan, s.expectedToken), false);
    },
  );
});

Deno.test("parseFacts", async (t) => {
  await t.step("accepts the full set and ignores unknown keys", () => {
    const r = parseFacts({ ...FACTS, extra: 1 });
    assert(r.ok);
    assertEquals(r.value, FACTS);
  });
  await t.step("absent stays absent; null is a value where allowed", () => {
    const r = parseFacts({ session_id: null, watchdog_pid: null });
    assert(r.ok);
    assertEquals(r.value, { session_id: null, watchdog_pid: null });
  });
  const bad: [unknown, RegExp][] = [
    [[], /expected a JSON object/],
    [null, /expected a JSON object/],
    ["x", /expected a JSON object/],
    [{ ack_resumed: "yes" }, /ack_resumed must be a boolean, got "yes"/],
    [{ idle: null }, /idle must be a boolean/],
    [{ pending_messages: -1 }, /pending_messages must be a boolean or a non-negative integer/],
    [{ pending_messages: 1.5 }, /pending_messages/],
    [{ watchdog_pid: 0 }, /watchdog_pid must be a process id or null/],
    [{ watchdog_pid: "12" }, /watchdog_pid/],
    [{ session_id: 7 }, /session_id must be a string or null/],
  ];
  for (const [value, re] of bad) {
    await t.step(`rejects ${JSON.stringify(value)}`, () => {
      const r = parseFacts(value);
      assert(!r.ok, "expected a problem");
      assert(re.test(r.problem), r.problem);
    });
  }
});
