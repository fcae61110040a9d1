/**
 * The one escaping function for everything roster prints to a person (stdout and stderr, tables,
 * messages, paths): stored strings and file names come from other people, and a terminal acts
 * on some characters instead of showing them.
 */
import type { Row } from "../registry/row.ts";
import { UNSAFE_BEYOND_C0, UNSAFE_OR_ESCAPE_LIKE } from "../unsafe_text.ts";

function hex(ch: string): string {
  if (ch === "\\") return "\\\\";
  const code = ch.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `s` with every character a terminal may act on made visible: `\x1b`, `\x9d`, `\u202e`. */
export function printable(s: string): string {
  return s.replace(UNSAFE_OR_ESCAPE_LIKE, hex);
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
    UNSAFE_BEYOND_C0,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ).replace(LONE_HALF, "$1\\ufffd");
}

/**
 * Half of a character beyond U+FFFF alone, as JSON.stringify writes it (`\ud800`: a pair it
 * writes as it is), after an even run of backslashes (else the backslash is the text's own). A
 * harness's file or a hand-edited record can hold one; jq and other strict readers refuse it, so
 * it is written as U+FFFD, as a decoder does with bytes it cannot read.
 */
const LONE_HALF = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/gi;

/**
 * One row in words for a person ("claude session 123 (alive: running)"): kept here, beside the
 * escaping it needs, so the hook commands that print it do not load the table's modules.
 */
export function describeRow(row: Row): string {
  const who = row.agent ? `${printable(row.agent)} session` : "anonymous session";
  return `${who} ${row.session_pid} (${row.liveness}: ${row.reason})`;
}
