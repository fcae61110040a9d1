/**
 * What `roster metrics` reports, pure: rows, ledger keys and audit lines go in one at a time
 * (so the store is never held whole), metric families come out. Every name and label set is
 * decided here; docs/fleet.md says what each one means.
 */
import { COUNTED_STATES, type CountedState } from "../continuation/keys.ts";
import type { SkipClass } from "../continuation/schema.ts";
import { FACT_NAMES, type Mode } from "../continuation/rules.ts";
import type { Row } from "../registry/mod.ts";
import { parseTime } from "../time.ts";
import type { Family, Sample } from "./exposition.ts";

/** What a ledger key contributes: its state, and for a skipped one what its skip file says. */
interface LedgerKey {
  state: CountedState;
  /** For `skipped`: the skip's class and reason; class null when the skip file is damaged. */
  skip?: { class: SkipClass | null; reason: string };
}

/** The reasons `continuation-check` writes, each reported from the start (at 0) so that an
 * alert on its increase sees the first one. Others (a future reason) are added when seen. */
const SKIP_REASONS = ["ack", "timeout"];
const VETO_REASONS = [
  "owner-unknown",
  "disabled",
  "hold",
  "identity",
  "new-entry",
  "user-active",
  "busy",
  "watchdog",
  "watchdog-unknown",
  ...FACT_NAMES.map((n) => `fact-missing:${n}`),
  "skip-damaged",
];
const AUDIT_EVENTS = ["claim", "skip", "lock-reclaim"];
const MODES: readonly Mode[] = ["on", "off", "dry-run"];
const DISPATCH_OUTCOMES = { dispatched: "dispatched", lost: "lost", claimed: "pending" } as const;

/** Every label name these metrics use; `--label` may not add one of them. */
export const OWN_LABELS: readonly string[] = [
  "agent",
  "liveness",
  "reason",
  "pid",
  "session_id",
  "cwd",
  "kind",
  "state",
  "outcome",
  "event",
  "mode",
  "version",
  "activity",
];

export interface TallyOptions {
  /**
   * One start time per live session, labelled by pid, session id and cwd (high cardinality);
   * without it, one per agent: its oldest live session's.
   */
  sessionLabels?: boolean;
}

/** The ledger as a whole, read once per scrape. */
export interface LedgerSummary {
  mode: Mode;
  hold: boolean;
}

const zeroed = (names: readonly string[]) => new Map(names.map((n) => [n, 0]));
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export class MetricsTally {
  #sessions = new Map<string, { agent: string; liveness: string; reason: string; n: number }>();
  #starts: { pid: number; sample: Sample }[] = [];
  /** Without session labels: each agent's oldest live session's start, epoch ms. */
  #oldest = new Map<string, number>();
  /** Live sessions (alive, or hosted by a running server) by agent and activity. */
  #activity = new Map<string, { agent: string; activity: string; n: number }>();
  /** The live sessions counted: pid, start token and session id of each. */
  #live = new Set<string>();
  #prunable = zeroed(["dead", "malformed"]);
  #keys = zeroed(COUNTED_STATES);
  #dispatches = zeroed(Object.values(DISPATCH_OUTCOMES));
  #skips = zeroed(SKIP_REASONS);
  #vetoes = zeroed(VETO_REASONS);
  // `other` and `unreadable` too: every documented value is a series from the start.
  #audit = zeroed([...AUDIT_EVENTS, "other", "unreadable"]);

  constructor(readonly options: TallyOptions = {}) {}

  addRow(row: Row) {
    const agent = row.agent ?? "";
    const id = JSON.stringify([agent, row.liveness, row.reason]);
    const entry = this.#sessions.get(id);
    if (entry) entry.n++;
    else this.#sessions.set(id, { agent, liveness: row.liveness, reason: row.reason, n: 1 });
    if (row.liveness === "alive" || row.reason === "hosted") {
      // One live session, one count and one series: a process whose record is in both the
      // older layout's directory and its place's (sessions/<host>/ and places/) is seen twice.
      const live = JSON.stringify([row.session_pid, row.start_token, row.session_id]);
      if (this.#live.has(live)) return;
      this.#live.add(live);
      // "none": no hook of the session has said what it does (no activity hooks installed).
      const activity = row.activity ?? "none";
      const key = JSON.stringify([agent, activity]);
      const a = this.#activity.get(key);
      if (a) a.n++;
      else this.#activity.set(key, { agent, activity, n: 1 });
    }
    if (row.malformed) bump(this.#prunable, "malformed");
    else if (row.liveness === "dead") bump(this.#prunable, "dead");
    if (row.liveness === "alive" && row.session_pid !== null) {
      // The process's own start where the OS gave one, else when the session registered.
      const started =
        (row.process_started_at === null ? null : parseTime(row.process_started_at)) ??
          (row.registered_at === null ? null : parseTime(row.registered_at));
      if (started === null) return;
      if (!this.options.sessionLabels) {
        // By default no label per session (a pid made every session a new series: churn on
        // CI runners): the oldest live session of each agent.
        const oldest = this.#oldest.get(agent);
        if (oldest === undefined || started < oldest) this.#oldest.set(agent, started);
        return;
      }
      const labels: Record<string, string> = {
        agent,
        pid: String(row.session_pid),
        session_id: row.session_id ?? "",
        cwd: row.cwd ?? "",
      };
      this.#starts.push({ pid: row.session_pid, sample: { labels, value: started / 1000 } });
    }
  }

  addKey(key: LedgerKey) {
    bump(this.#keys, key.state);
    if (key.state in DISPATCH_OUTCOMES) {
      bump(this.#dispatches, DISPATCH_OUTCOMES[key.state as keyof typeof DISPATCH_OUTCOMES]);
    }
    if (key.state === "skipped" && key.skip) {
      const { class: cls, reason } = key.skip;
      if (cls === null) bump(this.#vetoes, "skip-damaged");
      else bump(cls === "veto" ? this.#vetoes : this.#skips, reason);
    }
  }

  /** One line of `audit.ndjson` (null: one too long to read); a torn line is `unreadable`. */
  addAuditLine(line: string | null) {
    if (line !== null && line.trim() === "") return;
    let event: unknown;
    try {
      if (line !== null) event = (JSON.parse(line) as Record<string, unknown>)?.event;
    } catch { /* a torn line */ }
    bump(
      this.#audit,
      typeof event !== "string" ? "unreadable" : AUDIT_EVENTS.includes(event) ? event : "other",
    );
  }

  families(
    ledger: LedgerSummary,
    scrape: { atMs: number; durationMs: number; version: string },
  ): Family[] {
    const counts = (m: Map<string, number>, label: string): Sample[] =>
      [...m].sort(([a], [b]) => cmp(a, b)).map(([v, n]) => ({ labels: { [label]: v }, value: n }));
    const sessions = [...this.#sessions.values()]
      .sort((a, b) =>
        cmp(a.agent, b.agent) || cmp(a.liveness, b.liveness) || cmp(a.reason, b.reason)
      )
      .map((s) => ({
        labels: { agent: s.agent, liveness: s.liveness, reason: s.reason },
        value: s.n,
      }));
    return [
      {
        name: "roster_sessions",
        type: "gauge",
        help: "Registered sessions (records in the store), by agent, liveness and reason.",
        samples: sessions,
      },
      {
        name: "roster_session_activity",
        type: "gauge",
        help: "Live sessions (alive, or hosted by a running server) by agent and by what " +
          "their hooks last said they do (none: nothing said).",
        samples: [...this.#activity.values()]
          .sort((a, b) => cmp(a.agent, b.agent) || cmp(a.activity, b.activity))
          .map((a) => ({ labels: { agent: a.agent, activity: a.activity }, value: a.n })),
      },
      {
        name: "roster_session_start_time_seconds",
        type: "gauge",
        help: "Start time of each agent's oldest live session's process since the Unix epoch " +
          "(its registration time where the OS gave none); with --session-labels, of each live " +
          "session, labelled by pid, session id and cwd.",
        samples: this.options.sessionLabels
          ? this.#starts.sort((a, b) => a.pid - b.pid).map((s) => s.sample)
          : [...this.#oldest].sort(([a], [b]) => cmp(a, b))
            .map(([agent, ms]) => ({ labels: { agent }, value: ms / 1000 })),
      },
      {
        name: "roster_prunable_records",
        type: "gauge",
        help: "Records waiting for roster prune: dead ones, and malformed files.",
        samples: counts(this.#prunable, "kind"),
      },
      {
        name: "roster_continuation_keys",
        type: "gauge",
        help: "Continuation keys in the ledger, by state.",
        samples: counts(this.#keys, "state"),
      },
      {
        name: "roster_continuation_dispatches_total",
        type: "counter",
        help: "Continuations claimed for dispatch (one per claimed key), by outcome.",
        samples: counts(this.#dispatches, "outcome"),
      },
      {
        name: "roster_continuation_skips_total",
        type: "counter",
        help: "Continuations skipped because the process ended (class process-end), by reason.",
        samples: counts(this.#skips, "reason"),
      },
      {
        name: "roster_continuation_vetoes_total",
        type: "counter",
        help: "Continuations vetoed (skips of class veto, and damaged skip files), by reason.",
        samples: counts(this.#vetoes, "reason"),
      },
      {
        name: "roster_continuation_audit_events_total",
        type: "counter",
        help: "Lines of the ledger's audit log, by event (unreadable: a torn line).",
        samples: counts(this.#audit, "event"),
      },
      {
        name: "roster_continuation_mode",
        type: "gauge",
        help: "The ledger's mode: 1 for the one in force (a missing or damaged config is off).",
        samples: MODES.map((m) => ({ labels: { mode: m }, value: m === ledger.mode ? 1 : 0 })),
      },
      {
        name: "roster_continuation_hold",
        type: "gauge",
        help: "1 while the ledger's hold file holds every continuation, else 0.",
        samples: [{ labels: {}, value: ledger.hold ? 1 : 0 }],
      },
      {
        name: "roster_build_info",
        type: "gauge",
        help: "The roster that wrote these metrics: always 1, its version as a label.",
        samples: [{ labels: { version: scrape.version }, value: 1 }],
      },
      {
        name: "roster_scrape_duration_seconds",
        type: "gauge",
        help: "How long roster took to read the store and the ledger for these metrics.",
        samples: [{ labels: {}, value: scrape.durationMs / 1000 }],
      },
      {
        name: "roster_scrape_timestamp_seconds",
        type: "gauge",
        help: "When roster read the store for these metrics, since the Unix epoch.",
        samples: [{ labels: {}, value: scrape.atMs / 1000 }],
      },
    ];
  }
}

const cmp = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0;
