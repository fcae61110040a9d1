/** `roster continuation-release`: release a planned continuation, keeping its token. */
import { releasePlan } from "../../continuation/plan.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir, printPlan, requireKey } from "../continuation.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const dir = ledgerDir(ctx, args);
  const judge = await ctx.judge();
  printPlan(ctx, await releasePlan(dir, judge, key), "Released");
  return 0;
}
