/**
 * The journey against a real release: a session mid-conversation is killed (SIGKILL; or the
 * whole tmux server with it), then `roster restore` brings it back. The conversation must be
 * resumed (the stand-in model sees the earlier turn in the resumed session's request) and the
 * model must receive exactly one continue, sent after the resumed session reported idle; killed
 * inside a tool call, that message names the call.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { tmuxSocketPath } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import type { StartOptions } from "./harnesses.ts";
import type { Kit } from "./kits.ts";
import { descendants, harnessBin, type HarnessName, Pane, type Rig, waitFor } from "./rig.ts";
import { gone, ownRow } from "./scenario.ts";

export interface RestoreCase extends StartOptions {
  /** Kill the tmux server too (every pane at once, as a crash of the terminal does). */
  killServer?: boolean;
  /** Kill it while a tool call runs. */
  inTool?: boolean;
  /** The harness's own environment for the restore's caller (API settings). */
  harnessEnv?: Record<string, string>;
  /** More restore flags. */
  restoreArgs?: string[];
  /**
   * Whether the resumed session's hooks can say it is idle (the activity recipes): then it
   * gets exactly one continue; else none is ever typed, and the test types a turn itself.
   */
  expectContinue?: boolean;
}

export interface RestoreReport {
  session_pid: number;
  session_id: string;
  result: string;
  reason: string;
  successor_pid: number | null;
  pane: string | null;
  continued: boolean | null;
  continue_reason: string | null;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Every request the model got whose text holds `needle`. */
function requestsWith(rig: Rig, needle: string, from = 0) {
  return rig.server.requests.slice(from).filter((r) => JSON.stringify(r.body).includes(needle));
}

/**
 * The environment `roster restore` runs with, as a person's shell would give it: the caller's
 * PATH has the harness (the rig's tmux server's does not: the restore must pass it), and $TMUX
 * names the rig's server (dead or alive). Not the test runner's CI=true (.ci/run sets it): a
 * tmux server restore starts inherits restore's environment, and Gemini CLI 0.61 reads CI=true
 * as headless and exits at once.
 */
function restoreEnv(rig: Rig, name: HarnessName, c: { harnessEnv?: Record<string, string> }) {
  const bin = harnessBin(name);
  return {
    ...rig.baseEnv(c.harnessEnv),
    CI: "false",
    PATH: `${bin.slice(0, bin.lastIndexOf("/"))}:${rig.baseEnv().PATH}`,
    TMUX: `${tmuxSocketPath(rig.socket)},0,0`,
  };
}

export async function crashAndRestore(
  t: Deno.TestContext,
  kit: Kit,
  name: HarnessName,
  rig: Rig,
  c: RestoreCase = {},
): Promise<void> {
  const pane = await kit.start(rig, c);
  const owner = await kit.owner(pane);
  const word = `MARIGOLD${crypto.randomUUID().slice(0, 6)}`;
  await rig.prompt(pane, `Please remember the word ${word}.`);
  // In Codex's server mode the record is the shared server's (hosted), not the TUI's.
  const row = await rig.row(
    `the record of ${owner.argv[0]}`,
    (r) => r.session_pid === owner.pid || (r.hosted === true && r.agent === kit.agent),
  );
  assert(row.session_id, "the start hook recorded the session id");
  // The turn is over (the model's answer came): what is killed is a session at its prompt, or
  // (inTool) one inside a tool call.
  await waitFor("the first turn's answer", () => pane.screen().then((s) => /Ok\./.test(s)));
  let toolId: string | null = null;
  if (c.inTool) {
    const marker = `${rig.proj}/tool-${Date.now()}`;
    const job = rig.server.job(`touch ${marker}; sleep 900`);
    await rig.prompt(pane, `Please do ${job} now.`);
    await waitFor("the tool call to run", () => {
      try {
        Deno.statSync(marker);
        return true;
      } catch {
        return false;
      }
    }, 90_000);
    const open = await waitFor("the tool call recorded as open", async () => {
      // By its path: in Codex's server mode the record is the server's, not the owner's.
      const r = (await rig.rows()).find((x) => x.path === row.path) as
        | (Row & { open_tool_calls?: { id: string }[] })
        | undefined;
      return r?.open_tool_calls?.length ? r.open_tool_calls : null;
    }, 30_000);
    toolId = open[0].id;
  }
  // The server's pid asked first: the tree is read and killed with no wait between, so that no
  // pid in it has meanwhile ended (a hook's) and been taken by another process.
  const srv = c.killServer ? await rig.tmux(["display-message", "-p", "#{pid}"]) : null;
  const tree = [owner.pid, ...descendants(owner.pid).map((p) => p.pid)];
  // A hosted session comes back only once its server is gone: it goes with the crash.
  if (row.hosted) tree.push(row.session_pid!);
  if (srv !== null) {
    for (const pid of [...tree, Number(srv.stdout.trim())]) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
  } else {
    Deno.kill(owner.pid, "SIGKILL");
  }
  await gone(owner.pid);
  if (row.hosted) await gone(row.session_pid!);
  await t.step("the killed session's record is dead and restorable", async () => {
    const dead = (await rig.rows()).find((r) => r.path === row.path);
    assertEquals([dead?.liveness, dead?.successor], ["dead", null]);
  });

  const before = rig.server.requests.length;
  const env = restoreEnv(rig, name, c);
  // The one automatic continue is off until a person allows it (docs/continuation.md).
  if (c.expectContinue) {
    const on = await rig.roster(["continuation-mode", "on"], env, 60_000);
    assertEquals(on.code, 0, on.stdout + on.stderr);
  }
  const r = await rig.roster(
    ["restore", "--json", "--agent", kit.agent, ...(c.restoreArgs ?? [])],
    env,
    240_000,
  );
  const out = JSON.parse(r.stdout || "[]") as RestoreReport[];
  const mine = out.find((o) =>
    o.session_pid === row.session_pid && o.session_id === row.session_id
  );
  await t.step("roster restore brought it back, linked to what it was", async () => {
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(mine?.result, "restored", r.stdout);
    const rows = await rig.rows();
    const old = rows.find((x) => x.path === row.path)!;
    assertEquals(old.reason, "resumed");
    assertEquals(old.successor?.pid, mine!.successor_pid);
    // Codex registers only at the first prompt: its record comes with the next turn, which
    // is the continue when there is one.
    if (kit.startsAtFirstPrompt && !c.expectContinue) return;
    const next = rows.find((x) => x.session_pid === mine!.successor_pid)!;
    assertEquals(next.session_id, row.session_id);
    assertEquals(next.cwd, row.cwd);
  });
  if (!c.expectContinue) {
    await t.step(
      "no continue without the session saying it is idle; the turns are resumed",
      async () => {
        assertEquals(mine?.continued, false, r.stdout);
        assert(mine?.continue_reason, "a reason is given");
        assertEquals(requestsWith(rig, "Roster continuation").length, 0);
        const resumed = new Pane(rig, mine!.pane!, mine!.successor_pid!);
        const ask = `Say the word again ${crypto.randomUUID().slice(0, 4)}.`;
        await rig.prompt(resumed, ask);
        const sent = requestsWith(rig, ask, before)[0];
        assert(
          JSON.stringify(sent.body).includes(word),
          "the resumed request lacks the first turn",
        );
        await rig.row(
          "a live record of the resumed session",
          (x) => x.session_id === row.session_id && x.path !== row.path && x.liveness !== "dead",
        );
      },
    );
    return;
  }
  await t.step(
    "the model got exactly one continue, after the session said it was idle",
    async () => {
      assertEquals([mine?.continued, mine?.continue_reason], [true, null], r.stdout);
      const sent = await waitFor(
        "the continue at the model",
        () => requestsWith(rig, "Roster continuation", before).at(0),
        90_000,
      );
      // The resumed conversation: the earlier turn is in the request that carries the continue.
      assert(JSON.stringify(sent.body).includes(word), "the resumed request lacks the first turn");
      if (toolId !== null) {
        assertMatch(JSON.stringify(sent.body), /These tool calls were left open/);
        assert(JSON.stringify(sent.body).includes(toolId), `the message does not name ${toolId}`);
      }
      await sleep(5_000);
      const continues = new Set(
        requestsWith(rig, "Roster continuation", before).map((q) =>
          /Roster continuation ([0-9a-f]+)/.exec(JSON.stringify(q.body))![1]
        ),
      );
      assertEquals(continues.size, 1, "one continuation id, ever");
      const [id] = continues;
      const last = JSON.stringify(rig.server.requests.at(-1)!.body);
      assertEquals(last.split(`Roster continuation ${id}:`).length - 1, 1, "sent once");
    },
  );
}

/**
 * A session killed before its first prompt has no conversation to resume: the relaunch dies at
 * once. It is reported failed with the harness's own words, left restorable, and tried again.
 */
export async function failsAtOnce(
  t: Deno.TestContext,
  kit: Kit,
  name: HarnessName,
  rig: Rig,
  c: RestoreCase,
  says: RegExp,
): Promise<void> {
  const pane = await kit.start(rig, c);
  const owner = await kit.owner(pane);
  const row = await ownRow(rig, owner);
  Deno.kill(owner.pid, "SIGKILL");
  await gone(owner.pid);
  const env = restoreEnv(rig, name, c);
  for (const n of [1, 2]) {
    await t.step(`restore #${n}: failed, with why, and left restorable`, async () => {
      const r = await rig.roster(["restore", "--json", "--agent", kit.agent], env, 240_000);
      assertEquals(r.code, 1, r.stdout + r.stderr);
      const o = (JSON.parse(r.stdout) as (RestoreReport & { failures: number })[])
        .find((x) => x.session_pid === owner.pid)!;
      assertEquals([o.result, o.failures, o.successor_pid], ["failed", n, null]);
      assertMatch(o.reason, says);
      const now = (await rig.rows()).find((x) => x.path === row.path);
      assertEquals([now?.liveness, now?.successor], ["dead", null]);
    });
  }
}
