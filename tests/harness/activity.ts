/**
 * The activity recipes against a real release: its hooks say `working` while a turn runs, open
 * a tool call when its tool starts and close it when it ends, and say `idle` once the turn is
 * over (and, where the start hook fires at launch, at start). The calls the hooks made show
 * which events the release really sent.
 */
import { assert, assertEquals } from "../assert.ts";
import type { Row } from "../../src/registry/row.ts";
import type { StartOptions } from "./harnesses.ts";
import type { Kit } from "./kits.ts";
import { type Rig, waitFor } from "./rig.ts";

type ActivityRow = Row & {
  activity: string | null;
  open_tool_calls: { id: string; name: string | null }[];
};

export async function activityJourney(
  t: Deno.TestContext,
  kit: Kit,
  rig: Rig,
  opts: StartOptions = {},
): Promise<void> {
  const pane = await kit.start(rig, opts);
  const owner = await kit.owner(pane);
  // In Codex's server mode the record is the shared server's (hosted), not the TUI's.
  const mine = (r: Row) =>
    r.session_pid === owner.pid || (r.hosted === true && r.agent === kit.agent);
  const row = async () => (await rig.rows()).find(mine) as ActivityRow | undefined;
  if (!kit.startsAtFirstPrompt) {
    await t.step("the start hook says idle at launch", async () => {
      const r = await waitFor("an idle record", async () => {
        const r = await row();
        return r?.activity === "idle" ? r : null;
      }, 90_000);
      assertEquals(r.open_tool_calls, []);
    });
  }
  const marker = `${rig.proj}/tool-${Date.now()}`;
  const release = `${marker}.go`;
  const job = rig.server.job(
    `touch ${marker}; while [ ! -e ${release} ]; do sleep 0.2; done; echo done`,
  );
  const from = rig.callArgs().length;
  await rig.prompt(pane, `Please do ${job} now.`);
  await waitFor("the tool call to run", () => exists(marker), 90_000);
  await t.step("while its tool runs: working, with the tool call open", async () => {
    const r = await waitFor("the open tool call", async () => {
      const r = await row();
      return r?.open_tool_calls.length ? r : null;
    }, 30_000);
    assertEquals(r.activity, "working");
    assertEquals(r.open_tool_calls.length, 1);
  });
  Deno.writeTextFileSync(release, "");
  await t.step("once the turn is over: idle, the call closed", async () => {
    const r = await waitFor("an idle record", async () => {
      const r = await row();
      return r?.activity === "idle" && r.open_tool_calls.length === 0 ? r : null;
    }, 90_000);
    assertEquals(r.open_tool_calls, []);
  });
  await t.step("the events the release sent, in order", async () => {
    const order = [
      "activity working",
      "activity --tool-start",
      "activity --tool-end",
      "activity idle",
    ];
    const seen = () =>
      rig.callArgs().slice(from).filter((a) => a.startsWith("activity"))
        .map((a) => a.replace(/ --(session-id|pid|tool-name) \S+/g, "").replace(/ --quiet/g, ""))
        .map((a) => a.replace(/--tool-(start|end) \S+/, "--tool-$1"));
    // The rig's roster logs a call once it has returned: after its record was written.
    await waitFor("the last call in the log", () => seen().includes(order.at(-1)!), 15_000)
      .catch(() => {});
    const calls = seen();
    console.log(`${kit.name} activity calls: ${JSON.stringify(calls)}`);
    let at = -1;
    for (const want of order) {
      const i = calls.indexOf(want, at + 1);
      assert(i > at, `no "${want}" after the earlier events: ${JSON.stringify(calls)}`);
      at = i;
    }
  });
}

/**
 * A tool call that asks the person first: the harness's notification hook says `waiting`
 * while it asks.
 */
export async function waitingJourney(
  t: Deno.TestContext,
  kit: Kit,
  rig: Rig,
  opts: StartOptions = {},
): Promise<void> {
  const pane = await kit.start(rig, { ...opts, ask: true });
  const owner = await kit.owner(pane);
  // Not a read-only command (Claude Code runs `echo` and the like without asking).
  const job = rig.server.job(`python3 -c "print(${Date.now()})" > asked.txt`);
  await rig.prompt(pane, `Please do ${job} now.`);
  await t.step("while it asks for the tool's permission: waiting", async () => {
    try {
      await waitFor("a waiting record", async () => {
        const r = (await rig.rows()).find((r) => r.session_pid === owner.pid) as
          | ActivityRow
          | undefined;
        return r?.activity === "waiting" ? r : null;
      }, 90_000);
    } catch (err) {
      const calls = rig.callArgs().filter((a) => a.startsWith("activity"));
      throw new Error(`${err}\ncalls: ${JSON.stringify(calls)}\n${await pane.screen()}`);
    }
  });
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
