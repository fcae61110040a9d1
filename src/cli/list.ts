/** `roster list`: every registered session with its liveness; it only reads. */
import type { Liveness } from "../registry/record.ts";
import { readRows } from "../registry/registry.ts";
import type { Parsed } from "./args.ts";
import type { Context } from "./context.ts";
import { resolveCwd } from "./register.ts";
import { renderTable, useColour } from "./table.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const states = new Set(args.all("state") as Liveness[]);
  if (states.size === 0) {
    states.add("alive").add("unknown");
    if (args.has("all")) states.add("dead");
  }
  const agent = args.get("agent");
  const cwdFlag = args.get("cwd");
  const cwd = cwdFlag === undefined ? undefined : resolveCwd(cwdFlag, "--cwd");
  const rows = readRows(ctx.home, await ctx.judge()).filter((r) =>
    states.has(r.liveness) && (agent === undefined || r.agent === agent) &&
    (cwd === undefined || r.cwd === cwd)
  );
  if (ctx.json) ctx.printJson(rows);
  else if (rows.length === 0) ctx.err("No sessions registered.");
  else ctx.out(renderTable(rows, useColour()));
  return 0;
}
