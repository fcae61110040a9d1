/**
 * `roster unregister` (session-end hooks): remove the calling session's record, only while
 * it is still that process's (registry/store.ts mayUnregister).
 */
import { EnvEncodingError, envVar } from "../../env.ts";
import { RosterError } from "../../errors.ts";
import type { ProcessBackend } from "../../process/types.ts";
import {
  declaredElsewhere,
  endHookPid,
  hostsSessions,
  NoOwnerError,
} from "../../registry/owner.ts";
import { requireOwnProc } from "../../identity/liveness.ts";
import { mayUnregister, removeRecordIf } from "../../registry/store_remove.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { describeRow } from "../terminal.ts";

/**
 * The owner, resolved as register resolves it (registry/owner.ts endHookPid): a session-end
 * hook that runs after its session must not fail, and a named pid is taken as it is, running
 * or not: removeRecordIf judges the record against whatever holds the pid now.
 */
function unregisterPid(args: Parsed, backend: ProcessBackend) {
  return endHookPid(
    {
      flagPid: args.get("pid"),
      env: envVar,
      selfPid: Deno.pid,
      selfPpid: Deno.ppid,
    },
    backend,
  );
}

/** A variable's value; unset, empty or not UTF-8 (no session it could declare) is undefined. */
function readableVar(name: string): string | undefined {
  try {
    return envVar(name) || undefined;
  } catch {
    return undefined;
  }
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  let pid: number;
  let inherited = false;
  try {
    ({ pid, inherited } = unregisterPid(args, judge.backend));
  } catch (err) {
    // An end hook that runs after its harness is gone (reparented to init) must not fail
    // the session: with no owner there is no record of ours to remove.
    // So must a variable it cannot read (bytes that are not UTF-8): then there is no owner.
    if (!(err instanceof NoOwnerError || err instanceof EnvEncodingError)) throw err;
    if (ctx.json && !args.has("quiet")) {
      ctx.printJson({ pid: null, outcome: "no-record", row: null });
    }
    if (!args.has("quiet")) ctx.err(`roster: Nothing to unregister: ${err.message}`);
    return 0;
  }
  // A shared server's sessions are filed by session id (registry/layout.ts recordName).
  const hosted = hostsSessions(judge.backend, pid) ? args.get("session-id") || null : null;
  let result: Awaited<ReturnType<typeof removeRecordIf>>;
  try {
    requireOwnProc(judge.backend, `unregister pid ${pid}`);
    result = await removeRecordIf(
      ctx.home,
      ctx.host,
      pid,
      judge,
      (row) =>
        mayUnregister(row, judge.probe(pid)) &&
        !(inherited && declaredElsewhere(row.session_id, readableVar)),
      hosted,
    );
  } catch (err) {
    // A store roster refuses (a link, another user's directory), cannot read or cannot find
    // (no home for it, a home that is a file: ctx.home's UsageError): the record stays, said
    // on stderr, and the session-end hook still succeeds (README: exit 0).
    if (!(err instanceof RosterError)) throw err;
    if (ctx.json && !args.has("quiet")) ctx.printJson({ pid, outcome: "refused", row: null });
    ctx.err(`roster: Nothing unregistered: ${err.message}`);
    return 0;
  }
  if (args.has("quiet")) return 0;
  if (ctx.json) {
    ctx.printJson({ pid, outcome: result.outcome, row: result.row });
  } else if (result.outcome === "removed") {
    ctx.out(`Unregistered ${describeRow(result.row)}`, true); // escaped by describeRow
  } else if (result.outcome === "kept") {
    ctx.out(
      `Kept the record of pid ${pid}: it is not this process's ` +
        `(${result.row.liveness}: ${result.row.reason})`,
    );
  } else {
    ctx.out(`No record for pid ${pid}: nothing to unregister`);
  }
  return 0;
}
