/**
 * Harnesses started from inside a Claude Code session (its Bash tool exports CLAUDE_PID and
 * CLAUDE_CODE_SESSION_ID to them): `codex exec` and `gemini -p` each get their own record, with
 * their own session id, and Claude's record survives both, untouched.
 */
import { assert, assertEquals } from "../assert.ts";
import type { Row } from "../../src/registry/row.ts";
import { claudeEnv, geminiEnv, setUpCodex, setUpGemini } from "./harnesses.ts";
import { CLAUDE } from "./kits.ts";
import { harnessBin, readDone, Rig } from "./rig.ts";
import { ownRow, rowOf } from "./scenario.ts";
import { shq } from "../recipes/harness.ts";

Deno.test({
  name: "nested: codex exec and gemini -p started from Claude Code's Bash tool",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using rig = await Rig.create();
    setUpCodex(rig, { sandbox: false });
    setUpGemini(rig);
    const env = { MOCK_API_KEY: "sk-mock", ...geminiEnv(rig), ...claudeEnv(rig) };
    const pane = await CLAUDE.start(rig, { env });
    const claude = await CLAUDE.owner(pane);
    const before = await ownRow(rig, claude);
    assert(before.session_id, "Claude's record has its session id");

    // What the inner harnesses' own tools see: the registry while they run.
    const codexSeen = `${rig.proj}/codex-list.json`;
    const geminiSeen = `${rig.proj}/gemini-list.json`;
    const list = (out: string) => `roster list --json > ${shq(out)} 2>&1`;
    const codexJob = rig.server.job(list(codexSeen));
    const geminiJob = rig.server.job(list(geminiSeen));
    const done = `${rig.proj}/nested.done`;
    // codex exec cannot show the hook-trust dialog: --dangerously-bypass-hook-trust runs the
    // recipe's hooks as the dialog would after "Trust all".
    const outer = rig.server.job(
      `${shq(harnessBin("codex"))} exec --skip-git-repo-check --dangerously-bypass-hook-trust ` +
        `${shq(`Please do ${codexJob} now.`)} > codex.log 2>&1; ` +
        `${shq(harnessBin("gemini"))} --approval-mode yolo -p ${
          shq(`Please do ${geminiJob} now.`)
        }` +
        ` > gemini.log 2>&1; echo __done > ${shq(done)}`,
    );
    await rig.prompt(pane, `Please do ${outer} now.`);
    await readDone(done, 240_000);

    const seenByCodex = JSON.parse(Deno.readTextFileSync(codexSeen)) as Row[];
    const seenByGemini = JSON.parse(Deno.readTextFileSync(geminiSeen)) as Row[];
    await t.step("codex exec got its own record, with its own session id", () => {
      const codex = seenByCodex.find((r) => r.agent === "codex");
      assert(codex, `no codex record in ${JSON.stringify(seenByCodex)}`);
      assert(codex.session_pid !== claude.pid);
      assert(codex.session_id && codex.session_id !== before.session_id);
      const c = rowOf(seenByCodex, claude.pid);
      assertEquals([c?.agent, c?.session_id, c?.cwd], ["claude", before.session_id, before.cwd]);
    });
    await t.step("gemini -p got its own record, with its own session id", () => {
      const gemini = seenByGemini.find((r) => r.agent === "gemini");
      assert(gemini, `no gemini record in ${JSON.stringify(seenByGemini)}`);
      assert(gemini.session_pid !== claude.pid);
      assert(gemini.session_id && gemini.session_id !== before.session_id);
      const c = rowOf(seenByGemini, claude.pid);
      assertEquals([c?.agent, c?.session_id], ["claude", before.session_id]);
    });
    await t.step("Claude's record survives both, untouched", async () => {
      const after = rowOf(await rig.rows(), claude.pid);
      assertEquals(
        [after?.liveness, after?.agent, after?.session_id, after?.cwd, after?.start_token],
        ["alive", "claude", before.session_id, before.cwd, before.start_token],
      );
    });
  },
});
