/**
 * The one rule for what text a terminal (or the text layout around it) may act on instead of
 * showing: src/cli/terminal.ts escapes these in everything roster prints, and the continuation's
 * dispatch message (src/continuation/message.ts) turns them into spaces before tmux types it.
 */

/**
 * The characters themselves, for a character class: C0 controls, DEL, C1 controls (a lone
 * U+009B is CSI, U+009D OSC: a window title or an OSC 52 clipboard write in xterm.js), the line
 * and paragraph separators, and the bidirectional marks, embeddings, overrides and isolates
 * that reorder what is shown (U+061C, U+200E/F, U+202A-E, U+2066-9). C0 is apart because
 * JSON.stringify already escapes it in strings (and a JSON text's newlines are layout).
 */
const C0 = "\\x00-\\x1f";
const BEYOND_C0 = "\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";

/** Every character a terminal may act on (global: for replace). */
export const UNSAFE = new RegExp(`[${C0}${BEYOND_C0}]`, "g");
/** UNSAFE less C0: what JSON text may still hold. */
export const UNSAFE_BEYOND_C0 = new RegExp(`[${BEYOND_C0}]`, "g");

/**
 * UNSAFE, and a backslash wherever it could be taken for the start of an escape that
 * src/cli/terminal.ts printable writes: before `x`, `u`, another backslash, a character that
 * becomes an escape, or at the end (text roster prints next may begin with `x`). Escaped as
 * `\\`, such a backslash keeps a field holding the text `\x1b[31m` apart from one holding a
 * real ESC; any other backslash (a Windows path's) is shown as it is.
 */
export const UNSAFE_OR_ESCAPE_LIKE = new RegExp(
  `[${C0}${BEYOND_C0}]|\\\\(?=[xu\\\\${C0}${BEYOND_C0}]|$)`,
  "g",
);
