import { envVar } from "../../env.ts";
/** `roster list`: every registered session with its liveness; it only reads. */
import type { Liveness, LivenessJudge } from "../../identity/liveness.ts";
import { type Row, sortRows } from "../../registry/row.ts";
import { readRows } from "../../registry/store.ts";
import type { Parsed } from "../args.ts";
import { type Context, realDir } from "../context.ts";
import { renderTable, useColour } from "../table.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const states = new Set(args.all("state") as Liveness[]);
  if (states.size === 0) {
    states.add("alive").add("unknown");
    if (args.has("all")) states.add("dead");
  }
  const agent = args.get("agent");
  const cwdFlag = args.get("cwd");
  const cwd = cwdFlag === undefined ? undefined : realDir(cwdFlag, "--cwd");
  const judge = await ctx.judge();
  let all: Row[] = readRows(ctx.home, judge);
  if (args.has("discover")) all = await withDiscovered(all, judge);
  const rows = all.filter((r) =>
    states.has(r.liveness) && (agent === undefined || r.agent === agent) &&
    (cwd === undefined || r.cwd === cwd)
  );
  if (ctx.json) ctx.printJson(rows);
  else if (rows.length === 0) ctx.err("No sessions registered.");
  else ctx.out(renderTable(rows, useColour()), true);
  return 0;
}

/** Adds the sessions harnesses record themselves; every row then says where it came from. */
async function withDiscovered(rows: Row[], judge: LivenessJudge): Promise<Row[]> {
  const d = await import("../../registry/discover.ts");
  const dir = d.claudeSessionsDir(envVar, Deno.build.os);
  const found = dir === null ? [] : d.discoverClaude(dir, judge);
  return sortRows(d.mergeDiscovered(rows, found, judge.here.host));
}
