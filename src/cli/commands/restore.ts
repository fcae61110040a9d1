/**
 * `roster restore`: after a crash, bring back every interrupted session, each with its
 * harness's resume command in a tmux window of its own, linked to what it was, and send it one
 * continue once it is idle. The choice is ../restore/select.ts, the flow ../restore/flow.ts.
 */
import { defaultLedger } from "../../continuation/ledger.ts";
import { UsageError } from "../../errors.ts";
import { retentionMs } from "../../registry/lifecycle.ts";
import type { Row } from "../../registry/row.ts";
import { forEachRow } from "../../registry/scan.ts";
import { parseDuration } from "../../time.ts";
import type { Parsed } from "../args.ts";
import { absolutePath, type Context } from "../context.ts";
import { printable } from "../terminal.ts";
import { oneAtATime, readAttempts, restoreDir } from "../restore/attempts.ts";
import {
  type ContinueResult,
  describe,
  type Place,
  relaunch,
  relaunchEnv,
  type Restored,
  sendContinue,
  shq,
  type Timing,
} from "../restore/flow.ts";
import { type Candidate, selectSessions } from "../restore/select.ts";
import { tmux } from "../restore/tmux.ts";

/** One session's line of the report (`--json`: one object each; schemas.ts "restore"). */
export interface RestoreReport {
  session_pid: number | null;
  session_id: string | null;
  agent: string | null;
  cwd: string | null;
  command: string[] | null;
  action: "relaunch" | "skip";
  reason: string;
  /** After a real run: what happened. */
  result?: "restored" | "failed" | "skipped";
  successor_pid?: number | null;
  pane?: string | null;
  failures: number;
  key: string;
  continued?: boolean | null;
  continue_reason?: string | null;
  continuation_id?: string | null;
}

const envOf = (name: string) => Deno.env.get(name);

/**
 * What a dry run adds for a harness that takes its continue as the resume command's prompt: the
 * continue is claimed only by a real run, so the command shown lacks it (--print's too: a
 * command a person runs from there sends none).
 */
const FIRST_PROMPT = ", with its continue as the last argument when a real run claims one";

function values(args: Parsed, name: string): string[] {
  return args.all(name).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v);
}

function count(args: Parsed, name: string, dflt: number): number {
  const v = args.get(name);
  if (v === undefined) return dflt;
  if (!/^[1-9][0-9]{0,4}$/.test(v)) {
    throw new UsageError(
      `Invalid --${name}: expected a positive integer, got ${JSON.stringify(v)}`,
    );
  }
  return Number(v);
}

/** Whether `path` is a directory (links followed). */
function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Whether an executable named `bin` is on `path`. */
function onPath(path: string | undefined, bin: string): boolean {
  for (const dir of (path ?? "").split(":")) {
    if (dir === "") continue;
    try {
      const info = Deno.statSync(`${dir}/${bin}`);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return true;
    } catch { /* not here */ }
  }
  return false;
}

function report(c: Candidate): RestoreReport {
  return {
    session_pid: c.row.session_pid,
    session_id: c.row.session_id,
    agent: c.row.agent,
    cwd: c.row.cwd,
    command: c.command,
    action: c.action,
    reason: c.reason,
    failures: c.failures,
    key: c.key,
  };
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const dryRun = args.has("dry-run");
  const print = args.has("print");
  const timing: Timing = {
    registerMs: parseDuration(args.get("wait") ?? "60s", "--wait"),
    settleMs: parseDuration(args.get("settle") ?? "3s", "--settle", true),
    continueMs: parseDuration(args.get("continue-timeout") ?? "2m", "--continue-timeout", true),
    maxFailures: count(args, "max-failures", 3),
  };
  const flag = args.get("ledger");
  const ledger = flag === undefined ? defaultLedger(ctx.home) : absolutePath(flag, "--ledger");
  const judge = await ctx.judge();
  const live = !dryRun && !print;
  // Outside tmux (none installed) nothing can be relaunched: say so before anything is made.
  if (live) await tmux(["-V"]);
  const dir = restoreDir(ledger, ctx.home, live);
  const select = () => {
    const rows: Row[] = [];
    forEachRow(ctx.home, judge, (r) => rows.push(r));
    return selectSessions(rows, {
      agents: values(args, "agent"),
      sessionIds: values(args, "session-id"),
      now: Date.now(),
      retentionMs: retentionMs(envOf),
      maxFailures: timing.maxFailures,
      attempts: (key) => readAttempts(dir, key),
      onPath: (bin) => onPath(envOf("PATH"), bin),
      isDirectory,
    });
  };
  const terminal = Deno.stderr.isTerminal();
  // A line a session: escaped whole, so that a record's text (an id, a directory) that holds a
  // line break cannot make a line of its own.
  const say = (line: string) => ctx.out(printable(line), true);
  const progress = (line: string) => {
    if (args.has("quiet")) return;
    if (!ctx.json) say(line);
    else if (terminal) ctx.err(printable(line), true);
  };

  if (!live) {
    const chosen = select();
    if (ctx.json) ctx.printJson(chosen.map(report));
    else if (print) {
      // Into a file or a pipe, the commands exactly (single quotes keep every byte); on a
      // terminal, escaped like all else roster shows there (a tab is then `\x09`).
      const exact = !Deno.stdout.isTerminal();
      for (const c of chosen) {
        if (c.action !== "relaunch") continue;
        const env = relaunchEnv(c, ctx.home, envOf).map(([k, v]) => `${k}=${shq(v)}`);
        const line = `cd ${shq(c.row.cwd!)} && env ${env.join(" ")} ${
          c.command!.map(shq).join(" ")
        }`;
        if (exact) ctx.stdout.write(line);
        else say(line);
      }
    } else {
      if (chosen.length === 0) ctx.out("Nothing to restore");
      for (const c of chosen) {
        say(
          c.action === "relaunch"
            ? `would relaunch ${describe(c.row)}: ${c.command!.join(" ")} (${c.reason})` +
              (c.registersAtFirstPrompt ? FIRST_PROMPT : "")
            : `skip ${describe(c.row)}: ${c.reason}`,
        );
      }
    }
    return 0;
  }

  const place: Place = { home: ctx.home, host: ctx.host, ledger, dir: dir!, judge };
  const reports: RestoreReport[] = [];
  const restored: { report: RestoreReport; restored: Restored }[] = [];
  // Two restores take turns: the second finds the first's sessions resumed and leaves them.
  await oneAtATime(dir!, async () => {
    for (const c of select()) {
      const r = report(c);
      reports.push(r);
      if (c.action === "skip") {
        r.result = "skipped";
        progress(`skip ${describe(c.row)}: ${c.reason}`);
        continue;
      }
      const env = relaunchEnv(c, ctx.home, envOf);
      const out = await relaunch(place, c, env, timing, progress);
      // The command as run: a first prompt (the continue, for Codex) is part of it.
      if (out.command !== null) r.command = out.command;
      if (out.ok) {
        r.result = "restored";
        r.successor_pid = out.restored.successorPid;
        r.pane = out.restored.pane;
        r.failures = 0;
        restored.push({ report: r, restored: out.restored });
      } else {
        r.result = "failed";
        r.successor_pid = null;
        r.failures = out.failures;
        r.reason = out.reason;
        const left = timing.maxFailures - out.failures;
        progress(
          `failed ${describe(c.row)}: ${out.reason} (` +
            (left > 0
              ? `${left} more ${left > 1 ? "tries" : "try"} left: run roster restore again)`
              : `no tries left: skipped from now on)`),
        );
      }
    }
  });
  // The continues, each when its session is idle: outside the turn, the claim keeps them once.
  await Promise.all(restored.map(async ({ report: r, restored: s }) => {
    const c: ContinueResult = await sendContinue(place, s, timing);
    r.continued = c.sent;
    r.continue_reason = c.reason;
    r.continuation_id = c.continuation_id;
    const who = describe({ ...s.predecessor, session_pid: s.successorPid });
    progress(
      c.sent
        ? `continued ${who} (continuation ${c.continuation_id})`
        : `not continued ${who}: ${c.reason}`,
    );
  }));
  if (ctx.json) ctx.printJson(reports);
  else if (reports.length === 0 && !args.has("quiet")) ctx.out("Nothing to restore");
  return reports.some((r) => r.result === "failed") ? 1 : 0;
}
