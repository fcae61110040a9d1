/**
 * The real Codex release (tests/harness/rig.ts pins it) with the recipe from docs/hooks.md, run
 * with `--no-daemon` (the session and its hooks run inside the TUI process) and its sandbox off
 * (whoami from inside the sandbox is in sandbox_test.ts).
 */
import { CODEX } from "./kits.ts";
import { killed, lifecycle, reportCosts, Rig } from "./scenario.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "Codex --no-daemon: start hook, owner, session, whoami from its tool, end hook",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await lifecycle(
      t,
      CODEX,
      rig,
      { noDaemon: true, sandbox: false } as Parameters<typeof lifecycle>[3],
    );
    reportCosts(CODEX, rig);
  },
});

Deno.test({
  name:
    "Codex --no-daemon: after a SIGKILL the record is dead, kept for a restore, removed on request",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await killed(t, CODEX, rig, { noDaemon: true, sandbox: false } as Parameters<typeof killed>[3]);
  },
});
