/**
 * `roster resume`: record the session that continues an ended or parked one, linking the two
 * (the old row names its successor; `list` shows the successor's predecessor).
 */
import { UsageError } from "../../errors.ts";
import { parsePid } from "../../identity/pid.ts";
import type { LivenessJudge } from "../../identity/liveness.ts";
import { resolveOwner } from "../../registry/owner.ts";
import type { Row } from "../../registry/row.ts";
import { readRecordRow } from "../../registry/store.ts";
import { resumeSession, type SessionTarget } from "../../registry/store_update.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { printable } from "../terminal.ts";

/** The session a flag pair names: `--<pidFlag>`, `--<idFlag>`, else the calling session. */
export function sessionTarget(
  args: Parsed,
  pidFlag: string,
  idFlag: string,
  judge: LivenessJudge,
  callerAllowed = true,
): SessionTarget {
  const pid = args.get(pidFlag);
  const id = args.get(idFlag);
  if (pid !== undefined && id !== undefined) {
    throw new UsageError(`Invalid --${pidFlag}: give --${pidFlag} or --${idFlag}, not both`);
  }
  if (id !== undefined) {
    if (id === "" || id.length > 1024) {
      throw new UsageError(
        `Invalid --${idFlag}: expected a session id, got ${JSON.stringify(id.slice(0, 80))}`,
      );
    }
    return { sessionId: id };
  }
  if (pid !== undefined) return { pid: parsePid(pid, `--${pidFlag}`) };
  if (!callerAllowed) {
    throw new UsageError(`Missing --${idFlag}: expected the session to resume (or --${pidFlag})`);
  }
  return { pid: callerPid(judge) };
}

/** The calling session, found as `register` finds it. */
function callerPid(judge: LivenessJudge): number {
  return resolveOwner(
    { flagPid: undefined, env: (n) => Deno.env.get(n), selfPid: Deno.pid, selfPpid: Deno.ppid },
    judge.cachedBackend(),
  ).pid;
}

export function printRow(ctx: Context, args: Parsed, row: Row, verb: string) {
  if (args.has("quiet")) return;
  if (ctx.json) ctx.printJson(row);
  else {
    // One line, whatever the record's agent and id hold (a line break in them is escaped).
    ctx.out(
      printable(
        `${verb} ${row.agent ? `${row.agent} session` : "session"} ${row.session_pid}` +
          (row.session_id ? ` (${row.session_id})` : ""),
      ),
      true,
    );
  }
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  const old = sessionTarget(args, "pid", "session-id", judge, false);
  const flag = args.get("successor-pid");
  const pid = flag === undefined ? callerPid(judge) : parsePid(flag, "--successor-pid");
  const probe = judge.probe(pid, true);
  if (probe.kind !== "exists" || probe.info.zombie) {
    throw new UsageError(`Invalid --successor-pid: no running process ${pid}`);
  }
  const registered = readRecordRow(ctx.home, ctx.host, pid, judge);
  const sessionId = args.get("successor-session-id") ??
    (registered?.liveness === "alive" ? registered.session_id : null) ?? null;
  const successor = { pid, start_token: probe.info.startToken, session_id: sessionId };
  printRow(ctx, args, await resumeSession(ctx.home, ctx.host, judge, old, successor), "Resumed");
  return 0;
}
