/**
 * `whoami` from a tool command the harness runs in its sandbox: a new pid namespace where the
 * owner is invisible. roster answers from the session id the harness declares to its tools,
 * matched against the registry, and says the answer is unverified. pi and Gemini CLI have no
 * sandbox of their own and declare no id to their tools: there the recipe does (pi's extension
 * sets $ROSTER_SESSION_ID, Gemini CLI's BeforeTool hook exports $GEMINI_SESSION_ID), and the
 * tool command wraps itself in bubblewrap as a person's sandbox would.
 */
import { assertEquals } from "../assert.ts";
import { CLAUDE, CODEX, GEMINI, type Kit, PI } from "./kits.ts";
import { BWRAP, Rig } from "./rig.ts";
import { ownRow, whoamiFromTool } from "./scenario.ts";
import type { StartOptions } from "./harnesses.ts";

const HOST_PID_NS = Deno.readLinkSync("/proc/self/ns/pid");

interface SandboxCase extends StartOptions {
  noDaemon?: boolean;
  /** The tool command's own wrap (the harness has no sandbox). */
  wrap?: string[];
  /** The variable whoami matches by (else the harness's own, kit.idVar). */
  declared?: string;
}

async function sandboxed(t: Deno.TestContext, kit: Kit, opts: SandboxCase) {
  await using rig = await Rig.create();
  const pane = await kit.start(rig, opts);
  const owner = await kit.owner(pane);
  const who = await whoamiFromTool(rig, pane, "whoami", opts.wrap);
  const row = await ownRow(rig, owner);
  const declared = opts.declared ?? kit.idVar!;
  await t.step("the tool ran in another pid namespace", () => {
    assertEquals(who.pidNs !== HOST_PID_NS && who.pidNs.startsWith("pid:["), true, who.pidNs);
  });
  await t.step("whoami finds the session by its declared id, unverified", () => {
    assertEquals(who.code, 0, who.stderr);
    assertEquals(who.row?.session_pid, owner.pid);
    assertEquals(who.row?.session_id, who.env[declared]);
    assertEquals(who.row?.session_id, row.session_id);
    const extra = who.row as unknown as { verified?: boolean; matched_by?: string };
    assertEquals([extra.verified, extra.matched_by], [false, declared]);
  });
  if (kit.sessionId) {
    await t.step("the declared id is the harness's own, from its session file", async () => {
      assertEquals(who.env[declared], await kit.sessionId!(rig, owner));
    });
  }
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

Deno.test({
  name: "sandbox: pi, whoami from its bash tool under bwrap --unshare-pid",
  ...opts,
  fn: (t) => sandboxed(t, PI, { wrap: BWRAP, declared: "ROSTER_SESSION_ID" }),
});

Deno.test({
  name: "sandbox: Gemini CLI, whoami from its shell tool under bwrap --unshare-pid",
  ...opts,
  fn: (t) => sandboxed(t, GEMINI, { wrap: BWRAP, declared: "GEMINI_SESSION_ID" }),
});
