/**
 * Codex 0.169 runs a hook only once a person trusted it (issue 22 item 8): `roster doctor` against
 * the real release says the recipe's hooks are untrusted, and after Codex's own "Hooks need
 * review" dialog trusts them, that they are not any more (the keys Codex writes are the ones
 * doctor looks for).
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { startCodex } from "./harnesses.ts";
import { Rig } from "./rig.ts";
import { setUpCodex } from "./harnesses.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "Codex: doctor's verdict on hook trust, before and after the TUI trusts them",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    const doctor = async () => {
      const r = await rig.roster(["doctor", "--json"], rig.baseEnv());
      return (JSON.parse(r.stdout).problems as { what: string; advice: string }[])
        .filter((p) => /^Codex has not trusted/.test(p.what));
    };
    setUpCodex(rig, { sandbox: false });
    await t.step("before: untrusted, with the advice", async () => {
      const p = await doctor();
      assertEquals(p.length, 1);
      // None of the recipe's hooks is trusted yet, however many it installs.
      assertMatch(p[0].what, /\((\d+) of \1\)/);
    });
    const pane = await startCodex(
      rig,
      { sandbox: false, noDaemon: true } as Parameters<
        typeof startCodex
      >[1],
    );
    await t.step("after Codex's dialog trusted them: no trust problem", async () => {
      assertEquals(await doctor(), []);
    });
    await pane.keys("C-c");
  },
});
