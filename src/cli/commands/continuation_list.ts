/** `roster continuation-list`: every key of the ledger with its state, plan, outcome and age. */
import { listKeys } from "../../continuation/admin.ts";
import { formatAge } from "../../time.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir } from "../ledger_flags.ts";
import { printable } from "../terminal.ts";

export function run(ctx: Context, args: Parsed): number {
  const keys = listKeys(ledgerDir(ctx, args));
  if (ctx.json) {
    ctx.printJson(keys);
    return 0;
  }
  if (keys.length === 0) {
    ctx.err("No continuations in the ledger.");
    return 0;
  }
  const header = ["KEY", "STATE", "PLAN", "OUTCOME", "AGE", "SESSION"];
  const cells = keys.map((k) =>
    [
      k.key,
      k.state + (k.reason ? ` (${k.reason})` : ""),
      k.plan ?? "-",
      k.outcome ?? "-",
      k.age_ms === null ? "-" : formatAge(k.age_ms),
      k.session_id ?? (k.session_pid === null ? "-" : String(k.session_pid)),
    ].map(printable)
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((v, i) => v.padEnd(widths[i])).join("  ").trimEnd();
  ctx.out([line(header), ...cells.map(line)].join("\n"), true); // each cell escaped above
  return 0;
}
