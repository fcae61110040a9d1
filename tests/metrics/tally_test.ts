/** The metrics' pure parts: the text format's escaping and naming, and what each input counts. */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import {
  escapeHelp,
  escapeLabelValue,
  type Family,
  formatValue,
  renderText,
  withLabels,
} from "../../src/metrics/exposition.ts";
import { type LedgerSummary, MetricsTally, OWN_LABELS } from "../../src/metrics/tally.ts";
import { tallyLedger } from "../../src/metrics/collect.ts";
import type { Row } from "../../src/registry/row.ts";
import { NO_LIFECYCLE } from "../../src/registry/record.ts";
import { parseExposition, valueOf } from "./servers.ts";

const SCRAPE = { atMs: 1_700_000_000_000, durationMs: 12, version: "9.9.9" };
const OFF: LedgerSummary = { mode: "off", hold: false };

/** Asserts that `fn` throws an error whose message includes `text`. */
function throwsWith(fn: () => unknown, text: string) {
  const err = assertThrows(fn);
  assert(err.message.includes(text), err.message);
}

function row(over: Partial<Row>): Row {
  return {
    schema: 1,
    session_pid: 100,
    pid_source: "flag",
    pid_verified: false,
    hosted: false,
    start_token: "1",
    process_started_at: "2026-01-02T03:04:05.500Z",
    boot_id: null,
    machine_id: null,
    pid_ns: null,
    host: "h",
    agent: "claude",
    runtime: null,
    session_id: "S",
    cwd: "/w",
    tmux_pane: null,
    registered_at: "2026-01-02T03:04:06Z",
    registrar: null,
    ...NO_LIFECYCLE,
    os: null,
    liveness: "alive",
    reason: "running",
    path: "/p/100.json",
    malformed: false,
    detail: null,
    ...over,
  };
}

const text = (t: MetricsTally, ledger = OFF) => renderText(t.families(ledger, SCRAPE));
const samples = (t: MetricsTally, ledger = OFF) => parseExposition(text(t, ledger));

Deno.test("exposition: escaping, values and names", async (t) => {
  await t.step("label values escape backslash, quote and line feed, nothing else", () => {
    assertEquals(escapeLabelValue('a\\b"c\nd\te'), 'a\\\\b\\"c\\nd\te');
  });
  await t.step("HELP escapes backslash and line feed, not quotes", () => {
    assertEquals(escapeHelp('x\\y\n"z"'), 'x\\\\y\\n"z"');
  });
  await t.step("values as Prometheus spells them", () => {
    assertEquals([NaN, Infinity, -Infinity, 0, 1.5, 1e21].map(formatValue), [
      "NaN",
      "+Inf",
      "-Inf",
      "0",
      "1.5",
      "1e+21",
    ]);
  });
  await t.step("a bad name, a counter without _total or a reserved label is refused", () => {
    const f = (over: Partial<Family>): Family => ({
      name: "roster_x",
      type: "gauge",
      help: "h",
      samples: [],
      ...over,
    });
    throwsWith(() => renderText([f({ name: "x" })]), "Invalid metric name");
    throwsWith(() => renderText([f({ name: "roster_x-y" })]), "Invalid metric name");
    throwsWith(() => renderText([f({ type: "counter" })]), "_total");
    throwsWith(
      () => renderText([f({ samples: [{ labels: { __name__: "a" }, value: 1 }] })]),
      "Invalid label name",
    );
    throwsWith(() => renderText([f({}), f({})]), "twice");
  });
  await t.step("a hostile agent name stays inside its label", () => {
    const tally = new MetricsTally();
    const agent = 'x"} 1\nroster_forged 1\n#';
    tally.addRow(row({ agent }));
    const s = samples(tally);
    assertEquals(s.filter((x) => x.name === "roster_forged"), []);
    assertEquals(valueOf(s, "roster_sessions", { agent }), 1);
  });
});

Deno.test("tally: rows", async (t) => {
  await t.step("sessions by agent, liveness and reason; prunable dead and malformed", () => {
    const tally = new MetricsTally();
    tally.addRow(row({ session_pid: 1 }));
    tally.addRow(row({ session_pid: 2 }));
    tally.addRow(row({ session_pid: 3, agent: "codex", liveness: "dead", reason: "exited" }));
    tally.addRow(row({ session_pid: 4, agent: "codex", liveness: "dead", reason: "zombie" }));
    tally.addRow(row({ agent: null, liveness: "unknown", reason: "malformed", malformed: true }));
    tally.addRow(row({ liveness: "unknown", reason: "other-host" }));
    const s = samples(tally);
    assertEquals(valueOf(s, "roster_sessions", { agent: "claude", liveness: "alive" }), 2);
    assertEquals(valueOf(s, "roster_sessions", { agent: "codex", reason: "exited" }), 1);
    assertEquals(valueOf(s, "roster_sessions", { agent: "", reason: "malformed" }), 1);
    assertEquals(valueOf(s, "roster_sessions", { reason: "other-host" }), 1);
    assertEquals(valueOf(s, "roster_prunable_records", { kind: "dead" }), 2);
    assertEquals(valueOf(s, "roster_prunable_records", { kind: "malformed" }), 1);
  });
  await t.step("live sessions by agent and activity; dead ones not counted", () => {
    const tally = new MetricsTally();
    tally.addRow(row({ session_pid: 1, activity: "working" }));
    tally.addRow(row({ session_pid: 2, activity: "working" }));
    tally.addRow(row({ session_pid: 3, activity: "idle" }));
    tally.addRow(row({ session_pid: 4 }));
    tally.addRow(row({ session_pid: 5, agent: "codex", liveness: "unknown", reason: "hosted" }));
    tally.addRow(row({ session_pid: 6, liveness: "dead", reason: "exited", activity: "waiting" }));
    const s = samples(tally).filter((x) => x.name === "roster_session_activity");
    assertEquals(s.map((x) => [x.labels, x.value]), [
      [{ agent: "claude", activity: "idle" }, 1],
      [{ agent: "claude", activity: "none" }, 1],
      [{ agent: "claude", activity: "working" }, 2],
      [{ agent: "codex", activity: "none" }, 1],
    ]);
  });
  await t.step("start times: alive rows only, each agent's oldest, no pid label", () => {
    const tally = new MetricsTally();
    tally.addRow(row({ session_pid: 20 }));
    tally.addRow(row({ session_pid: 3, process_started_at: null, reason: "pid-only" }));
    tally.addRow(row({ session_pid: 4, liveness: "unknown", reason: "unverifiable" }));
    tally.addRow(row({ session_pid: 5, agent: "codex", process_started_at: null }));
    const starts = samples(tally).filter((x) => x.name === "roster_session_start_time_seconds");
    assertEquals(starts, [
      {
        name: "roster_session_start_time_seconds",
        labels: { agent: "claude" },
        value: Date.parse("2026-01-02T03:04:05.500Z") / 1000,
      },
      {
        name: "roster_session_start_time_seconds",
        labels: { agent: "codex" },
        value: Date.parse("2026-01-02T03:04:06Z") / 1000,
      },
    ]);
  });
  await t.step("per session, by pid, with the registration as fallback, when asked for", () => {
    const tally = new MetricsTally({ sessionLabels: true });
    tally.addRow(row({ session_pid: 20 }));
    tally.addRow(row({ session_pid: 3, process_started_at: null, reason: "pid-only" }));
    tally.addRow(row({ session_id: null, cwd: "/a b" }));
    const starts = samples(tally).filter((x) => x.name === "roster_session_start_time_seconds");
    assertEquals(starts.map((s) => [s.labels, s.value]), [
      [
        { agent: "claude", pid: "3", session_id: "S", cwd: "/w" },
        Date.parse("2026-01-02T03:04:06Z") / 1000,
      ],
      [
        { agent: "claude", pid: "20", session_id: "S", cwd: "/w" },
        Date.parse("2026-01-02T03:04:05.500Z") / 1000,
      ],
      [
        { agent: "claude", pid: "100", session_id: "", cwd: "/a b" },
        Date.parse("2026-01-02T03:04:05.500Z") / 1000,
      ],
    ]);
  });
  await t.step("a live session's two records (both layouts) are one session, one series", () => {
    // Records are counted as records; the session, its activity and its start only once.
    const tally = new MetricsTally({ sessionLabels: true });
    tally.addRow(row({ session_pid: 7, activity: "working" }));
    tally.addRow(row({ session_pid: 7, activity: "working" }));
    tally.addRow(row({ session_pid: 8, activity: "working" }));
    const s = samples(tally);
    assertEquals(valueOf(s, "roster_sessions", { agent: "claude", liveness: "alive" }), 3);
    assertEquals(valueOf(s, "roster_session_activity", { activity: "working" }), 2);
    const starts = s.filter((x) => x.name === "roster_session_start_time_seconds");
    assertEquals(starts.map((x) => x.labels.pid), ["7", "8"]);
  });
  await t.step("every documented label value is a series from the start, at 0", () => {
    const s = samples(new MetricsTally());
    for (const event of ["claim", "skip", "lock-reclaim", "other", "unreadable"]) {
      assertEquals(valueOf(s, "roster_continuation_audit_events_total", { event }), 0, event);
    }
    for (const kind of ["dead", "malformed"]) {
      assertEquals(valueOf(s, "roster_prunable_records", { kind }), 0, kind);
    }
    for (const outcome of ["dispatched", "lost", "pending"]) {
      assertEquals(valueOf(s, "roster_continuation_dispatches_total", { outcome }), 0, outcome);
    }
  });
  await t.step("the scrape's time, duration and version", () => {
    const s = samples(new MetricsTally());
    assertEquals(valueOf(s, "roster_scrape_timestamp_seconds"), 1_700_000_000);
    assertEquals(valueOf(s, "roster_scrape_duration_seconds"), 0.012);
    assertEquals(valueOf(s, "roster_build_info", { version: "9.9.9" }), 1);
  });
});

Deno.test("tally: ledger keys and audit lines", async (t) => {
  await t.step("each state, dispatch outcome, skip and veto reason", () => {
    const tally = new MetricsTally();
    tally.addKey({ state: "planned" });
    tally.addKey({ state: "dispatched" });
    tally.addKey({ state: "lost" });
    tally.addKey({ state: "claimed" });
    tally.addKey({ state: "skipped", skip: { class: "veto", reason: "hold" } });
    tally.addKey({ state: "skipped", skip: { class: "veto", reason: "fact-missing:idle" } });
    tally.addKey({ state: "skipped", skip: { class: "process-end", reason: "timeout" } });
    tally.addKey({ state: "skipped", skip: { class: null, reason: "skip-damaged" } });
    tally.addKey({ state: "skipped", skip: { class: "veto", reason: "a-new-reason" } });
    const s = samples(tally, { mode: "dry-run", hold: true });
    assertEquals(valueOf(s, "roster_continuation_keys", { state: "skipped" }), 5);
    assertEquals(valueOf(s, "roster_continuation_keys", { state: "released" }), 0);
    for (const [outcome, n] of [["dispatched", 1], ["lost", 1], ["pending", 1]] as const) {
      assertEquals(valueOf(s, "roster_continuation_dispatches_total", { outcome }), n);
    }
    assertEquals(valueOf(s, "roster_continuation_vetoes_total", { reason: "hold" }), 1);
    assertEquals(valueOf(s, "roster_continuation_vetoes_total", { reason: "busy" }), 0);
    assertEquals(
      valueOf(s, "roster_continuation_vetoes_total", { reason: "fact-missing:idle" }),
      1,
    );
    assertEquals(valueOf(s, "roster_continuation_vetoes_total", { reason: "skip-damaged" }), 1);
    assertEquals(valueOf(s, "roster_continuation_vetoes_total", { reason: "a-new-reason" }), 1);
    assertEquals(valueOf(s, "roster_continuation_skips_total", { reason: "timeout" }), 1);
    assertEquals(valueOf(s, "roster_continuation_mode", { mode: "dry-run" }), 1);
    assertEquals(valueOf(s, "roster_continuation_mode", { mode: "on" }), 0);
    assertEquals(valueOf(s, "roster_continuation_hold"), 1);
  });
  await t.step("audit lines by event; torn, foreign and blank ones", () => {
    const tally = new MetricsTally();
    for (
      const line of [
        '{"event":"claim"}',
        '{"event":"skip"}',
        '{"event":"lock-reclaim"}',
        '{"event":"surprise"}',
        '{"event":"cla',
        "",
        "null",
      ]
    ) tally.addAuditLine(line);
    tally.addAuditLine(null);
    const s = samples(tally);
    const got = Object.fromEntries(
      s.filter((x) => x.name === "roster_continuation_audit_events_total")
        .map((x) => [x.labels.event, x.value]),
    );
    assertEquals(got, { claim: 1, skip: 1, "lock-reclaim": 1, other: 1, unreadable: 3 });
  });
});

Deno.test("collect: the ledger read from disk", async (t) => {
  await using dir = await tempDir();
  const put = (name: string, text: string) => {
    Deno.writeTextFileSync(`${dir.path}/${name}`, text);
    Deno.chmodSync(`${dir.path}/${name}`, 0o600);
  };
  await t.step("a missing ledger is empty and off", () => {
    const tally = new MetricsTally();
    assertEquals(tallyLedger(`${dir.path}/none`, tally), { mode: "off", hold: false });
  });
  await t.step("a key with a claim counts once, by its claim; odd names are ignored", () => {
    put("k1.plan.json", "{}");
    put("k1.claim", "{}");
    put("k1.skip", "{}");
    put("k1.outcome", JSON.stringify({ outcome: "lost" }));
    put("k2.skip", "not json"); // a damaged skip vetoes
    put(".hidden.claim", "{}"); // not a key: starts with a dot
    put("audit.ndjson", '{"event":"claim"}\n' + "x".repeat(200_000) + '\n{"event":"skip"}');
    const tally = new MetricsTally();
    tallyLedger(dir.path, tally);
    const s = samples(tally);
    assertEquals(valueOf(s, "roster_continuation_keys", { state: "lost" }), 1);
    assertEquals(valueOf(s, "roster_continuation_keys", { state: "skipped" }), 1);
    assertEquals(valueOf(s, "roster_continuation_keys", { state: "damaged" }), 0);
    assertEquals(valueOf(s, "roster_continuation_vetoes_total", { reason: "skip-damaged" }), 1);
    // The overlong line is one unreadable line, not buffered whole; the last has no newline.
    assertEquals(valueOf(s, "roster_continuation_audit_events_total", { event: "claim" }), 1);
    assertEquals(valueOf(s, "roster_continuation_audit_events_total", { event: "skip" }), 1);
    assertEquals(
      valueOf(s, "roster_continuation_audit_events_total", { event: "unreadable" }),
      1,
    );
  });
  await t.step("an audit log that is a FIFO is refused, not waited on", () => {
    Deno.removeSync(`${dir.path}/audit.ndjson`);
    const made = new Deno.Command("mkfifo", { args: [`${dir.path}/audit.ndjson`] }).outputSync();
    assert(made.success);
    throwsWith(() => tallyLedger(dir.path, new MetricsTally()), "not a regular file");
  });
});

Deno.test("labels added to every sample (--label)", async (t) => {
  const full = () => {
    const tally = new MetricsTally({ sessionLabels: true });
    tally.addRow(row({}));
    tally.addRow(row({ liveness: "dead", reason: "exited" }));
    tally.addKey({ state: "skipped", skip: { class: "veto", reason: "hold" } });
    tally.addAuditLine('{"event":"claim"}');
    return tally.families(OFF, SCRAPE);
  };
  await t.step("OWN_LABELS names every label roster itself writes", () => {
    const used = new Set(full().flatMap((f) => f.samples.flatMap((s) => Object.keys(s.labels))));
    assertEquals([...used].filter((n) => !OWN_LABELS.includes(n)), []);
  });
  await t.step("each sample gets them, in text and in JSON alike", () => {
    const families = withLabels(full(), { user: "ci", team: 'a"b' });
    for (const f of families) {
      for (const s of f.samples) assertEquals([s.labels.user, s.labels.team], ["ci", 'a"b']);
    }
    const parsed = parseExposition(renderText(families));
    assertEquals(parsed.filter((s) => s.labels.user !== "ci" || s.labels.team !== 'a"b'), []);
  });
  await t.step("a label a sample already has is refused", () => {
    throwsWith(() => withLabels(full(), { agent: "x" }), "has its own label agent");
  });
});
