/**
 * Commands for hooks: `unregister` (session end), `check` (liveness of given pids), `token`
 * (the start-token primitive for pid files) and `whoami` (the session that owns the caller).
 * The decisions are pure functions at the top; the handlers below only gather and print.
 */
import {
  CannotTellError,
  EXIT_DEAD,
  EXIT_UNKNOWN,
  NoSuchProcessError,
  RosterError,
  UsageError,
} from "../errors.ts";
import {
  asProcess,
  isGone,
  type Probe,
  type ProcessBackend,
  type TokenMatch,
} from "../process/types.ts";
import { probeVerdict, type Verdict } from "../registry/liveness.ts";
import { ancestors, namedPid, NoOwnerError, parsePid, resolveOwner } from "../registry/owner.ts";
import { isoOrNull, NULL_RECORD, type Row } from "../registry/record.ts";
import { readRecordRow, removeRecordIf } from "../registry/registry.ts";
import type { Parsed } from "./args.ts";
import type { Context } from "./context.ts";
import { describeRow, printable } from "./table.ts";

// ---- Pure decisions ---------------------------------------------------------------------

/**
 * Whether a session-end hook may remove this record: it is still the calling process's
 * (same pid and start token; or, for a record without a token, a process whose token cannot
 * be read either), or no process holds its pid any more, so it is nobody's. A record another
 * process with the same pid wrote, or one that cannot be judged, is left alone.
 */
export function mayUnregister(row: Row, probe: Probe): boolean {
  if (row.malformed) return false;
  switch (row.reason) {
    case "running":
    case "exited":
    case "zombie":
      return true;
    case "pid-only":
      return probe.kind === "exists" && probe.info.startToken === null;
    default:
      return false;
  }
}

/** The verdict on a pid that has no record: whether a process holds it, nothing more. */
export function bareVerdict(probe: Probe): Verdict {
  return probeVerdict(probe) ?? { liveness: "alive", reason: "running" };
}

/** check's exit code: 0 all alive, 3 any dead, 4 any unknown and none dead. */
export function checkExitCode(verdicts: readonly Verdict[]): number {
  if (verdicts.some((v) => v.liveness === "dead")) return EXIT_DEAD;
  if (verdicts.some((v) => v.liveness === "unknown")) return EXIT_UNKNOWN;
  return 0;
}

/**
 * The token `roster token` prints: the start token, qualified by the boot where the OS has a
 * boot id, so a pid file that outlives a reboot never matches an early-boot process that
 * happens to have the same pid and start time.
 */
export function formatToken(startToken: string, bootId: string | null): string {
  return bootId === null ? startToken : `${startToken}@${bootId}`;
}

export type TokenVerdict = "same" | "different" | "gone" | "unknown";

/**
 * Pure: does `given` (as `roster token` printed it, or a record's bare `start_token`) still
 * name the process that holds the pid? A boot-qualified token from another boot differs.
 */
export function verifyToken(
  given: string,
  probe: Probe,
  bootId: string | null,
  compare: (recorded: string, current: string) => TokenMatch,
): TokenVerdict {
  if (isGone(probe)) return "gone";
  if (probe.kind !== "exists") return "unknown";
  const at = given.lastIndexOf("@");
  const token = at === -1 ? given : given.slice(0, at);
  const boot = at === -1 ? null : given.slice(at + 1);
  if (boot !== null && bootId !== null && boot !== bootId) return "different";
  if (probe.info.startToken === null) return "unknown";
  const match = compare(token, probe.info.startToken);
  return match === "same" ? "same" : match === "different" ? "different" : "unknown";
}

export function tokenExitCode(v: TokenVerdict): number {
  return v === "same" ? 0 : v === "unknown" ? EXIT_UNKNOWN : EXIT_DEAD;
}

// ---- Shared I/O ---------------------------------------------------------------------------

function pidArg(value: string): number {
  return parsePid(value, "PID");
}

// ---- unregister ---------------------------------------------------------------------------

/**
 * The owner, resolved as register resolves it, except that an explicitly named pid whose
 * process has gone is not an error here: a session-end hook that runs after its session must
 * not fail, and the record of a pid no process holds is nobody's.
 */
function unregisterPid(args: Parsed, backend: ProcessBackend): number {
  const input = {
    flagPid: args.get("pid"),
    env: (n: string) => Deno.env.get(n),
    selfPid: Deno.pid,
    selfPpid: Deno.ppid,
  };
  // A named pid is taken as it is, running or not: removeRecordIf judges the record against
  // whatever holds the pid now, which is all an end hook needs.
  return namedPid(input)?.pid ?? resolveOwner(input, backend).pid;
}

export async function unregister(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  let pid: number;
  try {
    pid = unregisterPid(args, judge.backend);
  } catch (err) {
    // An end hook that runs after its harness is gone (reparented to init) must not fail
    // the session: with no owner there is no record of ours to remove.
    if (!(err instanceof NoOwnerError)) throw err;
    if (ctx.json && !args.has("quiet")) {
      ctx.printJson({ pid: null, outcome: "no-record", row: null });
    }
    if (!args.has("quiet")) ctx.err(`roster: Nothing to unregister: ${err.message}`);
    return 0;
  }
  const result = await removeRecordIf(
    ctx.home,
    ctx.host,
    pid,
    judge,
    (row) => mayUnregister(row, judge.probe(pid)),
  );
  if (args.has("quiet")) return 0;
  if (ctx.json) {
    ctx.printJson({ pid, outcome: result.outcome, row: result.row });
  } else if (result.outcome === "removed") {
    ctx.out(`Unregistered ${describeRow(result.row)}`);
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

// ---- check --------------------------------------------------------------------------------

/** A checked pid: its record's row, or for a pid without one, a row of what the pid holds. */
export type CheckRow =
  & Omit<Row, "path">
  & { path: string | null; registered: boolean };

function bareRow(pid: number, host: string, probe: Probe, bootId: string | null): CheckRow {
  const info = probe.kind === "exists" ? probe.info : null;
  return {
    ...NULL_RECORD,
    session_pid: pid,
    start_token: info?.startToken ?? null,
    process_started_at: isoOrNull(info?.startedAtMs ?? null),
    boot_id: info ? bootId : null,
    host,
    ...bareVerdict(probe),
    path: null,
    malformed: false,
    detail: null,
    registered: false,
  };
}

export async function check(ctx: Context, args: Parsed): Promise<number> {
  const pids = args.positionals.map(pidArg);
  const judge = await ctx.judge();
  const rows: CheckRow[] = pids.map((pid) => {
    const row = readRecordRow(ctx.home, ctx.host, pid, judge);
    if (row !== null) return { ...row, registered: true };
    return bareRow(pid, ctx.host, asProcess(judge.probe(pid, true)), judge.here.bootId);
  });
  if (ctx.json) ctx.printJson(rows);
  else {
    for (const r of rows) {
      ctx.out(
        r.registered
          ? describeRow(r as Row)
          : `pid ${r.session_pid} (${r.liveness}: ${r.reason}), not registered`,
      );
    }
  }
  return checkExitCode(rows);
}

// ---- token --------------------------------------------------------------------------------

export async function token(ctx: Context, args: Parsed): Promise<number> {
  const verify = args.has("verify");
  const [pidText, given] = args.positionals;
  if (verify && given === undefined) {
    throw new UsageError(
      "Missing TOKEN for token --verify. Usage: roster token --verify PID TOKEN",
    );
  }
  if (!verify && given !== undefined) {
    throw new UsageError(
      `Unexpected argument for token: ${given} (did you mean --verify?). ` +
        "Usage: roster token PID | roster token --verify PID TOKEN",
    );
  }
  const pid = pidArg(pidText);
  if (verify && (given === "" || given.length > 512)) {
    throw new UsageError(
      `Invalid TOKEN: expected what 'roster token PID' printed, got ${JSON.stringify(given)}`,
    );
  }
  const backend = await ctx.backend();
  const probe = asProcess(backend.probe(pid));
  const bootId = backend.bootId();
  if (verify) {
    const v = verifyToken(given, probe, bootId, (a, b) => backend.compareTokens(a, b));
    if (ctx.json) ctx.printJson({ pid, token: given, verdict: v });
    return tokenExitCode(v);
  }
  if (isGone(probe)) {
    throw new NoSuchProcessError(pid);
  }
  if (probe.kind !== "exists" || probe.info.startToken === null) {
    throw new CannotTellError(`Cannot read the start token of process: ${pid}`);
  }
  const printed = formatToken(probe.info.startToken, bootId);
  if (ctx.json) {
    const started = probe.info.startedAtMs;
    ctx.printJson({
      pid,
      token: printed,
      start_token: probe.info.startToken,
      boot_id: bootId,
      process_started_at: started === null ? null : new Date(started).toISOString(),
    });
  } else ctx.out(printed);
  return 0;
}

// ---- whoami -------------------------------------------------------------------------------

/**
 * The nearest ancestor of the caller (the caller included) that registered itself and is
 * alive with a matching start token. Walks at most MAX_DEPTH levels.
 */
export async function whoami(ctx: Context, _args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  for (const info of ancestors(judge.backend, Deno.ppid)) {
    const row = readRecordRow(ctx.home, ctx.host, info.pid, judge);
    // "running": the record has a start token and it matches the process's now; verified:
    // the process registered itself (or a descendant did), not a pid someone else named.
    if (row === null || row.reason !== "running" || row.pid_verified !== true) continue;
    if (ctx.json) ctx.printJson(row);
    else {
      ctx.out(
        describeRow(row) + (row.session_id ? `, session ${printable(row.session_id)}` : "") +
          (row.cwd ? `, in ${printable(row.cwd)}` : ""),
      );
    }
    return 0;
  }
  throw new RosterError(
    "No registered live session owns this process: none of its ancestors registered itself",
  );
}
