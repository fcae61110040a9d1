/**
 * Pure tests of a string's characters, for what a hook's call reads and checks: V8 compiles a
 * regex on its first use in a process, and again on its second (about 40 to 70 µs each); the
 * 18 an `activity` call met cost it about 1.3 ms, 4% of a hello world (docs/performance.md).
 */

/** Whether the UTF-16 code `c` is an ASCII digit, a lowercase letter, a letter. */
export const isDigit = (c: number): boolean => c >= 48 && c <= 57;
export const isLower = (c: number): boolean => c >= 97 && c <= 122;
export const isLetter = (c: number): boolean => isLower(c | 32);

/** [a-z0-9], and [0-9a-f]. */
export const isLowerOrDigit = (c: number): boolean => isDigit(c) || isLower(c);
export const isLowerHex = (c: number): boolean => isDigit(c) || (c >= 97 && c <= 102);

/** [A-Za-z0-9_-] and [A-Za-z0-9._-]: what a file name made of others' text may keep. */
export const isWordChar = (c: number): boolean =>
  isDigit(c) || isLetter(c) || c === 95 /* _ */ || c === 45 /* - */;
export const isNameChar = (c: number): boolean => isWordChar(c) || c === 46; /* . */

/** Whether `v` is a string of 1 to `max` of [a-z0-9_]. */
export function isLowerWord(v: unknown, max: number): v is string {
  return typeof v === "string" && v.length >= 1 && v.length <= max &&
    every(v, isLowerWordChar);
}

const isLowerWordChar = (c: number) => isLowerOrDigit(c) || c === 95; /* _ */

/** [ \t]. */
export const isBlank = (c: number): boolean => c === 32 || c === 9;

/** Whether every character of `s` from `from` up to `to` passes `test` (true when none). */
export function every(
  s: string,
  test: (c: number) => boolean,
  from = 0,
  to = s.length,
): boolean {
  for (let i = from; i < to; i++) if (!test(s.charCodeAt(i))) return false;
  return true;
}

/** Where the run of characters passing `test` that starts at `from` ends. */
export function runEnd(s: string, test: (c: number) => boolean, from = 0): number {
  let i = from;
  while (i < s.length && test(s.charCodeAt(i))) i++;
  return i;
}

/** `s` with every character that fails `keep` replaced by `by`. */
export function replaceOthers(s: string, keep: (c: number) => boolean, by: string): string {
  if (every(s, keep)) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) out += keep(s.charCodeAt(i)) ? s[i] : by;
  return out;
}

/** The words of `s` split on runs of spaces and tabs, as `s.split(/[ \t]+/)` gives them. */
export function splitBlanks(s: string): string[] {
  const words: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length;) {
    if (!isBlank(s.charCodeAt(i))) {
      i++;
      continue;
    }
    words.push(s.slice(start, i));
    start = i = runEnd(s, isBlank, i);
  }
  words.push(s.slice(start));
  return words;
}

/**
 * The value of the line `<key>:<spaces or tabs><value>` of a `key: value` text (a /proc status
 * file), read line by line: the first line that starts with `<key>:`, to its end; null when no
 * line does.
 */
export function lineValue(text: string, key: string): string | null {
  const head = `${key}:`;
  for (let at = 0; at < text.length;) {
    const end = text.indexOf("\n", at);
    const lineEnd = end === -1 ? text.length : end;
    if (text.startsWith(head, at)) {
      return text.slice(runEnd(text, isBlank, at + head.length), lineEnd);
    }
    at = lineEnd + 1;
  }
  return null;
}

/** Whether `s` is one or more ASCII digits (`/^\d+$/`), after a `-` when `signed`. */
export function isDigits(s: string, signed = false): boolean {
  const from = signed && s.charCodeAt(0) === 45 ? 1 : 0;
  return s.length > from && every(s, isDigit, from);
}

/**
 * `s` cut to at most `max` UTF-16 units, never between the two halves of a character beyond
 * U+FFFF, and well formed: a lone half (which JSON writes as `\ud83d`, and strict readers such as
 * jq refuse) becomes U+FFFD. For text a record or a message keeps from a harness.
 */
export function cutText(s: string, max: number): string {
  let end = Math.min(s.length, max);
  const last = s.charCodeAt(end - 1);
  if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--;
  return s.slice(0, end).toWellFormed();
}
