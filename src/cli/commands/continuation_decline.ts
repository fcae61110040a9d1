/** `roster continuation-decline --key K`: the hook gives up; the key is decided as declined. */
import { declineKey } from "../../continuation/admin.ts";
import { UsageError } from "../../errors.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir, requireKey } from "../ledger_flags.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const reason = args.get("reason") ?? "declined";
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(reason)) {
    throw new UsageError(
      `Invalid --reason: expected 1 to 64 of A-Z a-z 0-9 . _ : -, got ${
        JSON.stringify(reason.slice(0, 80))
      }`,
    );
  }
  const token = args.get("plan-token") ?? null;
  const dir = ledgerDir(ctx, args);
  const done = await declineKey(dir, await ctx.judge(), key, reason, token);
  if (args.has("quiet")) return 0;
  if (ctx.json) ctx.printJson(done);
  else {
    ctx.out(
      done.outcome === "declined"
        ? `Declined ${key} (${reason})`
        : `${key} was already ${done.outcome}`,
    );
  }
  return 0;
}
