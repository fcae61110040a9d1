/**
 * The checks every harness goes through, run against the real release: the start hook registers
 * the long-lived harness process with the right agent, session id and cwd; `whoami` from the
 * harness's own tool finds it; the end hook removes it; after a SIGKILL the record is dead,
 * `prune` keeps it for a restore and `prune --include-crashed` removes it. The hook costs seen on the way are written for the report.
 */
import { assert, assertEquals } from "../assert.ts";
import type { Row } from "../../src/registry/row.ts";
import type { StartOptions } from "./harnesses.ts";
import type { Kit } from "./kits.ts";
import {
  median,
  type Pane,
  parseWhoami,
  proc,
  type ProcInfo,
  readDone,
  Rig,
  waitFor,
  whoamiJob,
  type WhoamiResult,
} from "./rig.ts";

/**
 * Runs `roster whoami` through the harness's own shell tool (under `wrap`, e.g. BWRAP) and
 * returns what it printed.
 */
export async function whoamiFromTool(
  rig: Rig,
  pane: Pane,
  tag = "whoami",
  wrap: string[] = [],
): Promise<WhoamiResult> {
  const out = `${rig.proj}/${tag}-${Date.now()}.txt`;
  const job = rig.server.job(whoamiJob(out, wrap));
  await rig.prompt(pane, `Please do ${job} now.`);
  return parseWhoami(await readDone(out));
}

/** Ends the harness with its quit command (Enter again while a completion menu eats it). */
export async function quit(pane: Pane, kit: Kit, owner: ProcInfo): Promise<void> {
  await pane.type(kit.quit);
  for (let i = 0; i < 10 && proc(owner.pid) !== null; i++) {
    await new Promise((ok) => setTimeout(ok, 3_000));
    if (proc(owner.pid) !== null) await pane.keys("Enter");
  }
  await gone(owner.pid);
}

/** Waits until the process is gone (its pane may linger). */
export function gone(pid: number, ms = 60_000): Promise<true> {
  return waitFor(`pid ${pid} to exit`, () => proc(pid) === null, ms);
}

export function rowOf(rows: Row[], pid: number): Row | undefined {
  return rows.find((r) => r.session_pid === pid);
}

/** The record of `owner`, once its start hook has written it. */
export function ownRow(rig: Rig, owner: ProcInfo): Promise<Row> {
  return rig.row(
    `a record for pid ${owner.pid} (${owner.argv[0]})`,
    (r) => r.session_pid === owner.pid,
  );
}

/** Appends one harness's hook costs to $ROSTER_HOOK_COSTS (a JSON-lines file), if set. */
export function reportCosts(kit: Kit, rig: Rig): void {
  const calls = rig.calls();
  const of = (cmd: string) =>
    calls.filter(([c, , rc]) => c === cmd && rc === 0).map(([, ms]) => ms);
  const line = {
    harness: kit.name,
    register_ms: median(of("register")),
    register_n: of("register").length,
    unregister_ms: median(of("unregister")),
    unregister_n: of("unregister").length,
  };
  console.log(`hook cost: ${JSON.stringify(line)}`);
  const file = Deno.env.get("ROSTER_HOOK_COSTS");
  if (file) Deno.writeTextFileSync(file, JSON.stringify(line) + "\n", { append: true });
}

export interface LifecycleOptions extends StartOptions {
  /** Check the session id the record holds against the harness's own (default true). */
  checkSessionId?: boolean;
}

/**
 * Start, tool call, normal end: the record is the owner's, right in every field, and the end
 * hook removes it.
 */
export async function lifecycle(
  t: Deno.TestContext,
  kit: Kit,
  rig: Rig,
  opts: LifecycleOptions = {},
): Promise<void> {
  const pane = await kit.start(rig, opts);
  const owner = await kit.owner(pane);
  if (!kit.startsAtFirstPrompt) {
    await t.step("the start hook registers the harness process at launch", async () => {
      const row = await ownRow(rig, owner);
      assertEquals(row.liveness, "alive");
    });
  }
  const who = await whoamiFromTool(rig, pane);
  const row = await ownRow(rig, owner);
  await t.step("the owner is the long-lived harness process of the real tree", () => {
    assertEquals(row.session_pid, owner.pid);
    assertEquals([row.liveness, row.reason], ["alive", "running"]);
    assertEquals(row.agent, kit.agent);
    assertEquals(row.cwd, rig.proj);
    assertEquals(row.tmux_pane, pane.id);
  });
  if (opts.checkSessionId !== false) {
    await t.step("the session id is the harness's own", async () => {
      const truth = kit.idVar ? who.env[kit.idVar] : await kit.sessionId!(rig, owner);
      assert(truth, `the harness reported no session id (${kit.idVar})`);
      assertEquals(row.session_id, truth);
    });
  }
  await t.step("whoami from the harness's own tool finds the session", () => {
    assertEquals(who.code, 0, who.stderr);
    assertEquals(who.row?.session_pid, owner.pid);
    assertEquals(who.row?.session_id, row.session_id);
  });
  await t.step("the end hook removes the record", async () => {
    await quit(pane, kit, owner);
    await waitFor("the record to be removed", async () => !rowOf(await rig.rows(), owner.pid));
  });
}

/**
 * After a SIGKILL (no end hook) the record is dead: prune keeps it for a restore, and
 * `prune --include-crashed` removes it.
 */
export async function killed(t: Deno.TestContext, kit: Kit, rig: Rig, opts: StartOptions = {}) {
  const pane = await kit.start(rig, opts);
  const owner = await kit.owner(pane);
  if (kit.startsAtFirstPrompt) await whoamiFromTool(rig, pane, "first");
  await ownRow(rig, owner);
  Deno.kill(owner.pid, "SIGKILL");
  await gone(owner.pid);
  await t.step("after a SIGKILL the record is dead", async () => {
    const row = rowOf(await rig.rows(), owner.pid);
    assertEquals([row?.liveness, row?.reason], ["dead", "exited"]);
  });
  await t.step("prune keeps it for a restore; --include-crashed removes it", async () => {
    const kept = await rig.roster(["prune", "--json"]);
    assertEquals(kept.code, 0, kept.stderr);
    assertEquals(rowOf(await rig.rows(), owner.pid)?.liveness, "dead", "kept for roster restore");
    const r = await rig.roster(["prune", "--include-crashed", "--json"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(rowOf(await rig.rows(), owner.pid), undefined);
  });
}

export { Rig };
