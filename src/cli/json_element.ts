/**
 * A row as `list --json` and `prune --json` print it: one element of a JSON array indented by
 * two spaces, terminal-safe (./terminal.ts). `jsonElement` makes it as a string;
 * `writeJsonElement` writes the same bytes as UTF-8 straight into a buffer (../external_sort.ts
 * keeps rows as bytes), with no string per row, no escape pass over the whole text and no
 * encoding call: at 100,000 records, the string, its escape and its encoding cost about 3.5 us
 * a row, more than a third of what roster adds to the floor's I/O.
 */
import { terminalJson } from "./terminal.ts";

/**
 * One row as an element of a JSON array printed with two-space indentation, `depth` arrays
 * deep (prune's rows sit in an object's array: 2), terminal-safe. JSON.stringify indents the
 * row inside arrays of one element, which are then cut away: one native call, no re-indenting.
 */
export function jsonElement(row: unknown, depth = 1): string {
  let wrapped: unknown = row;
  for (let i = 0; i < depth; i++) wrapped = [wrapped];
  const cut = depth * (depth + 1);
  const text = JSON.stringify(wrapped, null, 2);
  return terminalJson(text.slice(cut, text.length - cut));
}

const encoder = new TextEncoder();

/** The compact JSON of the row being written, as bytes (grown for a longer row, never shrunk). */
let compact = new Uint8Array(16 * 1024);

/**
 * `jsonElement(value, depth)` as UTF-8 into `buf` from `at`: the bytes written, or -1 when they
 * do not fit before `buf.length` (what was written there is then garbage).
 *
 * Byte for byte what `jsonElement` gives, for any value. JSON.stringify without indentation
 * takes V8's fast path (about a third of the indenting one's cost); its text, when it is all
 * ASCII and holds no DEL, is copied with the whitespace the indenting one puts between the
 * same tokens: a newline and the indentation after `{`, `[` and `,`, before `}` and `]`, a
 * space after `:`, nothing in `{}` and `[]`, nothing inside strings (which are copied as they
 * are, escapes included, to their closing quote). Such text needs no terminal escape:
 * everything terminalJson changes is DEL or beyond ASCII. Any other text (rare: a non-ASCII
 * path or name) goes through jsonElement itself. tests/cli/json_element_test.ts compares the
 * two on rows and on mangled values.
 */
export function writeJsonElement(
  value: unknown,
  depth: number,
  buf: Uint8Array,
  at: number,
): number {
  const text = JSON.stringify(value);
  if (typeof text !== "string") return writeSlowly(value, depth, buf, at);
  if (text.length > compact.length) compact = new Uint8Array(text.length);
  const s = compact;
  const { read, written: n } = encoder.encodeInto(text, s);
  if (read !== text.length || n !== text.length) return writeSlowly(value, depth, buf, at);
  const limit = buf.length;
  let level = depth;
  let p = at;
  // Every check below counts the compact bytes still to come: they are never more than that.
  if (p + 2 * level + n > limit) return -1;
  for (let k = 2 * level; k > 0; k--) buf[p++] = 0x20;
  for (let i = 0; i < n; i++) {
    const c = s[i];
    if (c === 0x22) {
      // A string, to its closing quote; an escape's next byte is never that quote.
      buf[p++] = c;
      let j = i + 1;
      for (let d = s[j]; d !== 0x22; d = s[j]) {
        if (d === 0x5c) {
          // `\ud8..` to `\udf..`: half a character alone, which terminalJson rewrites.
          if (s[j + 1] === 0x75 && (s[j + 2] | 0x20) === 0x64 && isHalfDigit(s[j + 3])) {
            return writeSlowly(value, depth, buf, at);
          }
          buf[p++] = s[j++];
        } else if (d === 0x7f) return writeSlowly(value, depth, buf, at);
        buf[p++] = s[j++];
      }
      buf[p++] = 0x22;
      i = j;
    } else if (c === 0x2c) {
      if (p + 2 * level + 2 + (n - i) > limit) return -1;
      buf[p++] = c;
      buf[p++] = 0x0a;
      for (let k = 2 * level; k > 0; k--) buf[p++] = 0x20;
    } else if (c === 0x3a) {
      if (p + 2 + (n - i) > limit) return -1;
      buf[p++] = c;
      buf[p++] = 0x20;
    } else if (c === 0x7b || c === 0x5b) {
      buf[p++] = c;
      if (s[i + 1] === c + 2) {
        // `{}` and `[]`: nothing between.
        buf[p++] = c + 2;
        i++;
        continue;
      }
      level++;
      if (p + 2 * level + 1 + (n - i) > limit) return -1;
      buf[p++] = 0x0a;
      for (let k = 2 * level; k > 0; k--) buf[p++] = 0x20;
    } else if (c === 0x7d || c === 0x5d) {
      level--;
      if (p + 2 * level + 1 + (n - i) > limit) return -1;
      buf[p++] = 0x0a;
      for (let k = 2 * level; k > 0; k--) buf[p++] = 0x20;
      buf[p++] = c;
    } else buf[p++] = c;
  }
  return p - at;
}

/** Whether byte `c` is 8, 9 or a to f: the third digit of a surrogate's `\udXXX`. */
const isHalfDigit = (c: number) =>
  c === 0x38 || c === 0x39 || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

/** The element made as a string and encoded: for what the copy above does not take. */
function writeSlowly(value: unknown, depth: number, buf: Uint8Array, at: number): number {
  const text = jsonElement(value, depth);
  const { read, written } = encoder.encodeInto(text, buf.subarray(at));
  return read < text.length ? -1 : written;
}
