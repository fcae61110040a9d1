/** Human output: the `list` table and one-line row descriptions. Colour only on a terminal. */
import type { Row } from "../registry/row.ts";
import { printable } from "./terminal.ts";
import { formatAge, parseTime } from "../time.ts";

const COLOURS = { alive: "\x1b[32m", dead: "\x1b[31m", unknown: "\x1b[33m" } as const;

export function useColour(): boolean {
  return Deno.stdout.isTerminal() && !noColor();
}

/** NO_COLOR set to anything (even bytes that are not UTF-8) turns colour off. */
function noColor(): boolean {
  try {
    return Boolean(Deno.env.get("NO_COLOR"));
  } catch {
    return true;
  }
}

export function describeRow(row: Row): string {
  const who = row.agent ? `${printable(row.agent)} session` : "anonymous session";
  return `${who} ${row.session_pid} (${row.liveness}: ${row.reason})`;
}

function age(row: Row, now: number): string {
  const t = row.registered_at === null ? null : parseTime(row.registered_at);
  return t === null ? "-" : formatAge(now - t);
}

/**
 * A plain-text table; everything a terminal acts on in stored strings and paths is made
 * visible (terminal.ts), never sent. Print it with `ctx.out(text, true)`: only its colours
 * are escapes.
 */
export function renderTable(rows: Row[], colour: boolean, now = Date.now()): string {
  // `list --discover` rows say where they come from (roster's store, Claude Code's own files).
  const sourced = rows.some((r) => "source" in r);
  const header = [
    "PID",
    "LIVENESS",
    "AGENT",
    ...(sourced ? ["SOURCE"] : []),
    "RUNTIME",
    "AGE",
    "CWD",
  ];
  const cells = rows.map((r) =>
    [
      String(r.session_pid ?? "?"),
      `${r.liveness} (${r.reason}${
        r.successor ? ` → ${r.successor.session_id ?? r.successor.pid}` : ""
      })`,
      r.malformed ? `! ${r.detail}` : r.agent || "-",
      ...(sourced ? [String((r as Row & { source?: string }).source ?? "-")] : []),
      r.runtime ?? "-",
      age(r, now),
      r.cwd ?? r.path,
    ].map(printable)
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[], liveness?: Row["liveness"]) =>
    c.map((v, i) => {
      const padded = i === c.length - 1 ? v : v.padEnd(widths[i]);
      return colour && liveness && i === 1 ? `${COLOURS[liveness]}${padded}\x1b[0m` : padded;
    }).join("  ").trimEnd();
  return [line(header), ...cells.map((c, i) => line(c, rows[i].liveness))].join("\n") + "\n";
}
