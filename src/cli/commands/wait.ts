/**
 * `roster wait PID... | --session-id ID [--timeout DUR]`: blocks until the processes end.
 * The OS says when (process/exit_wait.ts: a pidfd, a kqueue or a process handle per process,
 * waited on a thread: no wake-ups while waiting); elsewhere each pid is probed with a backoff.
 */
import { EXIT } from "../../exit.ts";
import { RosterError, UsageError } from "../../errors.ts";
import { parsePid } from "../../identity/pid.ts";
import { type ExitWatch, waitMechanism, watchExit } from "../../process/exit_wait.ts";
import { lifecycleVerdict } from "../../registry/lifecycle.ts";
import type { SessionRecord } from "../../registry/record.ts";
import type { Row } from "../../registry/row.ts";
import { streamRows } from "../../registry/scan.ts";
import { readRecordRow } from "../../registry/store.ts";
import { delay, parseDuration, sleep } from "../../time.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";

class NoSessionError extends RosterError {
  override readonly exitCode = EXIT.DEAD;
}

class TimeoutError extends RosterError {
  override readonly exitCode = EXIT.TIMEOUT;
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const sessionId = args.get("session-id");
  const activity = args.get("activity");
  if (activity !== undefined) {
    if (sessionId === undefined || args.positionals.length > 0) {
      throw new UsageError(
        "--activity waits for a session: give --session-id ID, not PIDs. Usage: roster wait " +
          "--activity working|waiting|idle --session-id ID",
      );
    }
    return await waitForActivity(ctx, sessionId, activity, args.get("timeout"));
  }
  if (sessionId !== undefined && args.positionals.length > 0) {
    throw new UsageError(
      "Give either PIDs or --session-id, not both. Usage: roster wait PID... | --session-id ID",
    );
  }
  if (sessionId === undefined && args.positionals.length === 0) {
    throw new UsageError(
      "Missing PID for wait. Usage: roster wait PID... | --session-id ID [--timeout DUR]",
    );
  }
  const timeoutText = args.get("timeout");
  const timeoutMs = timeoutText === undefined ? null : parseDuration(timeoutText, "--timeout");
  const pids = args.positionals.map((p) => parsePid(p, "PID"));
  const judge = await ctx.judge();
  const backend = judge.backend;
  const started = performance.now();

  const watches: ExitWatch[] = [];
  const ended = new Set<number>();
  if (sessionId !== undefined) {
    // Streamed: a row whose session id differs is passed over before it is judged.
    const rows: Row[] = [];
    for (const r of streamRows(ctx.home, judge, (f) => f.session_id === sessionId)) {
      if (r.host === ctx.host && r.session_pid !== null && r.liveness === "alive") rows.push(r);
    }
    if (rows.length === 0) {
      throw new NoSessionError(`No live session with --session-id ${sessionId} on this host`);
    }
    for (const row of rows) {
      // The watch first, then the check: a pidfd opened before the token matched names
      // that very process, whatever later takes its pid. One that ended meanwhile has ended.
      const w = watchExit(row.session_pid!, backend);
      const again = readRecordRow(ctx.home, ctx.host, row.session_pid!, judge);
      if (again?.liveness === "alive" && !w.gone) watches.push(w);
      else {
        ended.add(w.pid);
        w.close();
      }
    }
  } else {
    for (const pid of pids) {
      const w = watchExit(pid, backend);
      // A pid with a record whose process is gone (its pid reused since, a boot ago) has ended
      // already. Judged by the process, not the lifecycle: a parked or resumed session's
      // process that still runs has not ended, and one whose pid was reused since has.
      const row = readRecordRow(ctx.home, ctx.host, pid, judge);
      const over = row !== null && !row.malformed &&
        judge.verdict(row as SessionRecord, true).liveness === "dead";
      if (w.gone || over) {
        ended.add(pid);
        w.close();
      } else watches.push(w);
    }
  }

  for (const w of watches) w.exited().then(() => ended.add(w.pid));
  const all = Promise.all(watches.map((w) => w.exited()));
  const timer = timeoutMs === null ? null : delay(timeoutMs);
  const outcome = await Promise.race([
    all.then(() => "exited" as const),
    ...(timer === null ? [] : [timer.done.then(() => "timeout" as const)]),
  ]);
  timer?.cancel();
  // Let the exits that landed with the timer be counted.
  await sleep(0);
  const watched = sessionId !== undefined
    ? [...new Set([...ended, ...watches.map((w) => w.pid)])]
    : pids;
  if (ctx.json) {
    ctx.printJson({
      outcome,
      waited_ms: Math.round(performance.now() - started),
      mechanism: waitMechanism(),
      pids: watched.map((pid) => ({ pid, exited: ended.has(pid) })),
    });
  }
  if (outcome === "timeout") {
    const running = watched.filter((p) => !ended.has(p));
    throw new TimeoutError(`Timed out after ${timeoutText}: still running: ${running.join(" ")}`);
  }
  // The pending waits run on threads that never return for a live process: exit now.
  for (const w of watches) w.close();
  return 0;
}

/** The longest pause between two looks at the records while waiting for an activity. */
const MAX_POLL_MS = 250;

/**
 * `wait --activity STATE --session-id ID`: until every live session with that id on this host
 * (a hosted one included) says STATE, by its hooks' records, looked at with a backoff from
 * 10 ms to 250 ms. A session that ends before it gets there is "not found" (3), as is none.
 */
async function waitForActivity(
  ctx: Context,
  sessionId: string,
  activity: string,
  timeoutText: string | undefined,
): Promise<number> {
  const timeoutMs = timeoutText === undefined ? null : parseDuration(timeoutText, "--timeout");
  const judge = await ctx.judge();
  const started = performance.now();
  // Judged afresh at every look: a session that ended meanwhile must not be waited for.
  const live = (r: Row) => {
    if (r.host !== ctx.host || r.session_pid === null || r.malformed) return false;
    const record = r as SessionRecord;
    const v = lifecycleVerdict(record, judge.verdict(record, true));
    return v.liveness === "alive" || v.reason === "hosted";
  };
  const look = () => {
    const rows: Row[] = [];
    for (const r of streamRows(ctx.home, judge, (f) => f.session_id === sessionId)) {
      if (live(r)) rows.push(r);
    }
    return rows;
  };
  let rows = look();
  if (rows.length === 0) {
    throw new NoSessionError(`No live session with --session-id ${sessionId} on this host`);
  }
  const pids = rows.map((r) => r.session_pid!);
  let pause = 10;
  let outcome: "reached" | "timeout" = "reached";
  while (!rows.every((r) => r.activity === activity)) {
    const waited = performance.now() - started;
    if (timeoutMs !== null && waited >= timeoutMs) {
      outcome = "timeout";
      break;
    }
    const left = timeoutMs === null ? pause : Math.min(pause, timeoutMs - waited);
    await sleep(left);
    pause = Math.min(pause * 2, MAX_POLL_MS);
    rows = look();
    const gone = pids.filter((p) => !rows.some((r) => r.session_pid === p));
    if (gone.length > 0) {
      throw new NoSessionError(
        `Session ${sessionId} ended before it was ${activity}: pid ${gone.join(" ")}`,
      );
    }
  }
  if (ctx.json) {
    ctx.printJson({
      outcome,
      waited_ms: Math.round(performance.now() - started),
      activity,
      sessions: rows.map((r) => ({
        pid: r.session_pid,
        activity: r.activity,
        activity_at: r.activity_at,
      })),
    });
  }
  if (outcome === "timeout") {
    const still = rows.filter((r) => r.activity !== activity)
      .map((r) => `${r.session_pid} (${r.activity ?? "no activity recorded"})`);
    throw new TimeoutError(`Timed out after ${timeoutText}: not ${activity}: ${still.join(" ")}`);
  }
  return 0;
}
