/**
 * `whoami` from a tool command the harness runs in its sandbox: a new pid namespace where the
 * owner is invisible. roster answers from the session id the harness declares to its tools,
 * matched against the registry, and says the answer is unverified.
 */
import { assertEquals } from "../assert.ts";
import { CLAUDE, CODEX, type Kit } from "./kits.ts";
import { Rig } from "./rig.ts";
import { ownRow, whoamiFromTool } from "./scenario.ts";
import type { StartOptions } from "./harnesses.ts";

const HOST_PID_NS = Deno.readLinkSync("/proc/self/ns/pid");

async function sandboxed(
  t: Deno.TestContext,
  kit: Kit,
  opts: StartOptions & { noDaemon?: boolean },
) {
  await using rig = await Rig.create();
  const pane = await kit.start(rig, opts);
  const owner = await kit.owner(pane);
  const who = await whoamiFromTool(rig, pane);
  const row = await ownRow(rig, owner);
  await t.step("the tool ran in another pid namespace", () => {
    assertEquals(who.pidNs !== HOST_PID_NS && who.pidNs.startsWith("pid:["), true, who.pidNs);
  });
  await t.step("whoami finds the session by its declared id, unverified", () => {
    assertEquals(who.code, 0, who.stderr);
    assertEquals(who.row?.session_pid, owner.pid);
    assertEquals(who.row?.session_id, who.env[kit.idVar!]);
    assertEquals(who.row?.session_id, row.session_id);
    const extra = who.row as unknown as { verified?: boolean; matched_by?: string };
    assertEquals([extra.verified, extra.matched_by], [false, kit.idVar]);
  });
}

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "sandbox: Claude Code with sandbox.enabled, whoami from its Bash tool",
  ...opts,
  fn: (t) => sandboxed(t, CLAUDE, { sandbox: true }),
});

Deno.test({
  name: "sandbox: Codex --no-daemon in its default sandbox, whoami from its shell tool",
  ...opts,
  fn: (t) => sandboxed(t, CODEX, { noDaemon: true }),
});
