/**
 * `roster continuation-show --key K`: one key's state, and for a claim the message it handed to
 * the agent, so that a hook that lost its output can read it back.
 */
import { keyStatus } from "../../continuation/admin.ts";
import { UsageError } from "../../errors.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir, requireKey } from "../ledger_flags.ts";

export function run(ctx: Context, args: Parsed): number {
  const key = requireKey(args);
  const dir = ledgerDir(ctx, args);
  const status = keyStatus(dir, key);
  if (status.state === "none") {
    throw new UsageError(`Invalid --key: no continuation ${key} in ${dir}`);
  }
  if (ctx.json) {
    ctx.printJson(status);
    return 0;
  }
  ctx.out(
    `${key}: ${status.state}` + (status.reason ? ` (${status.reason})` : "") +
      (status.continuation_id ? `, continuation ${status.continuation_id}` : ""),
  );
  if (status.message !== null) ctx.out(status.message);
  return 0;
}
