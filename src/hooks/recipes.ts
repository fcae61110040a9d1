/**
 * The hook recipes, as data: what `roster hooks install` writes into each harness's settings,
 * what `roster doctor` compares installed hooks against, and what docs/hooks.md shows (a test
 * holds the two equal). Change a recipe here and in docs/hooks.md together.
 */

/** The harnesses `roster hooks` knows. */
export const HOOK_HARNESSES = ["claude", "codex", "pi", "gemini"] as const;
export type Harness = typeof HOOK_HARNESSES[number];

/** One hook command as a harness's settings file holds it. */
export interface HookCommand {
  type: "command";
  command: string;
  /** In the harness's unit: seconds for Claude Code and Codex, milliseconds for Gemini CLI. */
  timeout?: number;
}

/** One entry of an event's list: an optional matcher and its commands. */
export interface HookGroup {
  matcher?: string;
  hooks: HookCommand[];
}

/** A recipe merged into a JSON settings file's `hooks` object, one group per event. */
export interface SettingsRecipe {
  kind: "settings";
  harness: Harness;
  /** Relative to the home directory (user) or the project directory (`--project`). */
  userPath: string;
  projectPath: string;
  /**
   * Another project file the harness reads hooks from, kept out of version control (Claude
   * Code's settings.local.json): doctor checks it; `hooks install` never writes it.
   */
  projectLocalPath?: string;
  events: Record<string, HookGroup>;
}

/** A recipe that is a whole file of its own (pi's extension). */
export interface FileRecipe {
  kind: "file";
  harness: Harness;
  userPath: string;
  projectPath: string;
  content: string;
}

export type Recipe = SettingsRecipe | FileRecipe;

const PI_EXTENSION =
  `import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

// Registers this pi process with roster while a session is open, with the session it is on.
// pi's bash tool runs commands with pi's own environment, so the variables set here tell them
// which session they are in, even from a sandbox where pi's pid is invisible.
export default function (pi: ExtensionAPI) {
  const pid = String(process.pid);
  // What the session is doing (roster activity): pi runs these handlers one at a time, in order.
  const activity = (...args: string[]) =>
    pi.exec("roster", ["activity", ...args, "--pid", pid, "--quiet"]);
  pi.on("session_start", async (_event, ctx: ExtensionContext) => {
    const id = ctx.sessionManager.getSessionId();
    process.env.ROSTER_SESSION_PID = pid;
    process.env.ROSTER_SESSION_ID = id;
    await pi.exec("roster", ["register", "--pid", pid, "--agent", "pi", "--session-id", id]);
    await activity("idle");
  });
  pi.on("session_shutdown", async () => {
    delete process.env.ROSTER_SESSION_ID;
    await pi.exec("roster", ["unregister", "--pid", pid, "--quiet"]);
  });
  pi.on("agent_start", async () => {
    await activity("working");
  });
  pi.on("agent_end", async () => {
    await activity("idle");
  });
  pi.on("tool_execution_start", async (event) => {
    await activity("--tool-start", event.toolCallId, "--tool-name", event.toolName);
  });
  pi.on("tool_execution_end", async (event) => {
    await activity("--tool-end", event.toolCallId, "--tool-name", event.toolName);
  });
}
`;

/** A Codex activity hook: the session from the hook's JSON on stdin (a shared server hosts many). */
const CODEX_ACTIVITY = (what: string) => `roster activity ${what} --session-id - --quiet`;

/**
 * Gemini CLI 0.61 gives its shell tool none of its session's variables (its hooks get
 * $GEMINI_SESSION_ID, its tools only a sanitized copy of its own environment), and no hook can
 * change that environment; a BeforeTool hook can rewrite the tool's arguments, so this one puts
 * an `export GEMINI_SESSION_ID=...` in front of each shell command (not on Windows, whose shell
 * is PowerShell). It reads the id from stdin: Gemini CLI rewrites `$GEMINI_SESSION_ID` in a hook
 * command itself.
 */
const GEMINI_TOOL_ENV = `jq -c 'if .tool_name == "run_shell_command" and ` +
  `(.session_id // "") != "" and ($ENV.OS // "") != "Windows_NT" then {hookSpecificOutput: ` +
  `{tool_input: {command: ("export GEMINI_SESSION_ID=" + (.session_id | @sh) + "; " + ` +
  `.tool_input.command)}}} else {} end'`;

/**
 * One event's group: an optional matcher, then `commands`, each with its harness's timeout (in
 * the harness's unit).
 */
function group(timeout: number, commands: string[], matcher?: string): HookGroup {
  return {
    ...(matcher === undefined ? {} : { matcher }),
    hooks: commands.map((command) => ({ type: "command", command, timeout })),
  };
}

/** A group for Claude Code and Codex, whose timeouts are in seconds: 10 seconds. */
const tenSeconds = (command: string, matcher?: string) => group(10, [command], matcher);
/** A group for Gemini CLI, whose timeouts are in milliseconds: 10 seconds too. */
const tenSecondsInMs = (...commands: string[]) => group(10000, commands);

export const RECIPES: Record<Harness, Recipe> = {
  claude: {
    kind: "settings",
    harness: "claude",
    userPath: ".claude/settings.json",
    projectPath: ".claude/settings.json",
    projectLocalPath: ".claude/settings.local.json",
    events: {
      // Not after a compaction (`compact`): Claude Code compacts in the middle of a turn and
      // works on, so `idle` there would call a working session idle and forget its open calls.
      SessionStart: tenSeconds(
        "roster register --quiet && roster activity idle --quiet",
        "startup|resume|clear",
      ),
      SessionEnd: tenSeconds("roster unregister --quiet"),
      UserPromptSubmit: tenSeconds("roster activity working --quiet"),
      Stop: tenSeconds("roster activity idle --quiet"),
      // Claude Code asks the person: a tool's permission, or an MCP server's question.
      Notification: tenSeconds(
        "roster activity waiting --quiet",
        "permission_prompt|elicitation_dialog",
      ),
      PreToolUse: tenSeconds("roster activity --tool-start - --quiet"),
      PostToolUse: tenSeconds("roster activity --tool-end - --quiet"),
    },
  },
  codex: {
    kind: "settings",
    harness: "codex",
    userPath: ".codex/hooks.json",
    projectPath: ".codex/hooks.json",
    events: {
      SessionStart: tenSeconds(
        "roster register --quiet --session-id \"$(jq -r '.session_id // empty')\"",
        "startup|resume",
      ),
      SessionEnd: tenSeconds(
        "roster unregister --quiet --session-id \"$(jq -r '.session_id // empty')\"",
      ),
      // What the session is doing; `--session-id -` names it from the hook's stdin, which a
      // shared server (default mode) needs to tell its hosted sessions apart.
      UserPromptSubmit: tenSeconds(CODEX_ACTIVITY("working")),
      Stop: tenSeconds(CODEX_ACTIVITY("idle")),
      Interrupt: tenSeconds(CODEX_ACTIVITY("idle")),
      PermissionRequest: tenSeconds(CODEX_ACTIVITY("waiting")),
      PreToolUse: tenSeconds(CODEX_ACTIVITY("--tool-start -")),
      PostToolUse: tenSeconds(CODEX_ACTIVITY("--tool-end -")),
    },
  },
  gemini: {
    kind: "settings",
    harness: "gemini",
    userPath: ".gemini/settings.json",
    projectPath: ".gemini/settings.json",
    events: {
      SessionStart: tenSecondsInMs("roster register --quiet && roster activity idle --quiet"),
      SessionEnd: tenSecondsInMs("roster unregister --quiet"),
      // What the session is doing. Its tool hooks carry no call id: a call is known by its
      // tool's name (tool_name), and Notification is only ever ToolPermission in 0.61.
      BeforeAgent: tenSecondsInMs("roster activity working --quiet"),
      AfterAgent: tenSecondsInMs("roster activity idle --quiet"),
      Notification: tenSecondsInMs("roster activity waiting --quiet"),
      // BeforeTool also tells a shell command its session (GEMINI_TOOL_ENV).
      BeforeTool: tenSecondsInMs("roster activity --tool-start - --quiet", GEMINI_TOOL_ENV),
      AfterTool: tenSecondsInMs("roster activity --tool-end - --quiet"),
    },
  },
  pi: {
    kind: "file",
    harness: "pi",
    userPath: ".pi/agent/extensions/roster.ts",
    projectPath: ".pi/extensions/roster.ts",
    content: PI_EXTENSION,
  },
};

/** The snippet docs/hooks.md shows and `roster hooks show` prints. */
export function recipeText(recipe: Recipe): string {
  if (recipe.kind === "file") return recipe.content;
  const hooks: Record<string, HookGroup[]> = {};
  for (const [event, group] of Object.entries(recipe.events)) hooks[event] = [group];
  return JSON.stringify({ hooks }, null, 2) + "\n";
}

/**
 * One roster call as the recipes write them (any version of them): register, unregister or
 * activity, with flags, their bare words (`idle`, `-`) and Codex's id read by jq, nothing else.
 */
const ROSTER_CALL =
  /^roster (?:register|unregister|activity)(?: (?:--[a-z][a-z-]*|-|[a-z]+|"\$\(jq -r '\.session_id \/\/ empty'\)"))*$/;

/**
 * A hook command that roster's recipes wrote (any version of them): roster calls alone, joined
 * by `&&`, or the Gemini CLI hook that tells shell commands their session (GEMINI_TOOL_ENV). A
 * command that does anything else (`roster activity idle; notify-send done`) is the user's,
 * and is never replaced or removed as roster's.
 */
export function isRosterCommand(command: unknown): boolean {
  if (typeof command !== "string") return false;
  if (command.trim() === GEMINI_TOOL_ENV) return true;
  // One space between words, as every recipe wrote them: a line break or a tab in a command
  // starts another command of the user's.
  return command.trim().split(" && ").every((call) => ROSTER_CALL.test(call));
}
