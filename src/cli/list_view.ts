/**
 * What `roster list` shows, pure: the filters (each a flag, all combined with AND, repeated
 * or comma-separated values of one flag with OR), the columns a table may have, and the cut
 * of long cells to the terminal's width. JSON output never goes through here: it is whole.
 */
import { formatAge, parseTime } from "../time.ts";
import type { Row } from "../registry/row.ts";

export interface ListFilter {
  states: Set<string>;
  agents: string[] | null;
  sessionIds: string[] | null;
  hosts: string[] | null;
  /** Exact directory (real path). */
  cwd: string | null;
  /** A directory whose subtree the session's cwd lies in (real path). */
  under: string | null;
}

/** Values of a repeatable flag, each possibly a comma-separated list; null when not given. */
export function listValues(values: readonly string[]): string[] | null {
  if (values.length === 0) return null;
  return values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
}

function inside(path: string | null, dir: string): boolean {
  if (path === null) return false;
  const base = dir.endsWith("/") ? dir : `${dir}/`;
  return path === dir || path.startsWith(base);
}

export function matches(row: Row, f: ListFilter): boolean {
  return f.states.has(row.liveness) && matchesFields(row, f);
}

/** The filters that need no judging (all but --state): a row they refuse is never probed. */
export function matchesFields(
  row: Pick<Row, "agent" | "session_id" | "host" | "cwd">,
  f: ListFilter,
): boolean {
  return (f.agents === null || f.agents.includes(row.agent ?? "")) &&
    (f.sessionIds === null || (row.session_id !== null && f.sessionIds.includes(row.session_id))) &&
    (f.hosts === null || (row.host !== null && f.hosts.includes(row.host))) &&
    (f.cwd === null || row.cwd === f.cwd) &&
    (f.under === null || inside(row.cwd, f.under));
}

/**
 * The message for an empty result: the flags that filtered, as given, and how many ended
 * sessions the default states hid (registered, shown by --all).
 */
export function emptyMessage(given: readonly string[], hidden = 0): string {
  const shown = given.length === 0 ? "No live sessions." : `No sessions match ${given.join(" ")}.`;
  if (hidden > 0) {
    const also = given.length === 0 ? "" : ` ${given.join(" ")}`;
    return `${shown} ${hidden} ended session${hidden === 1 ? " is" : "s are"} hidden: ` +
      `roster list --all${also} shows ${hidden === 1 ? "it" : "them"}.`;
  }
  return given.length === 0 ? "No sessions registered." : shown;
}

type Cell = (row: Row, now: number) => string;

/** When the session started: its process's start, else its first registration. */
export function sessionStart(row: Row): number | null {
  for (const t of [row.process_started_at, row.registered_at]) {
    const ms = t === null ? null : parseTime(t);
    if (ms !== null) return ms;
  }
  return null;
}

/** Every column a table can show, by name (as `--columns` takes it) with its header. */
export const COLUMNS: Record<string, { header: string; cell: Cell }> = {
  pid: { header: "PID", cell: (r) => String(r.session_pid ?? "?") },
  liveness: {
    header: "LIVENESS",
    cell: (r) =>
      `${r.liveness} (${r.reason}${
        r.successor ? ` → ${r.successor.session_id ?? r.successor.pid}` : ""
      })`,
  },
  agent: { header: "AGENT", cell: (r) => r.agent || "-" },
  activity: { header: "ACTIVITY", cell: activityCell },
  runtime: { header: "RUNTIME", cell: (r) => r.runtime ?? "-" },
  age: {
    header: "AGE",
    cell: (r, now) => {
      const t = sessionStart(r);
      return t === null ? "-" : formatAge(now - t);
    },
  },
  cwd: { header: "CWD", cell: (r) => r.cwd ?? "-" },
  session_id: { header: "SESSION", cell: (r) => r.session_id ?? "-" },
  host: { header: "HOST", cell: (r) => r.host ?? "-" },
  pane: { header: "PANE", cell: (r) => r.tmux_pane ?? "-" },
  source: { header: "SOURCE", cell: (r) => (r as Row & { source?: string }).source ?? "roster" },
  path: { header: "PATH", cell: (r) => r.path },
  detail: { header: "DETAIL", cell: (r) => r.detail ?? "-" },
};

/** What the session's hooks last said it does, and how many tool calls it has open. */
function activityCell(r: Row): string {
  if (!r.activity) return "-";
  const n = r.open_tool_calls?.length ?? 0;
  return n === 0 ? r.activity : `${r.activity} (${n} tool${n === 1 ? "" : "s"})`;
}

/**
 * Columns the default layouts show only when some row has a value for them: a store whose
 * hooks record no activity prints the table it always did.
 */
export const SHOWN_WHEN_SET = new Set(["activity"]);

export const DEFAULT_COLUMNS = ["pid", "liveness", "agent", "activity", "runtime", "age", "cwd"];
export const WIDE_COLUMNS = [
  "pid",
  "liveness",
  "agent",
  "activity",
  "runtime",
  "age",
  "session_id",
  "host",
  "pane",
  "source",
  "cwd",
];

/** `--columns a,b,c`: known names only, at least one. */
export function parseColumns(value: string): string[] | { unknown: string } {
  const names = value.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "");
  for (const n of names) if (!(n in COLUMNS)) return { unknown: n };
  return names.length === 0 ? { unknown: "" } : names;
}

/** Cuts `text` to `width` characters, marking the cut with an ellipsis. */
export function cut(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return width <= 1 ? "…".slice(0, width) : chars.slice(0, width - 1).join("") + "…";
}

/**
 * Column widths that fit `total` characters (two spaces between columns): the widest columns
 * give way first, down to the width of their header; null `total` means no limit.
 */
export function fitWidths(natural: number[], minimum: number[], total: number | null): number[] {
  const widths = [...natural];
  if (total === null) return widths;
  const sum = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  while (sum() > total) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (widths[i] > minimum[i] && (widest === -1 || widths[i] > widths[widest])) widest = i;
    }
    if (widest === -1) break;
    widths[widest] = Math.max(minimum[widest], widths[widest] - (sum() - total));
  }
  return widths;
}
