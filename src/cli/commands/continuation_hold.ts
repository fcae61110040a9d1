/** `roster continuation-hold [on|off]`: hold every continuation, or lift the hold. */
import { holdIsOn, setHold } from "../../continuation/admin.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir } from "../ledger_flags.ts";

export function run(ctx: Context, args: Parsed): number {
  const dir = ledgerDir(ctx, args);
  const wanted = args.positionals[0];
  if (wanted !== undefined) setHold(dir, wanted === "on");
  const hold = holdIsOn(dir);
  if (wanted !== undefined && args.has("quiet")) return 0;
  if (ctx.json) ctx.printJson({ hold });
  else ctx.out(hold ? "Continuations are held." : "No hold.");
  return 0;
}
