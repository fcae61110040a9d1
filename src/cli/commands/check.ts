/** `roster check PID...`: the liveness of each pid against its record (or bare, without one). */
import { EXIT } from "../../exit.ts";
import { bareVerdict, type Verdict } from "../../identity/liveness.ts";
import { parsePid } from "../../identity/pid.ts";
import { asProcess } from "../../process/types.ts";
import { bareRow, type CheckRow, type Row } from "../../registry/row.ts";
import { readRecordRow } from "../../registry/store.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { describeRow } from "../terminal.ts";

/** check's exit code: 0 all alive, 3 any dead, 4 any unknown and none dead. */
export function checkExitCode(verdicts: readonly Verdict[]): number {
  if (verdicts.some((v) => v.liveness === "dead")) return EXIT.DEAD;
  if (verdicts.some((v) => v.liveness === "unknown")) return EXIT.UNKNOWN;
  return EXIT.OK;
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const pids = args.positionals.map((p) => parsePid(p, "PID"));
  const judge = await ctx.judge();
  const rows: CheckRow[] = pids.map((pid) => {
    const row = readRecordRow(ctx.home, ctx.host, pid, judge);
    if (row !== null) return { ...row, registered: true };
    const probe = asProcess(judge.probe(pid, true));
    return bareRow(pid, ctx.host, probe, judge.here.bootId, bareVerdict(probe));
  });
  if (ctx.json) ctx.printJson(rows);
  else {
    for (const r of rows) {
      ctx.out(
        r.registered
          ? describeRow(r as Row)
          : `pid ${r.session_pid} (${r.liveness}: ${r.reason}), not registered`,
        true, // describeRow escaped what the record holds; the rest is roster's own
      );
    }
  }
  return checkExitCode(rows);
}
