/**
 * The one escaping function for everything roster prints to a person (stdout and stderr, tables,
 * messages, paths): stored strings and file names come from other people, and a terminal acts
 * on some characters instead of showing them.
 */
import type { Row } from "../registry/row.ts";

/**
 * What a terminal (or the text layout around it) may act on: C0 controls, DEL, C1 controls
 * (a lone U+009B is CSI, U+009D OSC: a window title or an OSC 52 clipboard write in
 * xterm.js), the line and paragraph separators, and the bidirectional marks, embeddings,
 * overrides and isolates that reorder what is shown (U+061C, U+200E/F, U+202A-E, U+2066-9).
 */
// deno-lint-ignore no-control-regex
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function hex(ch: string): string {
  const code = ch.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `s` with every character a terminal may act on made visible: `\x1b`, `\x9d`, `\u202e`. */
export function printable(s: string): string {
  return s.replace(UNSAFE, hex);
}

/** Text of several lines: each line escaped, the newlines between them kept. */
export function printableLines(text: string): string {
  return text.split("\n").map(printable).join("\n");
}

/**
 * JSON text safe for a terminal and still the same JSON: JSON.stringify already escapes C0
 * controls, and every other unsafe character can only sit inside a string, where `\uXXXX`
 * decodes back to it.
 */
export function terminalJson(json: string): string {
  return json.replace(
    UNSAFE_IN_JSON,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** UNSAFE less C0: JSON.stringify escapes C0 in strings, and its newlines are layout. */
const UNSAFE_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * One row in words for a person ("claude session 123 (alive: running)"): kept here, beside the
 * escaping it needs, so the hook commands that print it do not load the table's modules.
 */
export function describeRow(row: Row): string {
  const who = row.agent ? `${printable(row.agent)} session` : "anonymous session";
  return `${who} ${row.session_pid} (${row.liveness}: ${row.reason})`;
}
