/**
 * `roster continuation-check`: the verdict for a resumed session and, with `--claim`, the
 * dispatch made at most once. Flags, `--facts` and output live here; the flow is
 * src/continuation/check.ts, the decision rules.ts, the exit codes src/exit.ts.
 */
import { lazyModule } from "../../lazy.ts";
import { checkContinuation, type Claimed } from "../../continuation/check.ts";
import { type Decision, type Facts, parseFacts } from "../../continuation/rules.ts";
import { UsageError } from "../../errors.ts";
import { VERDICT_EXIT } from "../../exit.ts";
import { readUpTo } from "../../fs/io.ts";
import { openJudged } from "../../fs/read.ts";
import { envVar } from "../../env.ts";
import { pauseSetting } from "../../pause.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir, requireKey } from "../ledger_flags.ts";

const MAX_FACTS_BYTES = 64 * 1024;

/** At most 64 KiB of `read`, as UTF-8 text; `what` names the source in errors. */
function readCapped(read: (buf: Uint8Array) => number | null, what: string): string {
  const bytes = readUpTo(read, MAX_FACTS_BYTES);
  if (bytes.length > MAX_FACTS_BYTES) {
    throw new UsageError(`Invalid --facts: larger than 64 KiB: ${what}`);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`Invalid --facts: ${what} is not valid UTF-8`);
  }
}

/**
 * Reads a facts file. Its type is judged before it is opened (a link by what it points at):
 * opening a FIFO with no writer blocks for ever, and a hook that hangs holds up its harness.
 * The file opened must be the file judged, and at most 64 KiB of it is read.
 */
function readFactsFile(path: string): string {
  const unreadable = (err: unknown) =>
    new UsageError(
      `Invalid --facts: ${
        err instanceof Deno.errors.NotFound ? "no such file" : "cannot be read"
      }: ${path}`,
    );
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
    if (info.isSymlink) info = Deno.statSync(path);
  } catch (err) {
    throw unreadable(err);
  }
  if (!info.isFile) {
    throw new UsageError(
      `Invalid --facts: not a regular file: ${path} (expected a regular file, or - for stdin)`,
    );
  }
  if (info.size > MAX_FACTS_BYTES) {
    throw new UsageError(`Invalid --facts: larger than 64 KiB: ${path}`);
  }
  try {
    using file = openJudged(path, info, { read: true });
    if (file === null) {
      throw new UsageError(`Invalid --facts: the file changed while being opened: ${path}`);
    }
    return readCapped((b) => file.readSync(b), path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw unreadable(err);
  }
}

/** `--facts FILE` or `-` (stdin): a JSON object. No flag: no facts at all. */
function readFacts(args: Parsed): Facts {
  const source = args.get("facts");
  if (source === undefined) return {};
  if (source === "") throw new UsageError('Invalid --facts: expected FILE or -, got ""');
  const text = source === "-"
    ? readCapped((b) => Deno.stdin.readSync(b), "stdin")
    : readFactsFile(source);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`Invalid --facts: expected a JSON object, got invalid JSON`);
  }
  const parsed = parseFacts(value);
  if (!parsed.ok) throw new UsageError(`Invalid --facts: ${parsed.problem}`);
  return parsed.value;
}

type Printed = {
  kind: Decision["kind"];
  reason?: string;
  class?: string;
  until?: string;
  continuation_id?: string;
  message?: string;
  detail?: string;
  would?: Printed;
};

function toPrinted(v: Decision, claimed?: Claimed): Printed {
  switch (v.kind) {
    case "dispatch":
      return claimed
        ? { kind: v.kind, continuation_id: claimed.id, message: claimed.message }
        : { kind: v.kind };
    case "wait":
      return { kind: v.kind, reason: v.reason, until: new Date(v.until).toISOString() };
    case "skip":
      return {
        kind: v.kind,
        reason: v.reason,
        class: v.class,
        ...(v.detail !== undefined ? { detail: v.detail } : {}),
        ...(v.would ? { would: toPrinted(v.would) } : {}),
      };
    case "stop":
      return { kind: v.kind, reason: v.reason };
    case "vetoed":
      return v.class === null
        ? { kind: v.kind, reason: v.reason }
        : { kind: v.kind, reason: v.reason, class: v.class };
  }
}

function oneLine(p: Printed, nested = false): string {
  switch (p.kind) {
    case "dispatch":
      // The message follows on its own line: it is the text to send.
      return p.continuation_id
        ? `dispatch: continuation ${p.continuation_id} claimed\n${p.message}`
        : nested
        ? "dispatch"
        : "dispatch (not claimed: pass --claim to claim it)";
    case "wait":
      return `wait until ${p.until} (${p.reason})`;
    case "skip":
      return `skip (${p.class}): ${p.reason}` + (p.detail ? ` (${p.detail})` : "") +
        (p.would ? `; dry run would: ${oneLine(p.would, true)}` : "");
    case "stop":
      return `stop: ${p.reason}`;
    case "vetoed":
      return `vetoed: ${p.reason}` + (p.class ? ` (${p.class})` : "");
  }
}

function planToken(args: Parsed): string | null {
  const token = args.get("plan-token");
  if (token === undefined) return null;
  if (token === "" || token.length > 256) {
    throw new UsageError(
      "Invalid --plan-token: expected the token of a plan (1 to 256 characters)",
    );
  }
  return token;
}

/** `--tmux`: the pane roster runs in, read by roster itself before each decision. */
async function paneLook(): Promise<(facts: Facts) => Facts> {
  // Deferred (src/lazy.ts): only --tmux reads the pane.
  const { ownPane, readPaneFacts, withPaneFacts } = await lazyModule<
    typeof import("../../continuation/tmux.ts")
  >("../../continuation/tmux.ts", (s) => import(s))();
  const pane = ownPane(envVar("TMUX_PANE")); // a usage error before any work
  return (facts) => withPaneFacts(facts, readPaneFacts(pane));
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const key = requireKey(args);
  const facts = readFacts(args);
  const dir = ledgerDir(ctx, args);
  // ROSTER_TEST_PAUSE_AT is read now, so that a bad value is a usage error before any work.
  pauseSetting();
  const judge = await ctx.judge();
  // Loaded only when asked for: it spawns tmux, which no other check needs.
  const look = args.has("tmux") ? await paneLook() : undefined;
  const { verdict, claimed } = await checkContinuation({
    dir,
    home: ctx.home,
    key,
    facts,
    judge,
    claim: args.has("claim"),
    planToken: planToken(args),
    note: (message) => ctx.err(message),
    look,
  });
  const printed = toPrinted(verdict, claimed);
  if (ctx.json) ctx.printJson(printed);
  else ctx.out(oneLine(printed));
  return VERDICT_EXIT[verdict.kind];
}
