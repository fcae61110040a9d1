import { envVar } from "../../env.ts";
/** `roster register`: record the calling agent session (a refresh when it exists). */
import { UsageError } from "../../errors.ts";
import { describeRow, printable } from "../terminal.ts";
import { requireOwnProc } from "../../identity/liveness.ts";
import { resolveOwner } from "../../registry/owner.ts";
import { buildRecord } from "../../registry/record.ts";
import { recordRow } from "../../registry/row.ts";
import { writeRecord } from "../../registry/store_write.ts";
import { VERSION } from "../../version.ts";
import type { Parsed } from "../args.ts";
import { retentionOrKeepAll } from "../retention.ts";
import { type Context, realDir, registrarPath } from "../context.ts";

const MAX_TEXT = 1024;
/** The longest cwd a record holds (registry/record.ts). */
const MAX_CWD = 4096;

/** An env value that is empty counts as unset for names and ids. */
export function env(name: string): string | undefined {
  const v = envVar(name);
  if (v === undefined || v === "") return undefined;
  if (v.length > MAX_TEXT) {
    throw new UsageError(`Invalid ${name}: longer than ${MAX_TEXT} characters`);
  }
  return v;
}

export function text(args: Parsed, flag: string): string | undefined {
  const v = args.get(flag);
  if (v !== undefined && v.length > MAX_TEXT) {
    throw new UsageError(`Invalid --${flag}: longer than ${MAX_TEXT} characters`);
  }
  return v;
}

/**
 * The session's directory as its real path: `--cwd` (a usage error when bad), else this
 * process's. Where this process's cannot be known (deleted, not UTF-8, deeper than PATH_MAX,
 * longer than a record holds) it is "" (unknown), and no flag that was not given is blamed.
 */
export function sessionCwd(flag: string | undefined): string {
  if (flag !== undefined) {
    const dir = realDir(flag, "--cwd");
    if (dir.length > MAX_CWD) {
      throw new UsageError(`Invalid --cwd: longer than ${MAX_CWD} characters: ${flag}`);
    }
    return dir;
  }
  // scripts/roster moved to / because the caller's directory was deleted: that is unknown too.
  if (envVar("ROSTER_CWD_GONE") === "1") return "";
  try {
    const dir = Deno.realPathSync(Deno.cwd());
    return dir.length <= MAX_CWD ? dir : "";
  } catch {
    return "";
  }
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  // Before the owner is looked for: from a foreign /proc no ancestor can be found either.
  requireOwnProc(judge.backend, "register a session");
  const owner = resolveOwner(
    {
      flagPid: args.get("pid"),
      env: envVar,
      selfPid: Deno.pid,
      selfPpid: Deno.ppid,
    },
    judge.cachedBackend(),
  );
  const cwd = sessionCwd(args.get("cwd"));
  const probe = judge.probe(owner.pid);
  const record = buildRecord({
    owner,
    process: probe.kind === "exists" ? probe.info : null,
    here: judge.here,
    flags: {
      agent: text(args, "agent"),
      runtime: text(args, "runtime"),
      sessionId: text(args, "session-id"),
      model: text(args, "model"),
      nativeSessionId: text(args, "native-session-id"),
    },
    env,
    cwd,
    now: Date.now(),
    registrar: { pid: Deno.pid, version: VERSION, path: registrarPath() },
  });
  if (record.hosted && record.session_id === null) {
    // Its sessions are filed by id: without one, this one would take another's place.
    throw new UsageError(
      `Missing --session-id: pid ${owner.pid} (${
        printable(record.agent)
      }) is a shared server hosting many sessions, so only a session id says which one this is`,
    );
  }
  const written = await writeRecord(ctx.home, record, judge, retentionOrKeepAll((m) => ctx.err(m)));
  const row = recordRow(written.record, judge.verdict(written.record), written.path);
  if (args.has("quiet")) return 0;
  if (ctx.json) ctx.printJson(row);
  else ctx.out(`Registered ${describeRow(row)}`, true); // escaped by describeRow
  return 0;
}
