/**
 * `roster prune`: remove ended records always (unless a continuation holds them), parked and
 * unknown ones only past an explicit age; list what was removed.
 */
import { prune } from "../../registry/store.ts";
import { parseDuration } from "../../time.ts";
import type { Parsed } from "../args.ts";
import { heldByContinuation } from "../keeping.ts";
import type { Context } from "../context.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const older = args.get("older-than");
  const olderThanMs = older === undefined ? null : parseDuration(older, "--older-than", true);
  const dryRun = args.has("dry-run");
  const result = await prune(ctx.home, await ctx.judge(), olderThanMs, dryRun, heldByContinuation);
  if (ctx.json) {
    ctx.printJson(dryRun ? { ...result, dry_run: true } : result);
    return 0;
  }
  if (args.has("quiet")) return 0;
  const verb = dryRun ? "Would remove" : "Removed";
  ctx.out(
    `${verb} ${result.removed.length} record${result.removed.length === 1 ? "" : "s"} ` +
      `(${result.dead_removed} dead, ${result.unknown_removed} unknown); kept ${result.kept}` +
      (result.held || result.parked
        ? ` (${result.held} held by a continuation, ${result.parked} parked).`
        : "."),
  );
  for (const r of result.removed) {
    ctx.out(`  ${r.session_pid ?? "?"}  ${r.liveness} (${r.reason})  ${r.path}`);
  }
  return 0;
}
