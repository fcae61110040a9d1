/**
 * The Codex recipe of docs/hooks.md, end to end: its SessionStart command run through `sh -c`
 * under a stand-in `codex` process, with the hook's JSON on stdin as Codex passes it; and the
 * same under a stand-in of Codex's shared server (`codex app-server`, its default mode), which
 * hosts many sessions and outlives their terminals.
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { installed, rosterJson, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { parentOf } from "../../src/fs/path.ts";
import { Harness, hookCommands, installRoster, recipe, recipeEnv, standIn } from "./harness.ts";

const [START] = hookCommands(recipe("codex"), "SessionStart");
const [END] = hookCommands(recipe("codex"), "SessionEnd");
const hasJq = installed("jq");

Deno.test("recipe: Codex SessionStart registers the codex process", async (t) => {
  await using dir = await tempDir("roster-recipe-");
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  const env = recipeEnv(dir.path, home);
  await using codex = Harness.start(standIn(dir.path, "codex"), env, dir.path);
  const input = JSON.stringify({
    session_id: "019a-codex-thread",
    hook_event_name: "SessionStart",
    source: "startup",
  });
  const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);

  await t.step("startup registers it, with the session id from the hook's stdin", async () => {
    const r = await codex.hook(START, input);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    const all = await rows();
    assertEquals(
      all.map((x) => [x.session_pid, x.agent, x.pid_source, x.liveness]),
      [[codex.pid, "codex", "ancestor", "alive"]],
    );
    if (hasJq) assertEquals(all[0].session_id, "019a-codex-thread");
    else {
      console.log("jq is missing: the recipe registers without a session id");
      assertEquals(all[0].session_id, null);
    }
  });

  await t.step("resume fires it again: still one record", async () => {
    assertEquals((await codex.hook(START, input)).code, 0);
    assertEquals((await rows()).map((x) => x.session_pid), [codex.pid]);
  });

  await t.step("a hook input without a session id registers with a null one", async () => {
    assertEquals((await codex.hook(START, "{}")).code, 0);
    assertEquals((await rows()).map((x) => x.session_id), [null]);
  });

  await t.step(
    "with no end hook, an exited codex leaves a dead record that prune removes",
    async () => {
      await codex.exit();
      const all = await rows();
      assertEquals(all.map((x) => [x.liveness, x.reason]), [["dead", "exited"]]);
      await rosterJson(home, ["prune"]);
      assertEquals(await rows(), []);
    },
  );
});

Deno.test({
  name: "recipe: Codex's shared server: one record per hosted session, never alive on its word",
  async fn(t) {
    await using dir = await tempDir("roster-recipe-");
    const home = `${dir.path}/home`;
    installRoster(dir.path);
    const env = recipeEnv(dir.path, home);
    await using server = Harness.start(standIn(dir.path, "codex"), env, dir.path, ["app-server"]);
    const input = (id: string, event: string) =>
      JSON.stringify({ session_id: id, hook_event_name: event, source: "startup" });
    const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);
    const summary = async () =>
      (await rows()).map((x) => [x.session_pid, x.session_id, x.hosted, x.liveness, x.reason])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1])));

    await t.step("two sessions of one server: two records, unknown (hosted)", async () => {
      for (const id of ["thread-a", "thread-b"]) {
        const r = await server.hook(START, input(id, "SessionStart"));
        assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
      }
      assertEquals(await summary(), [
        [server.pid, "thread-a", true, "unknown", "hosted"],
        [server.pid, "thread-b", true, "unknown", "hosted"],
      ]);
    });

    await t.step("the start hook again (resume) refreshes its own record only", async () => {
      assertEquals((await server.hook(START, input("thread-a", "SessionStart"))).code, 0);
      assertEquals((await rows()).length, 2);
    });

    await t.step("whoami from a tool under the server names the tool's own session", async () => {
      for (const id of ["thread-a", "thread-b"]) {
        const r = await server.hook(`CODEX_THREAD_ID=${id} roster whoami --json`);
        assertEquals(r.code, 0, r.stderr);
        assertEquals(JSON.parse(r.stdout).session_id, id);
      }
    });

    await t.step("the activity hooks write into their own session's record", async () => {
      const [PROMPT] = hookCommands(recipe("codex"), "UserPromptSubmit");
      const [PRE] = hookCommands(recipe("codex"), "PreToolUse");
      const [ASK] = hookCommands(recipe("codex"), "PermissionRequest");
      const [STOP] = hookCommands(recipe("codex"), "Stop");
      const activity = async () =>
        (await rows() as (Row & { open_tool_calls: { id: string }[] })[])
          .map((r) => [r.session_id, r.activity, r.open_tool_calls.map((c) => c.id)])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      const tool = (id: string, event: string) =>
        JSON.stringify({
          session_id: id,
          hook_event_name: event,
          tool_name: "Bash",
          tool_use_id: "call_7",
        });
      for (
        const [cmd, text] of [[PROMPT, input("thread-a", "UserPromptSubmit")], [
          PRE,
          tool("thread-a", "PreToolUse"),
        ], [ASK, tool("thread-b", "PermissionRequest")]]
      ) {
        const r = await server.hook(cmd, text);
        assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
      }
      assertEquals(await activity(), [
        ["thread-a", "working", ["call_7"]],
        ["thread-b", "waiting", []],
      ]);
      assertEquals((await server.hook(STOP, input("thread-a", "Stop"))).code, 0);
      assertEquals((await activity())[0], ["thread-a", "idle", []]);
    });

    await t.step(
      "a token-less <pid>.json beside the server's sessions takes none of their activity",
      async () => {
        // A record with no start token is its pid's whatever holds the pid now, so it proves
        // nothing of the server: the hook asks what the process is, and writes to its session.
        const [PROMPT] = hookCommands(recipe("codex"), "UserPromptSubmit");
        const [a] = (await rows()).filter((r) => r.session_id === "thread-a");
        const plain = `${parentOf(a.path!)}/${server.pid}.json`;
        const stale = {
          ...JSON.parse(Deno.readTextFileSync(a.path!)),
          start_token: null,
          hosted: false,
          session_id: "old-session",
        };
        Deno.writeTextFileSync(plain, JSON.stringify(stale, null, 2) + "\n", { mode: 0o600 });
        try {
          const r = await server.hook(PROMPT, input("thread-b", "UserPromptSubmit"));
          assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
          const now = (await rows()).map((x) => [x.session_id, x.activity]).sort();
          assertEquals(now, [
            ["old-session", "idle"],
            ["thread-a", "idle"],
            ["thread-b", "working"],
          ]);
        } finally {
          Deno.removeSync(plain);
        }
      },
    );

    await t.step("a start hook with no session id cannot say which session: exit 2", async () => {
      const r = await server.hook(START, "{}");
      assertEquals(r.code, 2);
      assertMatch(r.stderr, /Missing --session-id: pid \d+ \(codex\) is a shared server/);
      assertEquals((await rows()).length, 2);
    });

    await t.step("the end hook removes its session's record, not the other's", async () => {
      const r = await server.hook(END, input("thread-a", "SessionEnd"));
      assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
      assertEquals(await summary(), [[server.pid, "thread-b", true, "unknown", "hosted"]]);
    });

    await t.step(
      "once the server is gone its sessions are dead: kept for a restore, removed on request",
      async () => {
        await server.crash();
        assertEquals((await summary()).map((x) => x.slice(3)), [["dead", "exited"]]);
        // `codex resume <id>` can bring it back: prune keeps it within retention.
        const kept = await rosterJson<{ retained: number }>(home, ["prune"]);
        assertEquals([kept.retained, (await rows()).length], [1, 1]);
        await rosterJson(home, ["prune", "--include-crashed"]);
        assertEquals(await rows(), []);
      },
    );
  },
});
