/** `roster continuation-plan`: plan one automatic continue from a session's registry row. */
import { createPlan } from "../../continuation/plan.ts";
import type { Plan } from "../../continuation/schema.ts";
import { UsageError } from "../../errors.ts";
import { parsePid } from "../../identity/pid.ts";
import { parseDuration } from "../../time.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir, printPlan, requireKey } from "../ledger_flags.ts";

const MAX_MARKER = 4096;
const DEFAULT_DEADLINE = "1h";
const DEFAULT_SPACING = "5s";

function chainLimit(value: string | undefined): number | null {
  if (value === undefined) return null;
  const n = /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw new UsageError(
      `Invalid --chain-limit: expected a positive integer, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const sessionFlag = args.get("session");
  if (sessionFlag === undefined) {
    throw new UsageError("Missing --session: expected the interrupted session's PID");
  }
  const pid = parsePid(sessionFlag, "--session");
  const deadlineMs = parseDuration(args.get("deadline") ?? DEFAULT_DEADLINE, "--deadline");
  const nb = args.get("not-before");
  const notBeforeMs = nb === undefined ? null : parseDuration(nb, "--not-before", true);
  const spacingMs = parseDuration(args.get("spacing") ?? DEFAULT_SPACING, "--spacing", true);
  if (notBeforeMs !== null && notBeforeMs >= deadlineMs) {
    throw new UsageError(
      "Invalid --not-before: must be shorter than --deadline, or the plan could never dispatch",
    );
  }
  const frozenMarker = args.get("frozen-marker") ?? null;
  if (frozenMarker !== null && frozenMarker.length > MAX_MARKER) {
    throw new UsageError(`Invalid --frozen-marker: longer than ${MAX_MARKER} characters`);
  }
  const dir = ledgerDir(ctx, args);
  const judge = await ctx.judge();
  const planned = await createPlan({ dir, home: ctx.home, host: ctx.host, judge }, {
    key,
    pid,
    deadlineMs,
    notBeforeMs,
    spacingMs,
    frozenMarker,
    // The parser accepts only the choices spec.ts lists: signal or hard.
    cause: (args.get("cause") ?? null) as Plan["cause"],
    release: args.has("release"),
    chainLimit: chainLimit(args.get("chain-limit")),
  });
  printPlan(ctx, planned, "Planned");
  return 0;
}
