/** `roster park`: set a session aside on purpose: never live, never continued, kept (`--undo`). */
import { parkSession, unparkSession } from "../../registry/store_update.ts";
import { requireOwnProc } from "../../identity/liveness.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { printRow, sessionTarget } from "./resume.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  // A pid (named, or the caller's) is this namespace's only where /proc is; a session id is not.
  if (!args.has("session-id")) requireOwnProc(judge.backend, "park a session by its pid");
  const target = sessionTarget(args, "pid", "session-id", judge);
  const undo = args.has("undo");
  const row = await (undo ? unparkSession : parkSession)(ctx.home, ctx.host, judge, target);
  printRow(ctx, args, row, undo ? "Un-parked" : "Parked");
  return 0;
}
