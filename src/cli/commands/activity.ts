/**
 * `roster activity [working|waiting|idle] [--tool-start ID] [--tool-end ID]` (prompt, stop,
 * notification and tool hooks): what the calling session is doing, written into its record.
 */
import { EnvEncodingError, envVar } from "../../env.ts";
import { RosterError, UsageError } from "../../errors.ts";
import { requireOwnProc } from "../../identity/liveness.ts";
import { readUpTo } from "../../fs/io.ts";
import { cutText } from "../../chars.ts";
import { decodeUtf8 } from "../../utf8.ts";
import { locateOwner, NoOwnerError } from "../../registry/owner.ts";
import { type Activity, type ActivityChange, MAX_TOOL_TEXT } from "../../registry/record.ts";
import { recordActivity } from "../../registry/store_activity.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { describeRow } from "../terminal.ts";

/** The most of a hook's stdin read (a tool's output can be large; the ids come last). */
const MAX_INPUT = 64 * 1024 * 1024;

/** The hook's JSON object (null where it is none), and whether it was cut at MAX_INPUT. */
interface HookInput {
  fields: Record<string, unknown> | null;
  cut: boolean;
}

/**
 * The hook's JSON on stdin, read once and only when a flag says `-`. A cut-off input still
 * gives the fields a scan finds in what was read.
 */
function hookInput(): () => HookInput {
  let value: HookInput | undefined;
  return (): HookInput => {
    if (value !== undefined) return value;
    const bytes = readStdin();
    const text = decodeUtf8(bytes);
    const cut = bytes.length >= MAX_INPUT - 1;
    try {
      const v = JSON.parse(text);
      value = { fields: typeof v === "object" && v !== null && !Array.isArray(v) ? v : null, cut };
    } catch {
      value = { fields: scanFields(text), cut };
    }
    return value;
  };
}

/** Stdin, at most MAX_INPUT bytes of it; a read that fails ends it (what came is kept). */
function readStdin(): Uint8Array {
  const read = (buf: Uint8Array) => {
    try {
      return Deno.stdin.readSync(buf);
    } catch {
      return null;
    }
  };
  return readUpTo(read, MAX_INPUT - 1);
}

/** The top-level string fields a hook's input names its session and tool call by. */
const FIELDS = ["session_id", "tool_use_id", "tool_call_id", "tool_name"];

/** Pure: those fields found in text that is not whole JSON (a cut-off input). */
function scanFields(text: string): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) {
    const m = new RegExp(`"${f}"\\s*:\\s*"((?:[^"\\\\]|\\\\.){1,${MAX_TOOL_TEXT}})"`).exec(text);
    if (m) {
      try {
        out[f] = JSON.parse(`"${m[1]}"`);
      } catch { /* not a string after all */ }
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** A string field of the hook's input, cut to what a record keeps; null when absent. */
function field(input: HookInput, ...names: string[]): string | null {
  for (const n of names) {
    const v = input.fields?.[n];
    if (typeof v === "string" && v !== "") return cutText(v, MAX_TOOL_TEXT);
  }
  return null;
}

/**
 * A flag's value cut to what a record keeps; `-` takes it from the hook's input. An end whose
 * input was cut off before its call's id says nothing of which call ended (known by its name,
 * another call of that tool would be closed): undefined, as without the flag. A start is still
 * recorded, by its name: a call left open is named in the continue, one dropped is not.
 */
function toolCall(
  args: Parsed,
  flag: string,
  input: () => HookInput,
): ActivityChange["toolStart"] {
  const v = args.get(flag);
  if (v === undefined) return undefined;
  const given = args.get("tool-name");
  const name = given
    ? cutText(given, MAX_TOOL_TEXT)
    : v === "-"
    ? field(input(), "tool_name")
    : null;
  if (v !== "-") return { id: v === "" ? null : cutText(v, MAX_TOOL_TEXT), name };
  const id = field(input(), "tool_use_id", "tool_call_id");
  if (id === null && input().cut && flag === "tool-end") return undefined;
  return { id, name };
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const state = args.positionals[0] as Activity | undefined;
  if (state === undefined && !args.has("tool-start") && !args.has("tool-end")) {
    throw new UsageError(
      "Missing activity: give working, waiting or idle, or --tool-start or --tool-end",
    );
  }
  const input = hookInput();
  const change: ActivityChange = {
    activity: state,
    toolStart: toolCall(args, "tool-start", input),
    toolEnd: toolCall(args, "tool-end", input),
  };
  try {
    return await record(ctx, args, change, input);
  } catch (err) {
    // A hook must never block its session: harnesses read exit 2 from a tool or stop hook as
    // "block this" (Claude Code, Codex). What is found wrong once the flags parsed (an owner
    // named wrongly, no home for the store, a home that is a file) fails the hook, exit 1.
    if (err instanceof UsageError) throw new RosterError(err.message);
    throw err;
  }
}

/** The change written into the owner's record, or a note on stderr saying why nothing was. */
async function record(
  ctx: Context,
  args: Parsed,
  change: ActivityChange,
  input: () => HookInput,
): Promise<number> {
  const quiet = args.has("quiet");
  const nothing = (why: string, outcome = "no-record", pid: number | null = null) => {
    if (ctx.json && !quiet) ctx.printJson({ pid, outcome, row: null });
    if (!quiet) ctx.err(`roster: Nothing recorded: ${why}`);
    return 0;
  };
  const judge = await ctx.judge();
  requireOwnProc(judge.backend, "record the session's activity");
  let owner;
  try {
    // Whose record to touch, as register resolves it; whether it is verified is register's.
    owner = locateOwner(
      { flagPid: args.get("pid"), env: envVar, selfPid: Deno.pid, selfPpid: Deno.ppid },
      judge.cachedBackend(),
    );
  } catch (err) {
    // A hook must never fail its session: a session that cannot be told is exit 0.
    if (err instanceof NoOwnerError || err instanceof EnvEncodingError) {
      return nothing(err.message);
    }
    throw err;
  }
  // The session's own record first: register files every session but a shared server's as
  // `<pid>.json`, so where that record's start token is this process's, the pid is no server
  // and its executable and command line need not be read and matched (owner.harness) on every
  // hook. A record with no token to match proves nothing of the process: there it is asked.
  const plain = (reason: string) =>
    reason === "running" || (reason === "pid-only" && owner.harness()?.hosted !== true);
  let result = await recordActivity(ctx.home, ctx.host, judge, owner.pid, null, change, plain);
  if (result.outcome !== "recorded" && owner.harness()?.hosted) {
    const flag = args.get("session-id");
    const sessionId = flag === "-" ? field(input(), "session_id") : flag || null;
    if (sessionId === null) {
      return nothing(
        `pid ${owner.pid} is a shared server hosting many sessions; pass --session-id`,
        "no-record",
        owner.pid,
      );
    }
    result = await recordActivity(ctx.home, ctx.host, judge, owner.pid, sessionId, change);
  }
  if (result.outcome === "no-record") {
    return nothing(`no record for pid ${owner.pid}`, "no-record", owner.pid);
  }
  if (result.outcome === "not-this-process") {
    return nothing(
      `the record of pid ${owner.pid} is not this process's`,
      "not-this-process",
      owner.pid,
    );
  }
  if (quiet) return 0;
  if (ctx.json) ctx.printJson({ pid: owner.pid, outcome: result.outcome, row: result.row });
  else {
    const calls = result.row.open_tool_calls ?? [];
    ctx.out(
      `Recorded ${result.row.activity} for ${describeRow(result.row)}` +
        (calls.length > 0 ? `, ${calls.length} open tool call(s)` : ""),
      true, // escaped by describeRow
    );
  }
  return 0;
}
