/** `roster continuation-release`: release a planned continuation, keeping its token. */
import { releasePlan } from "../../continuation/plan.ts";
import { UsageError } from "../../errors.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir, printPlan, requireKey } from "../ledger_flags.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const dir = ledgerDir(ctx, args);
  const judge = await ctx.judge();
  const pane = args.get("pane") ?? null;
  if (pane !== null && (pane === "" || pane.length > 256)) {
    throw new UsageError("Invalid --pane: expected a tmux pane id such as %3");
  }
  printPlan(ctx, await releasePlan(dir, judge, key, pane), "Released");
  return 0;
}
