/**
 * `roster list`: every registered session with its liveness; it only reads. Rows stream from
 * the store to the output: each is filtered as it is read (a row the filters refuse is never
 * judged or formatted), and the ones shown wait in order as text, each with its pid for the
 * predecessor links (../external_sort.ts), so memory is bounded by a row, not by the store.
 */
import { envVar } from "../../env.ts";
import { lazyModule } from "../../lazy.ts";
import { UsageError } from "../../errors.ts";
import type { SessionLink } from "../../registry/record.ts";
import type { Row } from "../../registry/row.ts";
import { streamRows } from "../../registry/scan.ts";
import { parseTime } from "../../time.ts";
import type { Parsed } from "../args.ts";
import { type Context, realDir } from "../context.ts";
import {
  COLUMNS,
  emptyMessage,
  type ListFilter,
  listValues,
  matches,
  matchesFields,
  parseColumns,
  WIDE_COLUMNS,
} from "../list_view.ts";
import { ExternalSort } from "../external_sort.ts";
import { Table, useColour } from "../table.ts";
import { jsonElement, writeJsonElement } from "../json_element.ts";

/**
 * The terminal's width: $COLUMNS, else the terminal's own; null (no limit) into a pipe or a
 * file, whatever $COLUMNS says (a shell exports it, and a script reading the table gets it whole).
 */
function terminalWidth(): number | null {
  try {
    if (!Deno.stdout.isTerminal()) return null;
  } catch {
    return null;
  }
  const env = Number(Deno.env.get("COLUMNS"));
  if (Number.isInteger(env) && env > 0) return env;
  try {
    return Deno.consoleSize().columns;
  } catch {
    return null;
  }
}

/** `--discover`'s reader of the harnesses' own session files, loaded only for it. */
const discoverModule = lazyModule<typeof import("../../registry/discover.ts")>(
  "../../registry/discover.ts",
  (s) => import(s),
);

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const states = new Set(listValues(args.all("state")) ?? []);
  const stated = states.size > 0;
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
          Object.keys(COLUMNS).join(","),
      );
    }
    columns = parsed;
  }
  const judge = await ctx.judge();
  const discover = args.has("discover");
  const quiet = !ctx.json && args.has("quiet");
  const table = ctx.json || quiet ? null : new Table(useColour(args.get("color")), Date.now(), {
    columns,
    headers: !args.has("no-headers"),
    width: terminalWidth(),
    sourced: discover,
  });
  using shown = new ExternalSort();
  const links = new Links();
  // Rows left out by the default states alone (ended sessions): the empty message counts them.
  let hidden = 0;
  const add = (row: Row) => {
    if (!matches(row, filter)) {
      if (!stated && !states.has(row.liveness) && matchesFields(row, filter)) hidden++;
      return;
    }
    if (ctx.json) shown.addWritten(sortKey(row), row.path, writeElement, row, linkMark(row));
    else {shown.add(
        sortKey(row),
        row.path,
        quiet ? String(row.session_pid ?? "?") : table!.cells(row),
      );}
  };
  // Alive sessions of this host that roster knows: --discover does not list them twice.
  const covered = new Set<number | null>();
  // A row that names a successor is read whatever the filters: the successor shows it.
  const keep = discover
    ? undefined
    : (f: Parameters<typeof matchesFields>[0] & { successor: SessionLink | null }) =>
      f.successor !== null || matchesFields(f, filter);
  for (const row of streamRows(ctx.home, judge, keep)) {
    links.note(row);
    if (!discover) add(row);
    else {
      if (row.host === judge.here.host && row.liveness === "alive") covered.add(row.session_pid);
      add({ ...row, source: "roster" } as Row);
    }
  }
  if (discover) {
    const d = await discoverModule();
    const claude = d.claudeSessionsDir(envVar, Deno.build.os);
    for (const row of claude === null ? [] : d.discoverClaude(claude, judge)) {
      if (!covered.has(row.session_pid)) add(row);
    }
  }
  const write = (bytes: Uint8Array) => ctx.stdout.bytes(bytes);
  if (ctx.json) {
    if (shown.size === 0) ctx.out("[]");
    else {
      ctx.out("[", true);
      shown.emit(
        write,
        ",\n",
        links.empty ? undefined : (text, path, pid) => links.patch(text, path, pid),
      );
      ctx.out("\n]", true);
    }
  } else if (shown.size === 0) ctx.err(emptyMessage(givenFilters(args), hidden));
  else if (quiet) {
    shown.emit(write, "\n");
    ctx.out("", true);
  } else {
    const header = table!.header();
    if (header !== null) ctx.out(header, true);
    shown.emit(write, "\n", (text) => table!.line(text));
    ctx.out("", true);
  }
  return 0;
}

/** A row's JSON element, written into ExternalSort's buffer as it is added. */
const writeElement = (row: Row, buf: Uint8Array, at: number) => writeJsonElement(row, 1, buf, at);

/** A row's place in the registry's order: its registration time, newest first. */
export function sortKey(row: Row): number {
  return row.registered_at === null ? -Infinity : parseTime(row.registered_at) ?? -Infinity;
}

/**
 * What a shown row keeps, besides its JSON, for the predecessor links: its pid, which the links
 * are noted by (NaN for a row no link can name: no host or pid, or malformed).
 */
function linkMark(row: Row): number {
  return row.malformed || row.host === null || row.session_pid === null ? NaN : row.session_pid;
}

/**
 * The predecessor links `list` shows (same host, same pid, and the same start token when the
 * link has one), found while the rows stream: the rows that name a successor are noted (few:
 * resumed sessions) by their successor's pid, and a shown row kept with one of those pids
 * (linkMark) is read again as it is printed, for its host and start token.
 */
class Links {
  readonly #byPid = new Map<
    number,
    { host: string; link: SessionLink; from: NonNullable<Row["predecessor"]> }[]
  >();

  get empty(): boolean {
    return this.#byPid.size === 0;
  }

  note(row: Row) {
    const next = row.successor;
    if (!next || row.host === null || row.malformed) return;
    const list = this.#byPid.get(next.pid) ?? [];
    list.push({
      host: row.host,
      link: next,
      from: { pid: row.session_pid!, session_id: row.session_id, path: row.path },
    });
    this.#byPid.set(next.pid, list);
  }

  /**
   * The JSON element of the row at `path`, kept with its pid, with its predecessor filled in
   * when a noted row names it. Such a row (few) is printed again from its element, parsed
   * whole: JSON.parse gives back the row jsonElement printed.
   */
  patch(element: string, path: string, pid: number): string {
    const list = this.#byPid.get(pid);
    if (list === undefined) return element;
    const row = JSON.parse(element) as Row;
    const found = list.find(({ host, link, from }) =>
      host === row.host && from.path !== path &&
      (link.start_token == null || link.start_token === row.start_token)
    );
    return found === undefined ? element : jsonElement({ ...row, predecessor: found.from });
  }
}

/** The filtering flags as given, for the empty-result message. */
function givenFilters(args: Parsed): string[] {
  const out: string[] = [];
  for (const flag of ["state", "agent", "session-id", "host", "cwd", "under"]) {
    for (const v of args.all(flag)) out.push(`--${flag} ${v}`);
  }
  return out;
}
