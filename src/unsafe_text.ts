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
