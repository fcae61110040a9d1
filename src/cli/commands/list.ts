import { envVar } from "../../env.ts";
/** `roster list`: every registered session with its liveness; it only reads. */
import { UsageError } from "../../errors.ts";
import type { LivenessJudge } from "../../identity/liveness.ts";
import { type Row, sortRows } from "../../registry/row.ts";
import { readRows } from "../../registry/store.ts";
import type { Parsed } from "../args.ts";
import { type Context, realDir } from "../context.ts";
import {
  emptyMessage,
  type ListFilter,
  listValues,
  matches,
  parseColumns,
  WIDE_COLUMNS,
} from "../list_view.ts";
import { renderTable, useColour } from "../table.ts";

/** The terminal's width: $COLUMNS, else the terminal's own; null (no limit) into a pipe. */
function terminalWidth(): number | null {
  const env = Number(Deno.env.get("COLUMNS"));
  if (Number.isInteger(env) && env > 0) return env;
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : null;
  } catch {
    return null;
  }
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const states = new Set(listValues(args.all("state")) ?? []);
  if (states.size === 0) {
    states.add("alive").add("unknown");
    if (args.has("all")) states.add("dead");
  }
  const dir = (flag: string) => {
    const v = args.get(flag);
    return v === undefined ? null : realDir(v, `--${flag}`);
  };
  const filter: ListFilter = {
    states,
    agents: listValues(args.all("agent")),
    sessionIds: listValues(args.all("session-id")),
    hosts: listValues(args.all("host")),
    cwd: dir("cwd"),
    under: dir("under"),
  };
  let columns: readonly string[] | undefined = args.has("wide") ? WIDE_COLUMNS : undefined;
  const columnsFlag = args.get("columns");
  if (columnsFlag !== undefined) {
    const parsed = parseColumns(columnsFlag);
    if ("unknown" in parsed) {
      throw new UsageError(
        `Invalid --columns: unknown column ${parsed.unknown}; expected some of ` +
          Object.keys((await import("../list_view.ts")).COLUMNS).join(","),
      );
    }
    columns = parsed;
  }
  const judge = await ctx.judge();
  let all: Row[] = readRows(ctx.home, judge);
  if (args.has("discover")) all = await withDiscovered(all, judge);
  const rows = all.filter((r) => matches(r, filter));
  if (ctx.json) ctx.printJson(rows);
  else if (rows.length === 0) ctx.err(emptyMessage(givenFilters(args)));
  else if (args.has("quiet")) ctx.out(rows.map((r) => r.session_pid ?? "?").join("\n"));
  else {
    ctx.out(
      renderTable(rows, useColour(args.get("color")), Date.now(), {
        columns,
        headers: !args.has("no-headers"),
        width: terminalWidth(),
      }),
      true,
    );
  }
  return 0;
}

/** The filtering flags as given, for the empty-result message. */
function givenFilters(args: Parsed): string[] {
  const out: string[] = [];
  for (const flag of ["state", "agent", "session-id", "host", "cwd", "under"]) {
    for (const v of args.all(flag)) out.push(`--${flag} ${v}`);
  }
  return out;
}

/** Adds the sessions harnesses record themselves; every row then says where it came from. */
async function withDiscovered(rows: Row[], judge: LivenessJudge): Promise<Row[]> {
  const d = await import("../../registry/discover.ts");
  const dir = d.claudeSessionsDir(envVar, Deno.build.os);
  const found = dir === null ? [] : d.discoverClaude(dir, judge);
  return sortRows(d.mergeDiscovered(rows, found, judge.here.host));
}
