/** The real Gemini CLI release (tests/harness/rig.ts pins it) with the recipe from docs/hooks.md. */
import { GEMINI } from "./kits.ts";
import { killed, lifecycle, reportCosts, Rig } from "./scenario.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "Gemini CLI: start hook, owner, session, whoami from its tool, end hook",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await lifecycle(t, GEMINI, rig);
    reportCosts(GEMINI, rig);
  },
});

Deno.test({
  name: "Gemini CLI: after a SIGKILL the record is dead, kept for a restore, removed on request",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await killed(t, GEMINI, rig);
  },
});
