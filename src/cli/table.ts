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

/** How a table is laid out: which columns, with or without the header, cut to a width. */
export interface TableOptions {
  columns?: readonly string[];
  headers?: boolean;
  /** The terminal's width; null: no limit. */
  width?: number | null;
  /** `list --discover` rows say where they come from: the default columns then show it. */
  sourced?: boolean;
}

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
  #widths: number[] | null = null;

  constructor(
    readonly colour: boolean,
    readonly now = Date.now(),
    { columns, headers = true, width = null, sourced = false }: TableOptions = {},
  ) {
    this.#columns = columns ??
      (sourced ? ["pid", "liveness", "agent", "source", "runtime", "age", "cwd"] : DEFAULT_COLUMNS);
    this.#specs = this.#columns.map((c) => COLUMNS[c]);
    this.#natural = this.#specs.map((c) => headers ? c.header.length : 0);
    this.#livenessAt = this.#columns.indexOf("liveness");
    this.headers = headers;
    this.width = width;
  }

  readonly headers: boolean;
  readonly width: number | null;

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
      out.push(cell);
    }
    return out.join("\0");
  }

  #layout(): number[] {
    const minimum = this.#specs.map((c) => Math.min(Math.max(c.header.length, 6), 12));
    return this.#widths ??= fitWidths(this.#natural, minimum, this.width);
  }

  /** The header line, or null without headers. */
  header(): string | null {
    return this.headers ? this.#line(this.#specs.map((c) => c.header)) : null;
  }

  /** The line of a row kept by `cells`. */
  line(text: string): string {
    const parts = text.split("\0");
    return this.#line(parts.slice(1), parts[0] as Row["liveness"]);
  }

  #line(c: string[], liveness?: Row["liveness"]): string {
    const widths = this.#layout();
    return c.map((v, i) => {
      const shown = cut(v, widths[i]);
      const padded = i === c.length - 1 ? shown : shown + " ".repeat(widths[i] - [...shown].length);
      return this.colour && liveness && i === this.#livenessAt
        ? `${COLOURS[liveness]}${padded}\x1b[0m`
        : padded;
    }).join("  ").trimEnd();
  }
}
