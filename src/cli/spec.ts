/**
 * The command table: one description of every command and flag, from which the parser,
 * the help text and the shell completions are all generated. Implementations are loaded
 * lazily, so a command pays only for its own code at start-up.
 */
import type { Context } from "./context.ts";
import type { Parsed } from "./args.ts";

export interface FlagSpec {
  name: string;
  short?: string;
  /** Placeholder for a flag that takes a value; absent for a boolean flag. */
  value?: string;
  repeatable?: boolean;
  /** Accepted values, for help and completions. */
  choices?: readonly string[];
  help: string;
}

export interface CommandModule {
  run(ctx: Context, args: Parsed): Promise<number> | number;
}

export interface CommandSpec {
  name: string;
  summary: string;
  usage: string;
  flags: FlagSpec[];
  /** The positional arguments: a name for messages, and how many are accepted. */
  positionals?: { name: string; min: number; max: number; choices?: readonly string[] };
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
const KEY: FlagSpec = { name: "key", value: "K", help: "Continuation key" };
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
    usage:
      "roster register [--pid PID] [--agent NAME] [--runtime NAME] [--session-id ID] [--cwd DIR]",
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
    load: () => import("./register.ts"),
  },
  {
    name: "list",
    summary: "Show registered sessions and whether each is alive",
    usage: "roster list [--all] [--state alive|dead|unknown]... [--agent NAME] [--cwd DIR] " +
      "[--discover]",
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
    load: () => import("./list.ts"),
  },
  {
    name: "prune",
    summary: "Remove records of sessions that are gone",
    usage: "roster prune [--older-than DUR] [--dry-run]",
    flags: [
      {
        name: "older-than",
        value: "DUR",
        help: "Also remove unknown rows (malformed included) older than DUR: 90s, 30m, 12h, 7d",
      },
      { name: "dry-run", short: "n", help: "Report what would be removed; change nothing" },
    ],
    details: "Dead rows are always removed, unknown rows only with --older-than, alive rows never.",
    load: () => import("./prune.ts"),
  },
  {
    name: "unregister",
    summary: "Remove the calling session's record (for session-end hooks)",
    usage: "roster unregister [--pid PID]",
    flags: [
      { ...PID, help: "The session's pid (resolved as register does)" },
      QUIET,
    ],
    details: "Removes the record only while it is still that process's (same pid and start " +
      "token). No record is not an error: exit 0.",
    load: () => import("./hooks.ts").then((m) => ({ run: m.unregister })),
  },
  {
    name: "check",
    summary: "Liveness of each given process against its record",
    usage: "roster check PID...",
    flags: [],
    positionals: { name: "PID", min: 1, max: 1024 },
    details: "Exit code: 0 all alive, 3 any dead, 4 any unknown (and none dead).",
    load: () => import("./hooks.ts").then((m) => ({ run: m.check })),
  },
  {
    name: "token",
    summary: "Print a process's start token, or verify one",
    usage: "roster token PID | roster token --verify PID TOKEN",
    flags: [{ name: "verify", help: "Exit 0 if TOKEN still matches PID, 3 if not, 4 if unknown" }],
    positionals: { name: "PID", min: 1, max: 2 },
    details: "Exit code 3 when there is no such process (or, with --verify, the token differs); " +
      "4 when it cannot tell.",
    load: () => import("./hooks.ts").then((m) => ({ run: m.token })),
  },
  {
    name: "whoami",
    summary: "The registered live session that owns the calling process",
    usage: "roster whoami",
    flags: [],
    details: "Walks up the calling process's ancestors; exit 1 when none is a registered, " +
      "live session.",
    load: () => import("./hooks.ts").then((m) => ({ run: m.whoami })),
  },
  {
    name: "completions",
    summary: "Print a shell completion script",
    usage: "roster completions bash|zsh|fish",
    flags: [],
    positionals: { name: "SHELL", min: 1, max: 1, choices: SHELLS },
    load: () => import("./completions.ts"),
  },
  {
    name: "continuation-plan",
    summary: "Plan one automatic continue for an interrupted session",
    usage: "roster continuation-plan --key K --session PID [--release] [--deadline DUR] " +
      "[--not-before DUR] [--spacing DUR] [--frozen-marker M] [--cause signal|hard]",
    flags: [
      KEY,
      {
        name: "session",
        value: "PID",
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
    load: () => import("./continuation.ts").then((m) => ({ run: m.plan })),
  },
  {
    name: "continuation-release",
    summary: "Release a planned continuation",
    usage: "roster continuation-release --key K",
    flags: [
      KEY,
      LEDGER,
    ],
    load: () => import("./continuation.ts").then((m) => ({ run: m.release })),
  },
  {
    name: "continuation-check",
    summary: "Decide whether a resumed session may be sent one continue",
    usage: "roster continuation-check --key K [--facts FILE|-] [--claim]",
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
    details: "Exit code: 0 dispatch, 10 wait, 11 skip, 12 stop, 13 vetoed, 2 usage, 1 failure.",
    load: () => import("./continuation.ts").then((m) => ({ run: m.check })),
  },
];
