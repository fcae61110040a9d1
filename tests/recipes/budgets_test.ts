/**
 * The recipes of docs/hooks.md against what the pinned releases do (issue 10, case 7): each
 * start and end hook gives roster a time budget, in its harness's unit (Claude Code's default
 * for SessionEnd is 1.5 s, less than a cold start on a busy machine), and the pi extension
 * listens for the events pi 0.73 emits (`session_switch` was removed in 0.65.0).
 */
import { assert, assertEquals } from "../assert.ts";
import { recipe } from "./harness.ts";

/** At least 10 s, in seconds (Claude Code, Codex) or milliseconds (Gemini CLI). */
const BUDGETS: [harness: string, min: number, events: string[]][] = [
  // Claude Code also reports what the session is doing (roster activity, issue 23).
  ["claude", 10, [
    "Notification",
    "PostToolUse",
    "PreToolUse",
    "SessionEnd",
    "SessionStart",
    "Stop",
    "UserPromptSubmit",
  ]],
  ["codex", 10, [
    "Interrupt",
    "PermissionRequest",
    "PostToolUse",
    "PreToolUse",
    "SessionEnd",
    "SessionStart",
    "Stop",
    "UserPromptSubmit",
  ]],
  ["gemini", 10_000, [
    "AfterAgent",
    "AfterTool",
    "BeforeAgent",
    "BeforeTool",
    "Notification",
    "SessionEnd",
    "SessionStart",
  ]],
];

Deno.test("recipes: every hook has a time budget in its harness's unit", async (t) => {
  for (const [harness, min, events] of BUDGETS) {
    await t.step(harness, () => {
      const { hooks } = JSON.parse(recipe(harness)) as {
        hooks: Record<string, { hooks: { command: string; timeout?: number }[] }[]>;
      };
      assertEquals(Object.keys(hooks).sort(), events);
      for (const [event, groups] of Object.entries(hooks)) {
        for (const h of groups.flatMap((g) => g.hooks)) {
          assert((h.timeout ?? 0) >= min, `${harness} ${event}: timeout ${h.timeout} < ${min}`);
        }
      }
    });
  }
});

Deno.test("recipes: the pi extension listens for the events pi emits", () => {
  const text = recipe("pi");
  const events = [...text.matchAll(/pi\.on\("([a-z_]+)"/g)].map((m) => m[1]).sort();
  assertEquals(events, [
    "agent_end",
    "agent_start",
    "session_shutdown",
    "session_start",
    "tool_execution_end",
    "tool_execution_start",
  ]);
});
