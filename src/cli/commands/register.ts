/** `roster register`: record the calling agent session (a refresh when it exists). */
import { UsageError } from "../../errors.ts";
import { resolveOwner } from "../../registry/owner.ts";
import { buildRecord } from "../../registry/record.ts";
import { recordRow } from "../../registry/row.ts";
import { writeRecord } from "../../registry/store.ts";
import { VERSION } from "../../version.ts";
import type { Parsed } from "../args.ts";
import { type Context, realDir } from "../context.ts";

const MAX_TEXT = 1024;

/** An env value that is empty counts as unset for names and ids. */
function env(name: string): string | undefined {
  const v = Deno.env.get(name);
  if (v === undefined || v === "") return undefined;
  if (v.length > MAX_TEXT) {
    throw new UsageError(`Invalid ${name}: longer than ${MAX_TEXT} characters`);
  }
  return v;
}

function text(args: Parsed, flag: string): string | undefined {
  const v = args.get(flag);
  if (v !== undefined && v.length > MAX_TEXT) {
    throw new UsageError(`Invalid --${flag}: longer than ${MAX_TEXT} characters`);
  }
  return v;
}

function registrarPath(): string {
  const exe = Deno.execPath();
  // Under `deno run` the executable is deno itself: name the script instead. (String work,
  // not new URL(): the URL extension costs start-up time to load.)
  const main = Deno.mainModule;
  if (/[\\/]deno(\.exe)?$/.test(exe) && main.startsWith("file://")) {
    return decodeURIComponent(main.slice(Deno.build.os === "windows" ? 8 : 7));
  }
  return exe;
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  const owner = resolveOwner(
    {
      flagPid: args.get("pid"),
      env: (n) => Deno.env.get(n),
      selfPid: Deno.pid,
      selfPpid: Deno.ppid,
    },
    judge.cachedBackend(),
  );
  const cwd = realDir(args.get("cwd") ?? Deno.cwd(), "--cwd");
  const probe = judge.probe(owner.pid);
  const record = buildRecord({
    owner,
    process: probe.kind === "exists" ? probe.info : null,
    here: judge.here,
    flags: {
      agent: text(args, "agent"),
      runtime: text(args, "runtime"),
      sessionId: text(args, "session-id"),
    },
    env,
    cwd,
    now: Date.now(),
    registrar: { pid: Deno.pid, version: VERSION, path: registrarPath() },
  });
  const path = await writeRecord(ctx.home, record, judge);
  const row = recordRow(record, judge.verdict(record), path);
  if (args.has("quiet")) return 0;
  if (ctx.json) ctx.printJson(row);
  else {
    // Loaded only here: a hook's `register --quiet` never pays for the table module.
    const { describeRow } = await import("../table.ts");
    ctx.out(`Registered ${describeRow(row)}`);
  }
  return 0;
}
