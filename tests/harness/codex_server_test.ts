/**
 * The real Codex release in its DEFAULT mode: every session of a HOME and its hooks run inside
 * one shared `codex app-server ... --managed-daemon` that outlives the terminals. Two concurrent
 * sessions must get two records, and a session whose terminal is gone must never read as
 * `alive` for as long as the server runs (roster cannot tell from the server whether a session
 * it hosts is still in use: the verdict is `unknown (hosted)`).
 */
import { assert, assertEquals } from "../assert.ts";
import { CODEX } from "./kits.ts";
import { descendants, proc, type ProcInfo, Rig, waitFor } from "./rig.ts";
import { pidsMentioning } from "../helpers.ts";
import { gone, whoamiFromTool } from "./scenario.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** The shared server: a codex process running `app-server`, under this rig's HOME. */
function server(rig: Rig): ProcInfo | null {
  for (const pid of pidsMentioning(rig.base, true)) {
    const p = proc(pid);
    if (p && p.argv.includes("app-server")) return p;
  }
  return null;
}

Deno.test({
  name: "Codex default (app-server) mode: one record per session, never alive for ever",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    const paneA = await CODEX.start(rig);
    const tuiA = await CODEX.owner(paneA);
    const whoA = await whoamiFromTool(rig, paneA, "a");
    const paneB = await CODEX.start(rig);
    const tuiB = await CODEX.owner(paneB);
    const whoB = await whoamiFromTool(rig, paneB, "b");
    const srv = await waitFor("the codex app-server", () => server(rig), 30_000);
    const idA = whoA.env.CODEX_THREAD_ID;
    const idB = whoB.env.CODEX_THREAD_ID;

    await t.step("the sessions and their hooks run in one shared server", () => {
      assert(idA && idB, "Codex declared no session id to its tools");
      assert(idA !== idB, "one session id for two sessions");
      // The first terminal starts it (setsid); the second only connects to it.
      assert(!descendants(tuiB.pid).some((p) => p.pid === srv.pid), "a server per terminal");
    });

    const rows = await waitFor("two codex records", async () => {
      const rs = (await rig.rows()).filter((r) => r.agent === "codex");
      return rs.length >= 2 ? rs : null;
    }, 60_000);
    await t.step("two concurrent sessions: two records, each with its own session id", () => {
      assertEquals(rows.map((r) => r.session_id).sort(), [idA, idB].sort());
      for (const r of rows) assertEquals(r.cwd, rig.proj);
    });

    await t.step("a hosted session is never alive on the server's word: unknown (hosted)", () => {
      for (const r of rows) {
        assertEquals(r.session_pid, srv.pid);
        assertEquals([r.liveness, r.reason], ["unknown", "hosted"]);
      }
    });

    await t.step("whoami from each session's tool finds that session", () => {
      assertEquals(whoA.code, 0, whoA.stderr);
      assertEquals(whoB.code, 0, whoB.stderr);
      assertEquals(whoA.row?.session_id, idA);
      assertEquals(whoB.row?.session_id, idB);
    });

    await t.step(
      "a SIGKILL of a terminal: the server lives on, its sessions are not alive",
      async () => {
        Deno.kill(tuiA.pid, "SIGKILL");
        await gone(tuiA.pid);
        assert(proc(srv.pid) !== null, "the server died with the terminal");
        const after = (await rig.rows()).filter((r) => r.agent === "codex");
        assertEquals(after.length, 2);
        for (const r of after) assert(r.liveness !== "alive", JSON.stringify(r));
      },
    );

    await t.step(
      "once the server is gone, its sessions are dead: kept for a restore, removed on request",
      async () => {
        Deno.kill(tuiB.pid, "SIGKILL");
        await gone(tuiB.pid);
        Deno.kill(srv.pid, "SIGKILL");
        await gone(srv.pid);
        const after = (await rig.rows()).filter((r) => r.agent === "codex");
        assertEquals(after.map((r) => [r.liveness, r.reason]), [["dead", "exited"], [
          "dead",
          "exited",
        ]]);
        // `codex resume <id>` brings each back: prune keeps them within retention.
        const kept = await rig.roster(["prune", "--json"]);
        assertEquals(kept.code, 0, kept.stderr);
        assertEquals((await rig.rows()).filter((r) => r.agent === "codex").length, 2);
        const r = await rig.roster(["prune", "--include-crashed", "--json"]);
        assertEquals(r.code, 0, r.stderr);
        assertEquals((await rig.rows()).filter((r) => r.agent === "codex"), []);
      },
    );
  },
});
