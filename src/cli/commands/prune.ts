/** `roster prune`: remove dead records always, unknown ones only past an explicit age. */
import { prune } from "../../registry/store.ts";
import { parseDuration } from "../../time.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const older = args.get("older-than");
  const olderThanMs = older === undefined ? null : parseDuration(older, "--older-than", true);
  const dryRun = args.has("dry-run");
  const result = await prune(ctx.home, await ctx.judge(), olderThanMs, dryRun);
  if (ctx.json) {
    ctx.printJson(dryRun ? { ...result, dry_run: true } : result);
    return 0;
  }
  const verb = dryRun ? "Would remove" : "Removed";
  ctx.out(
    `${verb} ${result.removed.length} record${result.removed.length === 1 ? "" : "s"} ` +
      `(${result.dead_removed} dead, ${result.unknown_removed} unknown); kept ${result.kept}.`,
  );
  for (const r of result.removed) {
    ctx.out(`  ${r.session_pid ?? "?"}  ${r.liveness} (${r.reason})  ${r.path}`);
  }
  return 0;
}
