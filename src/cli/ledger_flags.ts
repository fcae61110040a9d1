/**
 * What the continuation commands share: the `--key` and `--ledger` flags, and how a plan is
 * printed. The flows are src/continuation/check.ts and plan.ts, the decision rules.ts.
 */
import { defaultLedger } from "../continuation/ledger.ts";
import { isValidKey, KEY_RULE, type Plan } from "../continuation/schema.ts";
import { UsageError } from "../errors.ts";
import type { Parsed } from "./args.ts";
import { absolutePath, type Context } from "./context.ts";

export function requireKey(args: Parsed): string {
  const key = args.get("key");
  if (key === undefined) {
    throw new UsageError(`Missing --key: expected a continuation key (${KEY_RULE})`);
  }
  if (!isValidKey(key)) {
    throw new UsageError(
      `Invalid --key: expected ${KEY_RULE}, got ${JSON.stringify(key.slice(0, 200))}`,
    );
  }
  return key;
}

export function ledgerDir(ctx: Context, args: Parsed): string {
  const flag = args.get("ledger");
  if (flag === "") {
    throw new UsageError("Invalid --ledger: expected a directory path, got an empty string");
  }
  return flag === undefined ? defaultLedger(ctx.home) : absolutePath(flag, "--ledger");
}

export function printPlan(ctx: Context, plan: Plan, verb: string) {
  if (ctx.args.has("quiet")) return;
  if (ctx.json) ctx.printJson(plan);
  else {
    ctx.out(
      `${verb} ${plan.key} for pid ${plan.session.session_pid} (${plan.state}` +
        (plan.deadline ? `, deadline ${plan.deadline}` : "") + ")",
    );
  }
}
