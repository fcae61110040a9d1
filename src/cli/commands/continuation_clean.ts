/** `roster continuation-clean`: remove keys long past their deadline and killed writers' temp files. */
import { cleanLedger } from "../../continuation/admin.ts";
import { parseDuration } from "../../time.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir } from "../ledger_flags.ts";

/** Keys are kept this long past their deadline: as long as the registry keeps an ended row. */
export const DEFAULT_CLEAN_AGE = "24h";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const olderThanMs = parseDuration(
    args.get("older-than") ?? DEFAULT_CLEAN_AGE,
    "--older-than",
    true,
  );
  const dryRun = args.has("dry-run");
  const dir = ledgerDir(ctx, args);
  const result = await cleanLedger(dir, await ctx.judge(), olderThanMs, dryRun);
  if (args.has("quiet")) return 0;
  if (ctx.json) {
    ctx.printJson(dryRun ? { ...result, dry_run: true } : result);
    return 0;
  }
  const verb = dryRun ? "Would remove" : "Removed";
  ctx.out(`${verb} ${result.keys.length} keys and ${result.temp_files.length} temp files.`);
  for (const k of result.keys) ctx.out(`  key ${k}`);
  for (const f of result.temp_files) ctx.out(`  ${f}`);
  return 0;
}
