/**
 * The command table: one description of every command and flag, from which the parser,
 * the help text and the shell completions are all generated. Implementations are loaded
 * lazily, so a command pays only for its own code at start-up.
 *
 * Over 400 lines: the table is one declaration by design, every command's flags, help and
 * loader side by side, since the parser, help and completions all read it whole.
 */
import { lazyModule } from "../lazy.ts";
import { EXIT, VERDICT_EXIT } from "../exit.ts";
import { SESSION_ID_VARS } from "../registry/session_id.ts";
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
  /** With choices: the value is a comma-separated list of them. */
  commas?: boolean;
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
    /** The words each position takes, where they differ by position (completions offer them). */
    each?: readonly (readonly string[])[];
    usage?: string;
    /** After the first positional every argument is positional, flags too (exec's command). */
    rest?: boolean;
  };
  details?: string;
  load: () => Promise<CommandModule>;
}

/** A command's `load` (src/lazy.ts), its module checked against CommandModule. */
function lazy<M extends CommandModule>(specifier: string): () => Promise<M> {
  return lazyModule<M>(specifier, (s) => import(s));
}

/** The shells `roster completions` writes scripts for. */
export const SHELLS = ["bash", "zsh", "fish", "powershell"] as const;

export const GLOBAL_FLAGS: FlagSpec[] = [
  {
    name: "home",
    value: "DIR",
    help: "Store directory (else $ROSTER_HOME, else the state directory)",
  },
  { name: "json", help: "Print machine-readable JSON on stdout; messages go to stderr" },
  {
    name: "color",
    value: "WHEN",
    choices: ["auto", "always", "never"],
    help: "Colour: auto (a terminal; not with NO_COLOR or TERM=dumb), always or never",
  },
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
        help: "Harness session id (else $ROSTER_SESSION_ID, or the owner harness's own: " +
          Object.values(SESSION_ID_VARS).flat().map((v) => `$${v}`).join(", ") + ")",
      },
      {
        name: "cwd",
        value: "DIR",
        help: "Working directory of the session (default: the current one)",
      },
      { name: "model", value: "NAME", help: "The model the session runs (else $ROSTER_MODEL)" },
      {
        name: "native-session-id",
        value: "ID",
        help: "The harness's own session id (else $ROSTER_NATIVE_SESSION_ID)",
      },
      QUIET,
    ],
    details: "Re-registering the same pid refreshes its record. Ended sessions are kept for " +
      "$ROSTER_RETENTION (default 24h) after roster first sees them ended, then removed on the way.",
    load: lazy<typeof import("./commands/register.ts")>("./commands/register.ts"),
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
        commas: true,
        choices: ["alive", "dead", "unknown"],
        help: "Only rows in these states (repeatable or comma-separated; overrides the default)",
      },
      {
        name: "agent",
        value: "NAME",
        repeatable: true,
        help: "Only rows of these agents (repeatable or comma-separated)",
      },
      {
        name: "session-id",
        value: "ID",
        repeatable: true,
        help: "Only rows of these session ids (repeatable or comma-separated)",
      },
      { name: "host", value: "NAME", repeatable: true, help: "Only rows of these hosts" },
      { name: "cwd", value: "DIR", help: "Only rows whose working directory is DIR" },
      { name: "under", value: "DIR", help: "Only rows whose working directory is in DIR's tree" },
      {
        name: "discover",
        help: "Also read the session files harnesses keep (Claude Code's ~/.claude/sessions); " +
          "rows then carry their source",
      },
      { name: "quiet", short: "q", help: "Print only the pids, one a line" },
      { name: "no-headers", help: "Leave out the header line" },
      {
        name: "columns",
        value: "LIST",
        help: "The columns to show, comma-separated: pid, liveness, agent, activity, runtime, " +
          "age, cwd, " +
          "session_id, host, pane, source, path, detail",
      },
      { name: "wide", short: "w", help: "Also show session id, host, tmux pane and source" },
    ],
    details: "Newest first. Dead rows are hidden unless --all or --state asks for them. " +
      "Filters combine with AND; the values of one filter with OR. A table is cut to the " +
      "terminal's width ($COLUMNS); --json keeps every value whole. AGE counts from the " +
      "session's process start. list only reads: it never changes the store.",
    load: lazy<typeof import("./commands/list.ts")>("./commands/list.ts"),
  },
  {
    name: "prune",
    summary: "Remove records of sessions that are gone",
    flags: [
      {
        name: "older-than",
        value: "DUR",
        help: "Also remove unknown rows (malformed included) and parked ones older than DUR: " +
          "90s, 30m, 12h, 7d",
      },
      {
        name: "include-crashed",
        help: "Also remove crashed rows a restore could still bring back (within retention)",
      },
      { name: "dry-run", short: "n", help: "Report what would be removed; change nothing" },
      QUIET,
    ],
    details: "Ended rows are removed, except those an open continuation holds and crashed " +
      "ones roster restore could bring back (kept until past $ROSTER_RETENTION, 24h by " +
      "default, or --include-crashed); parked and unknown rows only with --older-than, which " +
      "never shortens retention; alive rows never.",
    load: lazy<typeof import("./commands/prune.ts")>("./commands/prune.ts"),
  },
  {
    name: "unregister",
    summary: "Remove the calling session's record (for session-end hooks)",
    flags: [
      { ...PID, help: "The session's pid (resolved as register does)" },
      {
        name: "session-id",
        value: "ID",
        help: "The session, where the pid is a shared server hosting many (Codex's app-server)",
      },
      QUIET,
    ],
    details: "Removes the record only while it is still that process's (same pid and start " +
      "token). No record is not an error: exit 0.",
    load: lazy<typeof import("./commands/unregister.ts")>("./commands/unregister.ts"),
  },
  {
    name: "activity",
    summary: "Record what the calling session is doing (for prompt, stop and tool hooks)",
    flags: [
      {
        name: "tool-start",
        value: "ID",
        help: "A tool call started (- = the tool_use_id and tool_name of the hook's JSON on stdin)",
      },
      {
        name: "tool-end",
        value: "ID",
        help: "A tool call finished (- = from the hook's JSON on stdin, as --tool-start)",
      },
      {
        name: "tool-name",
        value: "NAME",
        help: "The tool's name (a call without an id is known by it)",
      },
      { ...PID, help: "The session's pid (resolved as register does)" },
      {
        name: "session-id",
        value: "ID",
        help: "The session, where the pid is a shared server hosting many (- = the hook's " +
          "JSON on stdin)",
      },
      QUIET,
    ],
    positionals: {
      name: "ACTIVITY",
      min: 0,
      max: 1,
      choices: ["working", "waiting", "idle"],
      usage: "[working|waiting|idle]",
    },
    details: "working: a prompt was submitted or a turn started; waiting: the harness asks " +
      "the person (a permission, a question); idle: the turn ended and the prompt is ready " +
      "(every open tool call is closed). A tool call starting or ending means working. " +
      "Written into the session's own record, only while it is still that process's; list " +
      "shows it (ACTIVITY), `wait --activity` waits for it. No record, or no session to be " +
      `found, is exit ${EXIT.OK}; it never exits ${EXIT.USAGE} after parsing its flags, which ` +
      "a harness would read as blocking the tool or the stop.",
    load: lazy<typeof import("./commands/activity.ts")>("./commands/activity.ts"),
  },
  {
    name: "check",
    summary: "Liveness of each given process against its record",
    flags: [],
    positionals: { name: "PID", min: 1, max: 1024 },
    details: `Exit code: ${EXIT.OK} all alive, ${EXIT.DEAD} any dead, ${EXIT.UNKNOWN} any ` +
      "unknown (and none dead).",
    load: lazy<typeof import("./commands/check.ts")>("./commands/check.ts"),
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
    load: lazy<typeof import("./commands/token.ts")>("./commands/token.ts"),
  },
  {
    name: "whoami",
    summary: "The registered live session that owns the calling process",
    flags: [],
    details: `Walks up the calling process's ancestors; exit ${EXIT.DEAD} (not found) when ` +
      "none is a registered, live session.",
    load: lazy<typeof import("./commands/whoami.ts")>("./commands/whoami.ts"),
  },
  {
    name: "park",
    summary: "Set a session aside: never live, never continued, kept",
    flags: [
      { ...PID, help: "The session's pid (else the calling session, as register finds it)" },
      { name: "session-id", value: "ID", help: "The session's (or its harness's) session id" },
      { name: "undo", help: "Un-park: the session is judged by its process again" },
      QUIET,
    ],
    details: "A parked session stays parked when its hooks register it again (resume, /clear, " +
      "compaction), until park --undo or resume.",
    load: lazy<typeof import("./commands/park.ts")>("./commands/park.ts"),
  },
  {
    name: "resume",
    summary: "Record the session that continues an ended or parked one",
    flags: [
      { ...PID, help: "The old session's pid" },
      { name: "session-id", value: "ID", help: "The old session's (or its harness's) session id" },
      {
        name: "successor-pid",
        value: "PID",
        help: "The new session's pid (else the calling session, as register finds it)",
      },
      { name: "successor-session-id", value: "ID", help: "The new session's session id" },
      QUIET,
    ],
    details: "The old row then shows reason resumed and its successor; list shows the new " +
      "row's predecessor. By --session-id, the ended or parked record of that id, never the " +
      "successor's own. A link is never replaced: the same successor again is accepted, " +
      `another is refused (exit ${EXIT.USAGE}).`,
    load: lazy<typeof import("./commands/resume.ts")>("./commands/resume.ts"),
  },
  {
    name: "restore",
    summary: "Bring back every interrupted session in tmux, continued once",
    flags: [
      {
        name: "agent",
        value: "NAME",
        repeatable: true,
        help: "Only sessions of these agents (repeatable or comma-separated)",
      },
      {
        name: "session-id",
        value: "ID",
        repeatable: true,
        help: "Only these sessions (repeatable or comma-separated)",
      },
      { name: "dry-run", short: "n", help: "Say what would be relaunched; change nothing" },
      {
        name: "print",
        help: "Print the shell commands that would relaunch them (no tmux needed); change nothing",
      },
      {
        name: "max-failures",
        value: "N",
        help: "Failed relaunches of a session before it is skipped for good (default: 3)",
      },
      {
        name: "wait",
        value: "DUR",
        help: "How long a relaunch has to register through its start hook (default: 60s)",
      },
      {
        name: "settle",
        value: "DUR",
        help: "How long it must keep running after that (default: 3s)",
      },
      {
        name: "continue-timeout",
        value: "DUR",
        help: "How long to wait for each to be idle for its one continue (default: 2m)",
      },
      QUIET,
      LEDGER,
    ],
    details: "Restorable: dead without its end hook (crashed, killed, rebooted), not parked, " +
      "not resumed, not ended on its own, within $ROSTER_RETENTION, with a session id its " +
      "harness resumes (claude --resume, codex resume, pi --session, gemini --resume). Each " +
      "runs in a new window of the tmux session it was in, else of roster-restore, in its " +
      "cwd, with PATH and the store passed explicitly. Only once its start hook registered it " +
      "and it kept running is it linked (resume) and its continue released; the continue is " +
      "typed when its hooks say it is idle (and continuation-mode is on); Codex's, whose " +
      "hooks run only from its first prompt, is claimed before the relaunch and passed as " +
      "codex resume's prompt. A failed relaunch " +
      "stays restorable and is tried again by the next run. Two restores take turns. Exit " +
      `code: ${EXIT.OK} nothing failed, ${EXIT.FAILURE} a relaunch failed. ` +
      "See docs/continuation.md.",
    load: lazy<typeof import("./commands/restore.ts")>("./commands/restore.ts"),
  },
  {
    name: "completions",
    summary: "Print a shell completion script",
    flags: [],
    positionals: { name: "SHELL", min: 1, max: 1, choices: SHELLS },
    load: lazy<typeof import("./commands/completions.ts")>("./commands/completions.ts"),
  },
  {
    name: "man",
    summary: "Print the manual page, roster(1), in man(7) format",
    flags: [],
    details: "Generated from the command table, like the help. Read it with: " +
      "roster man | man -l -  (the release ships it as roster.1).",
    load: lazy<typeof import("./commands/man.ts")>("./commands/man.ts"),
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
      {
        name: "chain-limit",
        value: "N",
        help: "Continuations of one session within 24h before it is vetoed (default: 3)",
      },
      QUIET,
      LEDGER,
    ],
    details: "Writes K.plan.json in the ledger from the session's registry row. A key already " +
      "claimed or skipped is refused: plan each interruption under a new key. " +
      "See docs/continuation.md.",
    load: lazy<typeof import("./commands/continuation_plan.ts")>("./commands/continuation_plan.ts"),
  },
  {
    name: "continuation-release",
    summary: "Release a planned continuation",
    flags: [
      KEY,
      { name: "pane", value: "PANE", help: "The pane the session was relaunched in" },
      QUIET,
      LEDGER,
    ],
    load: lazy<typeof import("./commands/continuation_release.ts")>(
      "./commands/continuation_release.ts",
    ),
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
      {
        name: "plan-token",
        value: "T",
        help: "The token of the plan this hook was started for (another: stop plan-changed)",
      },
      {
        name: "tmux",
        help: "Read the pane it runs in ($TMUX_PANE) itself, just before deciding: its id, " +
          "copy mode, a key typed in the last minute",
      },
      LEDGER,
    ],
    details: `Exit code: ${
      Object.entries(VERDICT_EXIT).map(([kind, code]) => `${code} ${kind}`).join(", ")
    }, ${EXIT.USAGE} usage, ${EXIT.FAILURE} failure.`,
    load: lazy<typeof import("./commands/continuation_check.ts")>(
      "./commands/continuation_check.ts",
    ),
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
        help:
          "One start time per live session, labelled by pid, session id and cwd (high cardinality)",
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
    load: lazy<typeof import("./commands/metrics.ts")>("./commands/metrics.ts"),
  },
  {
    name: "continuation-show",
    summary: "One continuation key: its state, and the message its claim handed over",
    flags: [KEY, LEDGER],
    load: lazy<typeof import("./commands/continuation_show.ts")>("./commands/continuation_show.ts"),
  },
  {
    name: "continuation-list",
    summary: "Every continuation key with its state, plan, outcome and age",
    flags: [LEDGER],
    load: lazy<typeof import("./commands/continuation_list.ts")>("./commands/continuation_list.ts"),
  },
  {
    name: "continuation-mode",
    summary: "Set continuations on, off or dry-run; without a mode, say which and why",
    flags: [{ ...QUIET, help: "Print nothing once it is set" }, LEDGER],
    positionals: { name: "MODE", min: 0, max: 1, choices: ["on", "off", "dry-run"] },
    details: "Writes config.json in the ledger (0600), wherever the home is.",
    load: lazy<typeof import("./commands/continuation_mode.ts")>("./commands/continuation_mode.ts"),
  },
  {
    name: "continuation-hold",
    summary: "Hold every continuation, or lift the hold",
    flags: [{ ...QUIET, help: "Print nothing once it is set" }, LEDGER],
    positionals: { name: "HOLD", min: 0, max: 1, choices: ["on", "off"] },
    load: lazy<typeof import("./commands/continuation_hold.ts")>("./commands/continuation_hold.ts"),
  },
  {
    name: "continuation-clean",
    summary: "Remove keys long past their deadline, and killed writers' temp files",
    flags: [
      {
        name: "older-than",
        value: "DUR",
        help: "How long past its deadline a key is kept (default: 24h)",
      },
      { name: "dry-run", short: "n", help: "Report what would be removed; change nothing" },
      QUIET,
      LEDGER,
    ],
    load: lazy<typeof import("./commands/continuation_clean.ts")>(
      "./commands/continuation_clean.ts",
    ),
  },
  {
    name: "continuation-decline",
    summary: "Give up a continuation (a hook that will not send it)",
    flags: [
      KEY,
      { name: "reason", value: "R", help: "Why, one word (default: declined)" },
      { name: "plan-token", value: "T", help: "Only for the plan with this token" },
      QUIET,
      LEDGER,
    ],
    load: lazy<typeof import("./commands/continuation_decline.ts")>(
      "./commands/continuation_decline.ts",
    ),
  },
  {
    name: "exec",
    summary: "Run a command as a registered session and exit with its status",
    flags: [
      { name: "agent", value: "NAME", help: 'Agent name (else $ROSTER_AGENT; "" = anonymous)' },
      { name: "runtime", value: "NAME", help: "Runtime the agent runs on (else null)" },
      {
        name: "session-id",
        value: "ID",
        help: "Session id (else none: an id in the environment is the outer session's)",
      },
      {
        ...QUIET,
        help: "Only CMD's output: no line on stderr saying how the session ended",
      },
    ],
    positionals: { name: "CMD", min: 1, max: 100_000, usage: "[--] CMD [ARGS...]", rest: true },
    details: "The command's pid and start token are recorded before it can exit, however fast " +
      "it does. SIGINT, SIGTERM and SIGHUP are passed on to it (SIGINT only when roster's " +
      "stdin is not a terminal: there a Ctrl-C reaches the command itself). Exit code: the " +
      `command's; 128+N when signal N killed it; ${EXIT.COMMAND_NOT_FOUND} when there is no ` +
      `such command, ${EXIT.CANNOT_EXECUTE} when it cannot be run. The record then says how ` +
      "the session ended (ended_at, ended_reason: exit:N or signal:NAME), and so does one " +
      "line on stderr after CMD's output (not with --quiet).",
    load: lazy<typeof import("./commands/exec.ts")>("./commands/exec.ts"),
  },
  {
    name: "wait",
    summary: "Wait until processes, or a session, have ended",
    flags: [
      { name: "session-id", value: "ID", help: "Wait for the live session(s) with this id" },
      {
        name: "activity",
        value: "STATE",
        choices: ["working", "waiting", "idle"],
        help: "With --session-id: wait until the session's hooks say this, not for its end",
      },
      { name: "timeout", value: "DUR", help: "Give up after DUR: 500ms, 90s, 30m, 12h" },
    ],
    positionals: { name: "PID", min: 0, max: 1024, usage: "PID... | --session-id ID" },
    details: "The OS tells roster when a process ends (Linux: a pidfd; macOS, FreeBSD: a " +
      "kqueue; Windows: a process handle); where it cannot, each pid is probed with a backoff " +
      "from 10 ms to 250 ms. A pid with no process, or whose record's " +
      `process is gone, has already ended. Exit code: ${EXIT.OK} all ended; ` +
      `${EXIT.TIMEOUT} --timeout ran out first; ${EXIT.DEAD} no live session has that --session-id ` +
      "(with --activity: or it ended first). --activity looks at the records (roster activity) " +
      "every 10 ms to 250 ms.",
    load: lazy<typeof import("./commands/wait.ts")>("./commands/wait.ts"),
  },
  {
    name: "doctor",
    summary: "Show the home, identity, backend, store and hooks roster sees, and problems",
    flags: [],
    details: "One line of advice per problem found. Exit code: " +
      `${EXIT.OK} nothing wrong, ${EXIT.FAILURE} a problem was found.`,
    load: lazy<typeof import("./commands/doctor.ts")>("./commands/doctor.ts"),
  },
  {
    name: "hooks",
    summary: "Install, remove or show roster's hooks in a harness's settings",
    flags: [
      {
        name: "project",
        help: "The project's settings (in the current directory), not the user's",
      },
      {
        name: "dry-run",
        short: "n",
        help: "Print the file as it would be written; change nothing",
      },
      QUIET,
    ],
    positionals: {
      name: "ACTION HARNESS",
      min: 2,
      max: 2,
      each: [["install", "uninstall", "show"], ["claude", "codex", "pi", "gemini"]],
      usage: "install|uninstall|show claude|codex|pi|gemini",
    },
    details: "install merges the recipe into the settings file next to every other hook, " +
      "replacing an older roster hook, keeping a copy of the file as <file>.roster-backup and " +
      "writing atomically; again, it changes nothing. uninstall removes roster's hooks only. " +
      "The recipes are those of docs/hooks.md.",
    load: lazy<typeof import("./commands/hooks.ts")>("./commands/hooks.ts"),
  },
  {
    name: "schema",
    summary: "Print the JSON Schema of a JSON output",
    flags: [],
    positionals: { name: "NAME", min: 0, max: 1 },
    details: "Without NAME, lists the schemas. The same schemas are in the repository's schemas/.",
    load: lazy<typeof import("./commands/schema.ts")>("./commands/schema.ts"),
  },
  {
    name: "help",
    summary: "Show help for a command",
    flags: [],
    positionals: { name: "COMMAND", min: 0, max: 1 },
    load: lazy<typeof import("./commands/help.ts")>("./commands/help.ts"),
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
