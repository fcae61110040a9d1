/**
 * JSON Schemas (draft 2020-12) of every JSON output, as data: `roster schema NAME` prints
 * one, schemas/*.json holds the same text (a test keeps them equal), and the test suite
 * validates every JSON output it produces against them.
 *
 * Over 400 lines: every JSON output's schema, as data, side by side so shared parts are
 * written once.
 */
import { SHOWN_STATES } from "../continuation/keys.ts";
import { PLAN_FORMAT } from "../continuation/schema.ts";
import type { Schema } from "../format/format.ts";
import { SESSION_RECORD } from "../registry/record_format.ts";

const str = { type: "string" };
const nstr = { type: ["string", "null"] };
const int = { type: "integer" };
const nint = { type: ["integer", "null"] };
const bool = { type: "boolean" };
const time = { type: "string", format: "date-time" };
const ntime = { type: ["string", "null"], format: "date-time" };
const LIVENESS = { enum: ["alive", "dead", "unknown"] };
const REASON = {
  enum: [
    "running",
    "pid-only",
    "exited",
    "zombie",
    "pid-reused",
    "rebooted",
    "parked",
    "resumed",
    "hosted",
    "own-session",
    "other-host",
    "other-pid-ns",
    "foreign-proc",
    "unverifiable",
    "unsupported",
    "malformed",
  ],
};

/** A closed object: every field listed, none other allowed; all required but `optional`. */
function object(properties: Record<string, unknown>, optional: string[] = []): Schema {
  return {
    type: "object",
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    additionalProperties: false,
  };
}

/** Makes every property of an object schema also accept null (a malformed row's fields). */
function nullable(props: Record<string, Schema>): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(props)) {
    const t = v.type;
    out[k] = t === undefined
      ? { anyOf: [v, { type: "null" }] }
      : { ...v, type: Array.isArray(t) ? [...new Set([...t, "null"])] : [t, "null"] };
    // A set: an enum that already holds null (activity) lists it once, as JSON Schema wants.
    if ("enum" in v) out[k] = { enum: [...new Set([...(v.enum as unknown[]), null])] };
    if ("const" in v) out[k] = { enum: [v.const, null] };
  }
  return out;
}

const orNull = (s: Schema): Schema => ({ anyOf: [s, { type: "null" }] });

/** A record's fields, from its declaration (src/registry/record_format.ts). */
const RECORD_PROPS = SESSION_RECORD.properties();

const ROW_EXTRA = {
  liveness: LIVENESS,
  reason: REASON,
  path: str,
  malformed: bool,
  detail: nstr,
  /** The row that names this one as its successor (rows of roster's own store). */
  predecessor: orNull(object({ pid: int, session_id: nstr, path: str })),
  /** With --discover only: where the row came from. */
  source: { enum: ["roster", "claude"] },
  /** With --discover, a harness's row: what its own file says it is doing ("idle", "busy"). */
  status: nstr,
};

// Every field of a row is listed, lifecycle ones included, and no other is allowed: a field
// added to the output without its schema fails the suite (tests/schema.ts).
const ROW_PROPS = { ...nullable(RECORD_PROPS), ...ROW_EXTRA };
const ROW_OPTIONAL = ["predecessor", "source", "status"];
const ROW = object(ROW_PROPS, ROW_OPTIONAL);

const CHECK_ROW = object({ ...ROW_PROPS, path: nstr, registered: bool }, ROW_OPTIONAL);

const PRINTED_VERDICT: Schema = {
  type: "object",
  properties: {
    kind: { enum: ["dispatch", "wait", "skip", "stop", "vetoed"] },
    reason: str,
    class: str,
    until: time,
    continuation_id: str,
    message: str,
    // Why continuations are off (which file, what is wrong with it), on a `disabled` veto.
    detail: str,
    would: { $ref: "#" },
  },
  required: ["kind"],
  additionalProperties: false,
};

/** A plan, from its declaration (src/continuation/schema.ts). */
const PLAN = PLAN_FORMAT.schema();

/** How `wait` learns of an exit: the kernel tells it (pidfd, kqueue, a process handle) or it polls. */
const WAIT_MECHANISM = { enum: ["pidfd", "kqueue", "handle", "poll"] };

/** One continuation key, as continuation-list and continuation-show print it. */
const KEY_STATUS = object({
  key: str,
  state: { enum: SHOWN_STATES },
  plan: { enum: ["planned", "released", null] },
  outcome: nstr,
  session_pid: nint,
  session_id: nstr,
  deadline: ntime,
  age_ms: { type: ["integer", "null"], minimum: 0 },
  continuation_id: nstr,
  message: nstr,
  class: nstr,
  reason: nstr,
});

const HOOK_STATE = { enum: ["installed", "outdated", "missing", "absent", "invalid"] };
const HARNESS = { enum: ["claude", "codex", "pi", "gemini"] };

const DOCTOR = object({
  ok: bool,
  version: str,
  home: object({
    path: str,
    source: { enum: ["--home", "ROSTER_HOME", "XDG_STATE_HOME", "default"] },
    exists: bool,
    problem: nstr,
  }),
  host: object({
    hostname: str,
    store_dir: str,
    boot_id: nstr,
    machine_id: nstr,
    pid_ns: nstr,
    time_ns: nstr,
  }),
  process: object({
    backend: str,
    wait: WAIT_MECHANISM,
    hidepid: nint,
    can_read_others: { type: ["boolean", "null"] },
    uid: nint,
  }),
  store: object({ alive: int, dead: int, unknown: int, malformed: int }),
  continuation: object({ mode: { enum: ["on", "off", "dry-run"] }, why: str }),
  hooks: {
    type: "array",
    items: object({
      harness: HARNESS,
      scope: { enum: ["user", "project"] },
      path: str,
      state: HOOK_STATE,
      detail: nstr,
    }),
  },
  problems: { type: "array", items: object({ what: str, advice: str }) },
});

export const SCHEMAS: Record<string, { summary: string; schema: Schema }> = {
  record: {
    summary: "A session record file, <home>/places/<place>/<pid>.json",
    schema: SESSION_RECORD.schema(),
  },
  row: { summary: "A row: register, park, resume (--json)", schema: ROW },
  list: { summary: "list --json: rows, newest first", schema: { type: "array", items: ROW } },
  prune: {
    summary: "prune --json",
    schema: object({
      removed: { type: "array", items: ROW },
      dead_removed: int,
      unknown_removed: int,
      kept: int,
      held: int,
      parked: int,
      // Crashed rows kept for `roster restore` (removed past retention or --include-crashed).
      retained: int,
      dry_run: { const: true },
    }, ["dry_run", "held", "parked", "retained"]),
  },
  activity: {
    summary: "activity --json",
    schema: object({
      pid: nint,
      outcome: { enum: ["recorded", "no-record", "not-this-process"] },
      row: { anyOf: [ROW, { type: "null" }] },
    }),
  },
  unregister: {
    summary: "unregister --json",
    schema: object({
      pid: nint,
      outcome: { enum: ["removed", "kept", "no-record", "refused"] },
      row: { anyOf: [ROW, { type: "null" }] },
    }),
  },
  check: { summary: "check --json", schema: { type: "array", items: CHECK_ROW } },
  token: {
    summary: "token --json (token null when no process holds the pid)",
    schema: object({
      pid: int,
      token: nstr,
      start_token: nstr,
      boot_id: nstr,
      process_started_at: ntime,
      state: { enum: ["running", "gone", "unknown"] },
    }),
  },
  "token-verify": {
    summary: "token --verify --json",
    schema: object({
      pid: int,
      token: str,
      verdict: { enum: ["same", "different", "gone", "unknown"] },
    }),
  },
  whoami: {
    summary: "whoami --json (inside a sandbox: unverified, matched by a session id variable)",
    schema: object({ ...ROW_PROPS, verified: { const: false }, matched_by: str }, [
      ...ROW_OPTIONAL,
      "verified",
      "matched_by",
    ]),
  },
  metrics: {
    summary: "metrics --json: the metric families",
    schema: {
      type: "array",
      items: object({
        name: str,
        type: { enum: ["gauge", "counter"] },
        help: str,
        samples: {
          type: "array",
          // Labels are open: their names come from the metric and from --label.
          items: object({ labels: { type: "object" }, value: { type: "number" } }),
        },
      }),
    },
  },
  completions: { summary: "completions --json", schema: object({ shell: str, script: str }) },
  man: { summary: "man --json: the manual page, roff", schema: object({ page: str }) },
  version: {
    summary: "--version --json",
    schema: object({ name: { const: "roster" }, version: str }),
  },
  verdict: { summary: "continuation-check --json", schema: PRINTED_VERDICT },
  plan: { summary: "continuation-plan, continuation-release --json", schema: PLAN },
  doctor: { summary: "doctor --json", schema: DOCTOR },
  hooks: {
    summary: "hooks install|uninstall --json",
    schema: object({
      harness: HARNESS,
      action: { enum: ["install", "uninstall"] },
      path: str,
      changed: bool,
      dry_run: bool,
      backup: nstr,
      content: nstr,
    }),
  },
  wait: {
    summary: "wait --json (with --activity: the sessions' activity when it was reached)",
    schema: {
      anyOf: [
        object({
          outcome: { enum: ["exited", "timeout"] },
          waited_ms: int,
          mechanism: WAIT_MECHANISM,
          pids: { type: "array", items: object({ pid: int, exited: bool }) },
        }),
        object({
          outcome: { enum: ["reached", "timeout"] },
          waited_ms: int,
          activity: { enum: ["working", "waiting", "idle"] },
          sessions: {
            type: "array",
            items: object({
              pid: int,
              activity: { enum: ["working", "waiting", "idle", null] },
              activity_at: ntime,
            }),
          },
        }),
      ],
    },
  },
  restore: {
    summary: "restore --json: one object per interrupted session, what was done and how it went",
    schema: {
      type: "array",
      items: object({
        session_pid: nint,
        session_id: nstr,
        agent: nstr,
        cwd: nstr,
        command: { anyOf: [{ type: "array", items: str }, { type: "null" }] },
        action: { enum: ["relaunch", "skip"] },
        reason: str,
        failures: int,
        key: str,
        result: { enum: ["restored", "failed", "skipped"] },
        successor_pid: nint,
        pane: nstr,
        continued: { type: ["boolean", "null"] },
        continue_reason: nstr,
        continuation_id: nstr,
      }, [
        "result",
        "successor_pid",
        "pane",
        "continued",
        "continue_reason",
        "continuation_id",
      ]),
    },
  },
  "hooks-show": {
    summary: "hooks show --json: the recipe, as settings JSON or as a file's text",
    schema: object({ harness: HARNESS, kind: { enum: ["settings", "file"] }, content: str }),
  },
  "continuation-key": {
    summary: "continuation-show --json: one key's state, plan, outcome and message",
    schema: KEY_STATUS,
  },
  "continuation-list": {
    summary: "continuation-list --json: every key of the ledger",
    schema: { type: "array", items: KEY_STATUS },
  },
  "continuation-mode": {
    summary: "continuation-mode --json: the mode, its file, and why it is off",
    schema: object({ mode: { enum: ["on", "off", "dry-run"] }, path: str, detail: nstr }),
  },
  "continuation-hold": {
    summary: "continuation-hold --json",
    schema: object({ hold: bool }),
  },
  "continuation-clean": {
    summary: "continuation-clean --json: the keys and temp files removed (or, -n, that would be)",
    schema: object({
      keys: { type: "array", items: str },
      temp_files: { type: "array", items: str },
      dry_run: { const: true },
    }, ["dry_run"]),
  },
  "continuation-decline": {
    summary: "continuation-decline --json: how the key ended up",
    schema: object({ outcome: { enum: ["declined", "claimed", "skipped"] }, key: str }),
  },
  schema: {
    summary: "schema --json: the list of schemas",
    schema: { type: "array", items: object({ name: str, summary: str }) },
  },
};

/** One schema, with its draft and id, as `roster schema NAME` prints it. */
export function schemaDocument(name: string): Schema | null {
  const s = SCHEMAS[name];
  if (s === undefined) return null;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: `https://github.com/roster-dev/roster/schemas/${name}.json`,
    title: `roster ${name}`,
    description: s.summary,
    ...s.schema,
  };
}
