/**
 * The activity recipes of docs/hooks.md with each real release (tests/harness/activity.ts):
 * working, a tool call opened and closed, idle.
 */
import { activityJourney, waitingJourney } from "./activity.ts";
import { CLAUDE, CODEX, GEMINI, PI } from "./kits.ts";
import { Rig } from "./rig.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "Claude Code: its hooks record working, the open tool call and idle",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await activityJourney(t, CLAUDE, rig);
  },
});

Deno.test({
  name: "Codex --no-daemon: its hooks record working, the open tool call and idle",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await activityJourney(t, CODEX, rig, { noDaemon: true, sandbox: false } as never);
  },
});

Deno.test({
  name: "Codex default (server) mode: its hooks record the hosted session's activity",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await activityJourney(t, CODEX, rig, { sandbox: false });
  },
});

Deno.test({
  name: "pi: its extension records working, the open tool call and idle",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await activityJourney(t, PI, rig);
  },
});

Deno.test({
  name: "Gemini CLI: its hooks record working, the open tool call and idle",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await activityJourney(t, GEMINI, rig);
  },
});

Deno.test({
  name: "Claude Code: asking for a tool's permission, its hooks record waiting",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await waitingJourney(t, CLAUDE, rig);
  },
});

Deno.test({
  name: "Gemini CLI: asking for a tool's permission, its hooks record waiting",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await waitingJourney(t, GEMINI, rig);
  },
});
