/** Human output: the `list` table and one-line row descriptions. Colour only on a terminal. */
import type { Row } from "../registry/row.ts";
import {
  COLUMNS,
  cut,
  DEFAULT_COLUMNS,
  fitWidths,
  SHOWN_WHEN_SET,
  WIDE_COLUMNS,
} from "./list_view.ts";
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

/** How a table is laid out: which columns, with or without the header, cut to a width. */
export interface TableOptions {
  columns?: readonly string[];
  headers?: boolean;
  /** The terminal's width; null: no limit. */
  width?: number | null;
  /** `list --discover` rows say where they come from: the default columns then show it. */
  sourced?: boolean;
}

/** Whether `columns` are one of the layouts list picks itself (default, wide, --discover). */
function defaultLayout(columns: readonly string[]): boolean {
  return columns === DEFAULT_COLUMNS || columns === WIDE_COLUMNS || columns === SOURCED_COLUMNS;
}

const SOURCED_COLUMNS = ["pid", "liveness", "agent", "activity", "source", "runtime", "age", "cwd"];

/**
 * A plain-text table built one row at a time, so that a store of any size is printed in
 * memory bounded by a row: `cells` turns a row into one line of text to keep (its cells, made
 * printable), noting each column's widest cell; once every row is in, `header` and `line`
 * lay them out. Everything a terminal acts on in stored strings and paths is made visible
 * (terminal.ts), never sent: print the lines with `ctx.out(text, true)`, only colours are
 * escapes.
 */
export class Table {
  readonly #columns: readonly string[];
  readonly #specs: { header: string; cell: (row: Row, now: number) => string }[];
  readonly #natural: number[];
  readonly #livenessAt: number;
  /** Per column: shown (a column named by --columns always is; SHOWN_WHEN_SET once set). */
  readonly #shown: boolean[];
  #widths: number[] | null = null;

  constructor(
    readonly colour: boolean,
    readonly now = Date.now(),
    { columns, headers = true, width = null, sourced = false }: TableOptions = {},
  ) {
    this.#columns = columns ??
      (sourced ? SOURCED_COLUMNS : DEFAULT_COLUMNS);
    this.#specs = this.#columns.map((c) => COLUMNS[c]);
    this.#natural = this.#specs.map((c) => headers ? c.header.length : 0);
    this.#livenessAt = this.#columns.indexOf("liveness");
    this.#shown = this.#columns.map((c) =>
      columns !== undefined && !defaultLayout(columns) ||
      !SHOWN_WHEN_SET.has(c)
    );
    this.headers = headers;
    this.width = width;
  }

  readonly headers: boolean;
  readonly width: number | null;

  /** Where the liveness column is among those shown (every column before it always is). */
  get #livenessShownAt(): number {
    return this.#shownOf(this.#columns.map((_, i) => i)).indexOf(this.#livenessAt);
  }

  /** One row as text to keep until the layout is known: its liveness, then its cells. */
  cells(r: Row): string {
    const out = [r.liveness as string];
    for (let i = 0; i < this.#specs.length; i++) {
      // A malformed row's agent cell says what is wrong: it has no agent to show.
      const cell = printable(
        this.#columns[i] === "agent" && r.malformed
          ? `! ${r.detail}`
          : this.#specs[i].cell(r, this.now),
      );
      const length = [...cell].length;
      if (length > this.#natural[i]) this.#natural[i] = length;
      if (cell !== "-") this.#shown[i] = true;
      out.push(cell);
    }
    return out.join("\0");
  }

  #layout(): number[] {
    const minimum = this.#specs.map((c) => Math.min(Math.max(c.header.length, 6), 12));
    return this.#widths ??= fitWidths(
      this.#shownOf(this.#natural),
      this.#shownOf(minimum),
      this.width,
    );
  }

  /** The values of the columns shown, in order. */
  #shownOf<T>(values: T[]): T[] {
    return values.filter((_, i) => this.#shown[i]);
  }

  /** The header line, or null without headers. */
  header(): string | null {
    return this.headers ? this.#line(this.#shownOf(this.#specs.map((c) => c.header))) : null;
  }

  /** The line of a row kept by `cells`. */
  line(text: string): string {
    const parts = text.split("\0");
    return this.#line(this.#shownOf(parts.slice(1)), parts[0] as Row["liveness"]);
  }

  #line(c: string[], liveness?: Row["liveness"]): string {
    const widths = this.#layout();
    return c.map((v, i) => {
      const shown = cut(v, widths[i]);
      const padded = i === c.length - 1 ? shown : shown + " ".repeat(widths[i] - [...shown].length);
      return this.colour && liveness && i === this.#livenessShownAt
        ? `${COLOURS[liveness]}${padded}\x1b[0m`
        : padded;
    }).join("  ").trimEnd();
  }
}
