/**
 * The command table: one description of every command and flag, from which the parser,
 * the help text and the shell completions are all generated. Implementations are loaded
 * lazily, so a command pays only for its own code at start-up.
 */
import { EXIT, VERDICT_EXIT } from "../exit.ts";
import type { Parsed } from "./args.ts";
import type { Context } from "./context.ts";

export interface FlagSpec {
  name: string;
  short?: string;
  /** Placeholder for a flag that takes a value; absent for a boolean flag. */
  value?: string;
  repeatable?: boolean;
  /** Accepted values, for help and completions. */
  choices?: readonly string[];
  /** The command cannot run without it (shown unbracketed in the usage line). */
  required?: boolean;
  help: string;
}

interface CommandModule {
  run(ctx: Context, args: Parsed): Promise<number> | number;
}

export interface CommandSpec {
  name: string;
  summary: string;
  flags: FlagSpec[];
  /**
   * The positional arguments: a name for messages, how many are accepted, and how the usage
   * line writes them when the name alone does not say it.
   */
  positionals?: {
    name: string;
    min: number;
    max: number;
    choices?: readonly string[];
    usage?: string;
  };
  details?: string;
  load: () => Promise<CommandModule>;
}

/** The shells `roster completions` writes scripts for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

export const GLOBAL_FLAGS: FlagSpec[] = [
  {
    name: "home",
    value: "DIR",
    help: "Store directory (else $ROSTER_HOME, else the state directory)",
  },
  { name: "json", help: "Print machine-readable JSON on stdout; messages go to stderr" },
  { name: "help", short: "h", help: "Show help" },
  { name: "version", short: "V", help: "Print the version" },
];

const QUIET: FlagSpec = { name: "quiet", short: "q", help: "Print nothing on success" };
const KEY: FlagSpec = { name: "key", value: "K", required: true, help: "Continuation key" };
const LEDGER: FlagSpec = {
  name: "ledger",
  value: "DIR",
  help: "Ledger directory (default: <home>/continuations)",
};
const PID: FlagSpec = { name: "pid", value: "PID", help: "The session's process id" };

export const COMMANDS: CommandSpec[] = [
  {
    name: "register",
    summary: "Record the calling agent session",
    flags: [
      {
        ...PID,
        help:
          "The session's pid (else $ROSTER_SESSION_PID, $CLAUDE_PID, or the nearest harness ancestor)",
      },
      {
        name: "agent",
        value: "NAME",
        help: 'Agent name (else $ROSTER_AGENT or the detected harness; "" = anonymous)',
      },
      {
        name: "runtime",
        value: "NAME",
        help: "Runtime the agent runs on (else detected, or null)",
      },
      {
        name: "session-id",
        value: "ID",
        help: "Harness session id (else $ROSTER_SESSION_ID, $CLAUDE_CODE_SESSION_ID)",
      },
      {
        name: "cwd",
        value: "DIR",
        help: "Working directory of the session (default: the current one)",
      },
      QUIET,
    ],
    details:
      "Re-registering the same pid refreshes its record. Dead records are removed on the way.",
    load: () => import("./commands/register.ts"),
  },
  {
    name: "list",
    summary: "Show registered sessions and whether each is alive",
    flags: [
      { name: "all", short: "a", help: "Include dead rows" },
      {
        name: "state",
        value: "STATE",
        repeatable: true,
        choices: ["alive", "dead", "unknown"],
        help: "Only rows in this state (repeatable; overrides the default filter)",
      },
      { name: "agent", value: "NAME", help: "Only rows of this agent" },
      { name: "cwd", value: "DIR", help: "Only rows whose working directory is DIR" },
      {
        name: "discover",
        help: "Also read the session files harnesses keep (Claude Code's ~/.claude/sessions); " +
          "rows then carry their source",
      },
    ],
    details: "Newest first. Dead rows are hidden unless --all or --state asks for them. " +
      "list only reads: it never changes the store.",
    load: () => import("./commands/list.ts"),
  },
  {
    name: "prune",
    summary: "Remove records of sessions that are gone",
    flags: [
      {
        name: "older-than",
        value: "DUR",
        help: "Also remove unknown rows (malformed included) older than DUR: 90s, 30m, 12h, 7d",
      },
      { name: "dry-run", short: "n", help: "Report what would be removed; change nothing" },
    ],
    details: "Dead rows are always removed, unknown rows only with --older-than, alive rows never.",
    load: () => import("./commands/prune.ts"),
  },
  {
    name: "unregister",
    summary: "Remove the calling session's record (for session-end hooks)",
    flags: [
      { ...PID, help: "The session's pid (resolved as register does)" },
      QUIET,
    ],
    details: "Removes the record only while it is still that process's (same pid and start " +
      "token). No record is not an error: exit 0.",
    load: () => import("./commands/unregister.ts"),
  },
  {
    name: "check",
    summary: "Liveness of each given process against its record",
    flags: [],
    positionals: { name: "PID", min: 1, max: 1024 },
    details: `Exit code: ${EXIT.OK} all alive, ${EXIT.DEAD} any dead, ${EXIT.UNKNOWN} any ` +
      "unknown (and none dead).",
    load: () => import("./commands/check.ts"),
  },
  {
    name: "token",
    summary: "Print a process's start token, or verify one",
    flags: [{
      name: "verify",
      help: `Exit ${EXIT.OK} if TOKEN still matches PID, ${EXIT.DEAD} if not, ` +
        `${EXIT.UNKNOWN} if unknown`,
    }],
    positionals: { name: "PID", min: 1, max: 2, usage: "PID [TOKEN]" },
    details: `Exit code ${EXIT.DEAD} when there is no such process (or, with --verify, the ` +
      `token differs); ${EXIT.UNKNOWN} when it cannot tell.`,
    load: () => import("./commands/token.ts"),
  },
  {
    name: "whoami",
    summary: "The registered live session that owns the calling process",
    flags: [],
    details: `Walks up the calling process's ancestors; exit ${EXIT.FAILURE} when none is a ` +
      "registered, live session.",
    load: () => import("./commands/whoami.ts"),
  },
  {
    name: "completions",
    summary: "Print a shell completion script",
    flags: [],
    positionals: { name: "SHELL", min: 1, max: 1, choices: SHELLS },
    load: () => import("./commands/completions.ts"),
  },
  {
    name: "continuation-plan",
    summary: "Plan one automatic continue for an interrupted session",
    flags: [
      KEY,
      {
        name: "session",
        value: "PID",
        required: true,
        help: "The interrupted session's pid (any row list --all shows)",
      },
      { name: "release", help: "Write the plan released rather than planned" },
      { name: "deadline", value: "DUR", help: "Give up after this long from now (default: 1h)" },
      { name: "not-before", value: "DUR", help: "Wait at least this long from now" },
      {
        name: "spacing",
        value: "DUR",
        help: "Minimum gap between any two dispatches (default: 5s)",
      },
      {
        name: "frozen-marker",
        value: "M",
        help: "The session's last transcript entry at interruption",
      },
      {
        name: "cause",
        value: "CAUSE",
        choices: ["signal", "hard"],
        help: "How it was interrupted",
      },
      LEDGER,
    ],
    details: "Writes K.plan.json in the ledger from the session's registry row. A key already " +
      "claimed or skipped is refused: plan each interruption under a new key. " +
      "See docs/continuation.md.",
    load: () => import("./commands/continuation_plan.ts"),
  },
  {
    name: "continuation-release",
    summary: "Release a planned continuation",
    flags: [
      KEY,
      LEDGER,
    ],
    load: () => import("./commands/continuation_release.ts"),
  },
  {
    name: "continuation-check",
    summary: "Decide whether a resumed session may be sent one continue",
    flags: [
      KEY,
      {
        name: "facts",
        value: "FILE",
        help: "Facts from the resumed harness, a JSON object (- = stdin)",
      },
      { name: "claim", help: "Claim the continuation when the verdict is dispatch" },
      LEDGER,
    ],
    details: `Exit code: ${
      Object.entries(VERDICT_EXIT).map(([kind, code]) => `${code} ${kind}`).join(", ")
    }, ${EXIT.USAGE} usage, ${EXIT.FAILURE} failure.`,
    load: () => import("./commands/continuation_check.ts"),
  },
  {
    name: "metrics",
    summary: "The registry and the continuation ledger as Prometheus metrics",
    flags: [
      {
        name: "textfile",
        value: "FILE",
        help: "Write the metrics to FILE atomically (for node_exporter's textfile collector)",
      },
      {
        name: "session-labels",
        help: "Also label each live session with its session id and cwd (high cardinality)",
      },
      {
        name: "label",
        value: "NAME=VALUE",
        repeatable: true,
        help: "Add this label to every sample (such as user=NAME: one file per user)",
      },
      LEDGER,
    ],
    details: "Prints the Prometheus text format on stdout, or with --textfile writes FILE " +
      "(a temp file beside it, then renamed). With --json, the metric families as JSON. " +
      "See docs/fleet.md.",
    load: () => import("./commands/metrics.ts"),
  },
];

/** The usage line of a command, generated from its flags and positionals in the table. */
export function usageOf(cmd: CommandSpec): string {
  const parts = [`roster ${cmd.name}`];
  for (const f of cmd.flags) {
    const value = f.value === undefined ? "" : ` ${f.choices ? f.choices.join("|") : f.value}`;
    const flag = `--${f.name}${value}`;
    parts.push(f.required ? flag : `[${flag}]${f.repeatable ? "..." : ""}`);
  }
  const pos = cmd.positionals;
  if (pos) {
    parts.push(
      pos.usage ?? (pos.choices ? pos.choices.join("|") : `${pos.name}${pos.max > 1 ? "..." : ""}`),
    );
  }
  return parts.join(" ");
}
