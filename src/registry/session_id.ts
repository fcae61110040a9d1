/**
 * The session ids harnesses declare to their hooks and tools, and the one a record carries:
 * apart from owner.ts (the harness table and the ancestor walk) so the commands that only read
 * records do not load the owner's code at start-up (docs/performance.md).
 */
import type { Owner } from "./owner.ts";

/**
 * Session ids a harness declares to its hooks and tools, by agent: only the owner's own count
 * (Gemini CLI keeps an inherited CLAUDE_CODE_SESSION_ID, Codex's tools inherit Claude's).
 */
export const SESSION_ID_VARS: Readonly<Record<string, readonly string[]>> = {
  claude: ["CLAUDE_CODE_SESSION_ID"],
  codex: ["CODEX_THREAD_ID", "CODEX_SESSION_ID"],
  gemini: ["GEMINI_SESSION_ID"],
};

/**
 * The variables a harness's tools see naming their session, innermost harness first (Claude's
 * are inherited by everything started inside it, so they come last).
 */
export const DECLARED_SESSION_VARS: readonly string[] = [
  "CODEX_THREAD_ID",
  "CODEX_SESSION_ID",
  "GEMINI_SESSION_ID",
  "CLAUDE_CODE_SESSION_ID",
  "ROSTER_SESSION_ID",
];

/**
 * The session id register records: `--session-id`; `$ROSTER_SESSION_ID` unless the owner is
 * an inner session (the variable is then an outer one's); the owner harness's own variable
 * (for Claude Code only while $CLAUDE_PID, if set, is the owner: else it was inherited).
 */
export function sessionIdOf(
  owner: Pick<Owner, "pid" | "harness" | "inner" | "source">,
  flag: string | undefined,
  env: (name: string) => string | undefined,
): string | null {
  if (flag) return flag;
  if (!owner.inner) {
    const roster = env("ROSTER_SESSION_ID");
    if (roster) return roster;
  }
  const agent = owner.harness?.agent ?? (owner.source === "CLAUDE_PID" ? "claude" : null);
  if (agent === "claude") {
    const claudePid = env("CLAUDE_PID");
    if (claudePid !== undefined && claudePid !== String(owner.pid)) return null;
  }
  for (const name of SESSION_ID_VARS[agent ?? ""] ?? []) {
    const v = env(name);
    if (v) return v;
  }
  // A session named by pid alone (--pid, $ROSTER_SESSION_PID) keeps the one variable roster
  // always read, as before, unless it belongs to an outer session.
  if (agent === null && !owner.inner) return env("CLAUDE_CODE_SESSION_ID") ?? null;
  return null;
}
