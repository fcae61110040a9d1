/**
 * `roster restore` with the real Claude Code release (tests/harness/restore.ts): killed inside a
 * tool call, killed with its whole tmux server (each gets exactly one continue, after its hooks
 * say it is idle), and killed before its first prompt (no conversation to resume: the relaunch
 * dies at once).
 */
import { claudeEnv } from "./harnesses.ts";
import { CLAUDE } from "./kits.ts";
import { crashAndRestore, failsAtOnce } from "./restore.ts";
import { Rig } from "./rig.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "Claude Code: SIGKILLed mid-conversation, roster restore resumes it",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await crashAndRestore(t, CLAUDE, "claude", rig, {
      harnessEnv: claudeEnv(rig),
      expectContinue: true,
      inTool: true,
    });
  },
});

Deno.test({
  name: "Claude Code: killed with its whole tmux server, roster restore resumes it",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await crashAndRestore(t, CLAUDE, "claude", rig, {
      harnessEnv: claudeEnv(rig),
      killServer: true,
      expectContinue: true,
    });
  },
});

Deno.test({
  name: "Claude Code: a relaunch that dies at once is failed, restorable, and tried again",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await failsAtOnce(
      t,
      CLAUDE,
      "claude",
      rig,
      { harnessEnv: claudeEnv(rig) },
      /No conversation found/,
    );
  },
});
