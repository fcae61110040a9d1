/**
 * The Codex recipe of docs/hooks.md, end to end: its SessionStart command run through `sh -c`
 * under a stand-in `codex` process, with the hook's JSON on stdin as Codex passes it.
 */
import { assertEquals } from "../assert.ts";
import { installed, rosterJson, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { Harness, hookCommands, installRoster, recipe, recipeEnv, standIn } from "./harness.ts";

const [START] = hookCommands(recipe("codex"), "SessionStart");
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
