/**
 * `roster wait PID... | --session-id ID [--timeout DUR]`: blocks until the processes end.
 * The OS says when (process/exit_wait.ts: a pidfd, a kqueue or a process handle per process,
 * waited on a thread: no wake-ups while waiting); elsewhere each pid is probed with a backoff.
 */
import { EXIT } from "../../exit.ts";
import { RosterError, UsageError } from "../../errors.ts";
import { parsePid } from "../../identity/pid.ts";
import { type ExitWatch, waitMechanism, watchExit } from "../../process/exit_wait.ts";
import type { Row } from "../../registry/row.ts";
import { streamRows } from "../../registry/scan.ts";
import { readRecordRow } from "../../registry/store.ts";
import { parseDuration } from "../../time.ts";
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
      // A pid with a record whose process is gone (its pid reused since) has ended already.
      const row = readRecordRow(ctx.home, ctx.host, pid, judge);
      if (w.gone || (row !== null && row.liveness === "dead")) {
        ended.add(pid);
        w.close();
      } else watches.push(w);
    }
  }

  for (const w of watches) w.exited().then(() => ended.add(w.pid));
  const all = Promise.all(watches.map((w) => w.exited()));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    all.then(() => "exited" as const),
    ...(timeoutMs === null
      ? []
      : [new Promise<"timeout">((ok) => timer = setTimeout(() => ok("timeout"), timeoutMs))]),
  ]);
  clearTimeout(timer);
  // Let the exits that landed with the timer be counted.
  await new Promise((ok) => setTimeout(ok, 0));
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
