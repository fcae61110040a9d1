/** `roster park`: set a session aside on purpose: never live, never continued, kept. */
import { parkSession } from "../../registry/store_update.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { printRow, sessionTarget } from "./resume.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  const target = sessionTarget(args, "pid", "session-id", judge);
  printRow(ctx, args, await parkSession(ctx.home, ctx.host, judge, target), "Parked");
  return 0;
}
