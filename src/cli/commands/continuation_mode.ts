/** `roster continuation-mode [on|off|dry-run]`: set the ledger's mode, or say what it is and why. */
import { explainMode, MODES, setMode } from "../../continuation/admin.ts";
import type { Mode } from "../../continuation/rules.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir } from "../ledger_flags.ts";

export function run(ctx: Context, args: Parsed): number {
  const dir = ledgerDir(ctx, args);
  const wanted = args.positionals[0] as Mode | undefined;
  // The parser accepts only the choices spec.ts lists.
  if (wanted !== undefined && MODES.includes(wanted)) setMode(dir, wanted);
  const read = explainMode(dir);
  // --quiet only where something was set: asking for the mode is the whole point otherwise.
  if (wanted !== undefined && args.has("quiet")) return 0;
  if (ctx.json) ctx.printJson(read);
  else ctx.out(`Continuations are ${read.mode}` + (read.detail ? ` (${read.detail})` : ""));
  return 0;
}
