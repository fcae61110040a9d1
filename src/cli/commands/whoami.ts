/** `roster whoami`: the registered live session that owns the calling process. */
import { RosterError } from "../../errors.ts";
import { ancestors } from "../../registry/owner.ts";
import { readRecordRow } from "../../registry/store.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { describeRow, printable } from "../table.ts";

/**
 * The nearest ancestor of the caller (the caller included) that registered itself and is
 * alive with a matching start token. Walks at most MAX_DEPTH levels (registry/owner.ts).
 */
export async function run(ctx: Context, _args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  for (const info of ancestors(judge.backend, Deno.ppid)) {
    const row = readRecordRow(ctx.home, ctx.host, info.pid, judge);
    // "running": the record has a start token and it matches the process's now; verified:
    // the process registered itself (or a descendant did), not a pid someone else named.
    if (row === null || row.reason !== "running" || row.pid_verified !== true) continue;
    if (ctx.json) ctx.printJson(row);
    else {
      ctx.out(
        describeRow(row) + (row.session_id ? `, session ${printable(row.session_id)}` : "") +
          (row.cwd ? `, in ${printable(row.cwd)}` : ""),
      );
    }
    return 0;
  }
  throw new RosterError(
    "No registered live session owns this process: none of its ancestors registered itself",
  );
}
