/**
 * `roster exec CMD [ARGS...]`: runs CMD as a registered session. The child's start token is
 * read in the same turn as the spawn, before Deno can reap it, so even a child that exits at
 * once is recorded as that process; roster forwards SIGINT/SIGTERM/SIGHUP to it, exits with
 * its status (128+N when a signal killed it, 127/126 when it could not start, as a shell
 * does), and notes on the record how the session ended.
 */
import { EXIT } from "../../exit.ts";
import { RosterError, UsageError } from "../../errors.ts";
import type { ProcessInfo } from "../../process/types.ts";
import { buildRecord } from "../../registry/record.ts";
import { markEnded, writeRecord } from "../../registry/store_write.ts";
import { VERSION } from "../../version.ts";
import type { Parsed } from "../args.ts";
import { type Context, registrarPath } from "../context.ts";
import { env, sessionCwd, text } from "./register.ts";
import { retentionOrKeepAll } from "../retention.ts";
import { printable } from "../terminal.ts";

/** A command that could not be started: exit code as a shell gives it. */
class ExecError extends RosterError {
  constructor(message: string, override readonly exitCode: number) {
    super(message);
  }
}

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const [cmd, ...cmdArgs] = args.positionals;
  if (cmd === undefined || cmd === "") {
    throw new UsageError(
      "Missing CMD for exec. Usage: roster exec [--agent NAME] [--] CMD [ARGS...]",
    );
  }
  const home = ctx.home;
  const judge = await ctx.judge();
  const flags = {
    agent: text(args, "agent"),
    runtime: text(args, "runtime"),
    sessionId: text(args, "session-id"),
  };
  // As register finds it: where it cannot be known (not UTF-8, deeper than a record holds,
  // deleted) it is "" and CMD still runs.
  const cwd = sessionCwd(undefined);
  // CMD's record, built before CMD starts and again once its pid is known: a variable that is
  // not valid (not UTF-8, too long) is a usage error with nothing started, never a CMD left
  // running unwatched. The session id is --session-id alone: one in the environment names the
  // session roster exec runs inside (a harness's tool: $CLAUDE_CODE_SESSION_ID,
  // $ROSTER_SESSION_ID), and CMD's ending would retire that session's crashed runs.
  const recordOf = (pid: number, process: ProcessInfo | null) =>
    buildRecord({
      owner: { pid, source: "exec", verified: true, harness: null, inner: true },
      process,
      here: judge.here,
      flags,
      env,
      cwd,
      now: Date.now(),
      registrar: { pid: Deno.pid, version: VERSION, path: registrarPath() },
    });
  recordOf(Deno.pid, null);

  // Listeners first, the child after: a signal that came between the spawn and the listeners
  // took the default action and killed roster, leaving the child running unwatched (seen under
  // load: the child had reached its trap before roster listened). One that comes before the
  // child exists is forwarded to it as soon as it does.
  // A Ctrl-C at a terminal reaches the child directly (same foreground process group):
  // forwarding it again would make it a double Ctrl-C, which many agents take as "quit".
  const interactive = Deno.stdin.isTerminal();
  let child: Deno.ChildProcess | undefined;
  const early: Deno.Signal[] = [];
  const send = (signal: Deno.Signal) => {
    try {
      child?.kill(signal);
    } catch { /* it has exited */ }
  };
  const listeners = FORWARDED.map((signal) => {
    const forward = () => {
      if (signal === "SIGINT" && interactive) return;
      if (child === undefined) early.push(signal);
      else send(signal);
    };
    Deno.addSignalListener(signal, forward);
    return () => Deno.removeSignalListener(signal, forward);
  });
  const stopListening = () => listeners.forEach((remove) => remove());
  try {
    child = new Deno.Command(cmd, {
      args: cmdArgs,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
  } catch (err) {
    stopListening();
    if (err instanceof Deno.errors.NotFound) {
      throw new ExecError(`Command not found: ${cmd}`, EXIT.COMMAND_NOT_FOUND);
    }
    const why = err instanceof Deno.errors.PermissionDenied
      ? "permission denied"
      : (err as Error).message;
    throw new ExecError(`Command not executable: ${why}: ${cmd}`, EXIT.CANNOT_EXECUTE);
  }
  const running = child;
  for (const signal of early.splice(0)) send(signal);
  // Same turn as the spawn: Deno reaps a child only once the event loop runs, so the child is
  // running or a zombie here, and its start token is readable either way.
  const probe = judge.probe(running.pid, true);
  const record = recordOf(running.pid, probe.kind === "exists" ? probe.info : null);

  try {
    try {
      // Its cleanup keeps what register's keeps: crashed rows within $ROSTER_RETENTION, and
      // any a continuation holds.
      await writeRecord(home, record, judge, retentionOrKeepAll((m) => ctx.err(m)));
    } catch (err) {
      // The command runs whatever happens to its record: a full disk must not stop a CI job.
      ctx.err(`roster: Could not register the session: ${(err as Error).message}`);
    }
    const status = await running.status;
    const reason = status.signal ? `signal:${status.signal}` : `exit:${status.code}`;
    try {
      await markEnded(home, record, new Date().toISOString(), reason, judge);
    } catch { /* best effort: the row is dead (exited) anyway */ }
    // On stderr, after all of CMD's output: stdout is CMD's alone. --quiet leaves CMD's
    // output exactly as it was.
    if (!args.has("quiet")) {
      const who = record.agent ? `${record.agent} session` : "Session";
      const id = record.session_id ? ` (${record.session_id})` : "";
      ctx.err(printable(`roster: ${who} ${record.session_pid}${id} ended: ${reason}`), true);
    }
    return status.code;
  } finally {
    stopListening();
  }
}
