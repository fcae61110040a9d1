/**
 * A dead record never read alive from a sandbox (issue 22, item 1), with the real Claude Code:
 * a session is SIGKILLed and resumed by hand with the same session id (`claude --resume <id>`);
 * from the successor's Bash tool under `bwrap --unshare-pid`, `roster list --all` calls only the
 * successor `alive (own-session)` and `whoami` answers with the successor, never the dead one.
 */
import { assert, assertEquals } from "../assert.ts";
import type { Row } from "../../src/registry/row.ts";
import { shq } from "../recipes/harness.ts";
import { claudeEnv } from "./harnesses.ts";
import { CLAUDE } from "./kits.ts";
import { BWRAP, harnessBin, parseWhoami, readDone, Rig, waitFor } from "./rig.ts";
import { ownRow } from "./scenario.ts";

const HOST_PID_NS = Deno.readLinkSync("/proc/self/ns/pid");

Deno.test({
  name: "own session: a SIGKILLed Claude Code resumed by id, seen from its successor's sandbox",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using rig = await Rig.create();
    const pane = await CLAUDE.start(rig);
    const old = await CLAUDE.owner(pane);
    // A turn, so that there is a conversation to resume.
    await rig.prompt(pane, "Please remember the word MARIGOLD.");
    await waitFor("the first turn's answer", () => pane.screen().then((s) => /Ok\./.test(s)));
    const before = await ownRow(rig, old);
    const sid = before.session_id;
    assert(sid, "the start hook recorded the session id");
    // A window that keeps the tmux server up once the killed session's pane is gone.
    await rig.launch(["sleep", "3600"], rig.baseEnv());
    Deno.kill(old.pid, "SIGKILL");
    // Exited: gone, or a zombie its parent has not reaped yet (seen past a minute in CI); either
    // is dead to roster, which is all this test needs of the predecessor.
    await waitFor(`pid ${old.pid} to exit`, () => {
      try {
        const stat = Deno.readTextFileSync(`/proc/${old.pid}/stat`);
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
      } catch {
        return true;
      }
    });

    // Resumed by hand, in another window of the same tmux server: the same session id.
    const env = rig.baseEnv(claudeEnv(rig));
    const next = await rig.launch([harnessBin("claude"), "--resume", sid], env);
    await next.waitScreen(/❯/, 120_000);
    const successor = await CLAUDE.owner(next);
    const after = await ownRow(rig, successor);
    assertEquals(after.session_id, sid, "claude --resume keeps the session id");

    const out = `${rig.proj}/sandboxed-${Date.now()}.txt`;
    const body = `roster list --all --json; echo __whoami; roster whoami --json; ` +
      `echo "__rc $?"; readlink /proc/self/ns/pid; echo __done`;
    const job = rig.server.job(`${BWRAP.map(shq).join(" ")} sh -c ${shq(body)} > ${shq(out)} 2>&1`);
    await rig.prompt(next, `Please do ${job} now.`);
    const text = await readDone(out);
    const [listed, rest] = text.split("__whoami\n");
    const who = parseWhoami(rest);
    const rows = JSON.parse(listed) as Row[];

    await t.step("the tool ran in another pid namespace", () => {
      assert(who.pidNs !== HOST_PID_NS && who.pidNs.startsWith("pid:["), who.pidNs);
    });
    await t.step("list --all: the dead predecessor is not alive, the successor is", () => {
      const dead = rows.find((r) => r.path === before.path);
      const live = rows.find((r) => r.path === after.path);
      assertEquals([dead?.session_id, live?.session_id], [sid, sid]);
      assertEquals([dead?.liveness, dead?.reason], ["unknown", "other-pid-ns"]);
      assertEquals([live?.liveness, live?.reason], ["alive", "own-session"]);
    });
    await t.step("whoami answers with the successor, unverified", () => {
      assertEquals(who.code, 0, who.stderr);
      assertEquals(who.row?.session_pid, successor.pid);
      const extra = who.row as unknown as { verified?: boolean; matched_by?: string };
      assertEquals([extra.verified, extra.matched_by], [false, "CLAUDE_CODE_SESSION_ID"]);
    });
    await t.step("from the host: the predecessor dead, the successor alive", async () => {
      const all = await rig.rows();
      const dead = all.find((r) => r.path === before.path);
      const live = all.find((r) => r.path === after.path);
      assertEquals([dead?.liveness, live?.liveness], ["dead", "alive"]);
    });
  },
});
