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
  /** Names of positional arguments, for help; `...` marks a list. */
  positionals?: { name: string; min: number; max: number };
  details?: string;
  load: () => Promise<CommandModule>;
}

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
    usage: "roster list [--all] [--state alive|dead|unknown]... [--agent NAME] [--cwd DIR]",
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
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
