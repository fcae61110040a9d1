/**
 * The continue's facts in `roster restore` (src/cli/restore/flow.ts), read from the registry as
 * `roster activity` writes them: `activity` (null before any hook said), `activity_at`, and
 * `open_tool_calls` as `{id, name, started_at}` with `name` null where the harness gave none.
 */
import { assertEquals } from "../assert.ts";
import type { Row } from "../../src/registry/row.ts";
import {
  idleState,
  openToolCalls,
  recordsActivity,
  spokeSince,
} from "../../src/cli/restore/flow.ts";

/** A row with the activity fields as the activity command writes them (or without them). */
function row(over: Record<string, unknown> = {}): Row {
  return {
    schema: 1,
    session_pid: 100,
    agent: "claude",
    session_id: "sid-1",
    liveness: "alive",
    reason: "alive",
    path: "/s/100.json",
    ...over,
  } as unknown as Row;
}

const AT = "2026-12-02T06:00:00.000Z";

Deno.test("open tool calls as the activity command records them name each call and its id", () => {
  const r = row({
    open_tool_calls: [
      { id: "toolu_01", name: "Bash", started_at: AT },
      { id: "call_2", name: null, started_at: AT },
      { id: "", name: "Read", started_at: AT },
    ],
  });
  assertEquals(openToolCalls(r), [
    { id: "toolu_01", name: "Bash" },
    { id: "call_2", name: "unnamed tool" },
  ]);
  assertEquals(openToolCalls(row()), []);
  assertEquals(openToolCalls(row({ open_tool_calls: [] })), []);
});

Deno.test("a session whose hooks said anything records activity; null fields say nothing", () => {
  assertEquals(recordsActivity(row()), false);
  assertEquals(recordsActivity(row({ activity: null, activity_at: null })), false);
  assertEquals(recordsActivity(row({ activity: "working", activity_at: AT })), true);
  assertEquals(recordsActivity(row({ activity: "idle", activity_at: AT })), true);
});

Deno.test("the continue waits for the successor's own idle, and never without activity hooks", () => {
  const killedInTool = row({
    activity: "working",
    activity_at: AT,
    open_tool_calls: [{ id: "toolu_01", name: "Bash", started_at: AT }],
  });
  const noHooks = row({ activity: null, activity_at: null, open_tool_calls: [] });
  const fresh = row({ session_pid: 200, activity: null, activity_at: null });
  // Its hooks record activity: a successor that has said nothing yet is waited for.
  assertEquals(idleState(killedInTool, fresh).kind, "wait");
  assertEquals(idleState(killedInTool, row({ activity: "working", activity_at: AT })), {
    kind: "wait",
    why: "the session is working",
  });
  assertEquals(idleState(killedInTool, row({ activity: "waiting", activity_at: AT })).kind, "wait");
  assertEquals(idleState(killedInTool, row({ activity: "idle", activity_at: AT })), {
    kind: "idle",
  });
  // Records that predate the activity fields, or hooks without the activity recipes: never.
  assertEquals(idleState(noHooks, fresh).kind, "never");
  assertEquals(idleState(row(), row({ session_pid: 200 })).kind, "never");
  // The successor's own word counts even when the predecessor's hooks said nothing.
  assertEquals(idleState(noHooks, row({ activity: "idle", activity_at: AT })).kind, "idle");
});

Deno.test("the typed continue was submitted once the session's hooks said anything after it", () => {
  const typed = Date.parse(AT);
  // The idle that let the continue go is older than the typing: it says nothing of it.
  assertEquals(spokeSince(row({ activity: "idle", activity_at: AT }), typed + 1), false);
  assertEquals(spokeSince(row({ activity: "working", activity_at: AT }), typed), true);
  assertEquals(spokeSince(row(), typed), false);
});
