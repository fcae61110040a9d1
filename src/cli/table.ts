/** Human output: the `list` table and one-line row descriptions. Colour only on a terminal. */
import type { Row } from "../registry/row.ts";
import { COLUMNS, cut, DEFAULT_COLUMNS, fitWidths } from "./list_view.ts";
import { printable } from "./terminal.ts";

const COLOURS = { alive: "\x1b[32m", dead: "\x1b[31m", unknown: "\x1b[33m" } as const;

/**
 * `--color always|never` decides; `auto` (the default) colours only a terminal, and not when
 * NO_COLOR is set or TERM is dumb.
 */
export function useColour(mode: string | undefined = "auto"): boolean {
  if (mode === "always") return true;
  if (mode === "never") return false;
  return Deno.stdout.isTerminal() && !envSet("NO_COLOR") && envValue("TERM") !== "dumb";
}

/** A variable that is not valid UTF-8 counts as set (so NO_COLOR with odd bytes still wins). */
function envValue(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return "\ufffd";
  }
}

function envSet(name: string): boolean {
  return Boolean(envValue(name));
}

export function describeRow(row: Row): string {
  const who = row.agent ? `${printable(row.agent)} session` : "anonymous session";
  return `${who} ${row.session_pid} (${row.liveness}: ${row.reason})`;
}

/** How a table is laid out: which columns, with or without the header, cut to a width. */
export interface TableOptions {
  columns?: readonly string[];
  headers?: boolean;
  /** The terminal's width; null: no limit. */
  width?: number | null;
}

/**
 * A plain-text table; everything a terminal acts on in stored strings and paths is made
 * visible (terminal.ts), never sent. Print it with `ctx.out(text, true)`: only its colours
 * are escapes.
 */
export function renderTable(
  rows: Row[],
  colour: boolean,
  now = Date.now(),
  { columns, headers = true, width = null }: TableOptions = {},
): string {
  // `list --discover` rows say where they come from (roster's store, Claude Code's own files):
  // the default columns then show it after the agent.
  const sourced = rows.some((r) => "source" in r);
  columns ??= sourced
    ? ["pid", "liveness", "agent", "source", "runtime", "age", "cwd"]
    : DEFAULT_COLUMNS;
  const specs = columns.map((c) => COLUMNS[c]);
  const header = specs.map((c) => c.header);
  const cells = rows.map((r) =>
    specs.map((c, i) =>
      // A malformed row's agent cell says what is wrong: it has no agent to show.
      printable(columns[i] === "agent" && r.malformed ? `! ${r.detail}` : c.cell(r, now))
    )
  );
  const natural = header.map((h, i) =>
    Math.max(headers ? h.length : 0, ...cells.map((c) => [...c[i]].length))
  );
  const minimum = header.map((h) => Math.min(Math.max(h.length, 6), 12));
  const widths = fitWidths(natural, minimum, width);
  const livenessAt = columns.indexOf("liveness");
  const line = (c: string[], liveness?: Row["liveness"]) =>
    c.map((v, i) => {
      const shown = cut(v, widths[i]);
      const padded = i === c.length - 1 ? shown : shown + " ".repeat(widths[i] - [...shown].length);
      return colour && liveness && i === livenessAt
        ? `${COLOURS[liveness]}${padded}\x1b[0m`
        : padded;
    }).join("  ").trimEnd();
  const body = cells.map((c, i) => line(c, rows[i].liveness));
  return [...(headers ? [line(header)] : []), ...body].join("\n") + "\n";
}
