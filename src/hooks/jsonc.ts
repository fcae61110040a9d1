/**
 * Settings files as text, pure: a JSON (or, where the harness accepts them, JSON with comments)
 * parser that keeps where every value lies, and edits that insert or remove one element as a
 * span of text, so every byte roster did not add (comments, formatting, key order, numbers such
 * as `1e400`, duplicate keys) stays as the user wrote it.
 */

/** A value and the span of text it occupies. */
export type Node =
  | { kind: "object"; start: number; end: number; members: Member[] }
  | { kind: "array"; start: number; end: number; items: Node[] }
  | { kind: "scalar"; start: number; end: number };

/** One `"key": value` of an object; `start` is the key's opening quote. */
export interface Member {
  key: string;
  start: number;
  value: Node;
}

/** Which JSON a harness reads: comments or not (none of them reads trailing commas). */
export interface Dialect {
  comments: boolean;
}

/** Deeper than any settings file is: a bound, so a hostile file is an error, not a crash. */
export const MAX_DEPTH = 100;

export class JsonSyntaxError extends Error {}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// Control characters are not allowed raw in a JSON string.
// deno-lint-ignore no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const LITERAL = /true|false|null/y;

function position(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  return `line ${line}, column ${at - before.lastIndexOf("\n")}`;
}

/** Parses `text` as one value; a syntax error names where it is. */
export function parse(text: string, dialect: Dialect): Node {
  // A byte-order mark an editor left at the start: not JSON, kept where it is.
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at ${position(text, i)}`);
  };
  const skip = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else if (c === 47 && dialect.comments && text[i + 1] === "/") {
        const nl = text.indexOf("\n", i);
        i = nl < 0 ? text.length : nl;
      } else if (c === 47 && dialect.comments && text[i + 1] === "*") {
        const close = text.indexOf("*/", i + 2);
        if (close < 0) fail("an unclosed comment");
        i = close + 2;
      } else if (c === 47) fail("a comment (this harness reads plain JSON)");
      else return;
    }
  };
  const match = (re: RegExp): number => {
    re.lastIndex = i;
    return re.test(text) ? re.lastIndex : -1;
  };
  /**
   * The elements of an object or an array, from its opening bracket at i to `close`: `element`
   * reads one, from its first character; returns the end, past `close`.
   */
  const elements = (close: "}" | "]", element: () => void): number => {
    i++;
    skip();
    if (text[i] === close) return ++i;
    for (;;) {
      skip();
      element();
      skip();
      if (text[i] === ",") i++;
      else if (text[i] === close) return ++i;
      else fail(`',' or '${close}' expected`);
    }
  };
  const value = (depth: number): Node => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`);
    skip();
    const start = i;
    const c = text[i];
    if (c === "{") {
      const members: Member[] = [];
      const end = elements("}", () => {
        const keyStart = i;
        const keyEnd = match(STRING);
        if (keyEnd < 0) fail(text[i] === "}" ? "a trailing comma" : "a key (a string) expected");
        const key = JSON.parse(text.slice(keyStart, keyEnd)) as string;
        i = keyEnd;
        skip();
        if (text[i] !== ":") fail("':' expected");
        i++;
        members.push({ key, start: keyStart, value: value(depth + 1) });
      });
      return { kind: "object", start, end, members };
    }
    if (c === "[") {
      const items: Node[] = [];
      const end = elements("]", () => {
        if (text[i] === "]") fail("a trailing comma");
        items.push(value(depth + 1));
      });
      return { kind: "array", start, end, items };
    }
    const end = c === '"'
      ? match(STRING)
      : c === "-" || (c >= "0" && c <= "9")
      ? match(NUMBER)
      : match(LITERAL);
    if (end < 0) fail(i >= text.length ? "unexpected end of the file" : "a value expected");
    i = end;
    return { kind: "scalar", start, end };
  };
  const root = value(0);
  skip();
  if (i < text.length) fail("text after the value");
  return root;
}

/** The value a node stands for, as a harness's JSON.parse reads it (the last duplicate key wins). */
export function valueOf(text: string, node: Node): Json {
  if (node.kind === "scalar") return JSON.parse(text.slice(node.start, node.end));
  if (node.kind === "array") return node.items.map((n) => valueOf(text, n));
  const out: { [k: string]: Json } = {};
  for (const m of node.members) {
    // Defined, not assigned: a key "__proto__" is data, never the object's prototype.
    Object.defineProperty(out, m.key, {
      value: valueOf(text, m.value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The last member named `key` (the one a harness reads), or undefined. */
export function memberOf(node: Node, key: string): Member | undefined {
  if (node.kind !== "object") return undefined;
  for (let k = node.members.length - 1; k >= 0; k--) {
    if (node.members[k].key === key) return node.members[k];
  }
  return undefined;
}

interface Span {
  start: number;
  end: number;
}

const spanOf = (container: Node, k: number): Span => {
  if (container.kind === "object") {
    const m = container.members[k];
    return { start: m.start, end: m.value.end };
  }
  if (container.kind === "array") return container.items[k];
  throw new Error("not a container");
};

const countOf = (n: Node) =>
  n.kind === "object" ? n.members.length : n.kind === "array" ? n.items.length : 0;

/** The comma's offset in a gap of whitespace, comments and one comma; whether it has comments. */
function gapOf(text: string, from: number, to: number): { comma: number; comments: boolean } {
  let comma = -1;
  let comments = false;
  for (let i = from; i < to; i++) {
    if (text[i] === ",") comma = i;
    else if (text[i] === "/" && text[i + 1] === "/") {
      comments = true;
      i = text.indexOf("\n", i);
      if (i < 0) break;
    } else if (text[i] === "/" && text[i + 1] === "*") {
      comments = true;
      i = text.indexOf("*/", i + 2) + 1;
    }
  }
  return { comma, comments };
}

/** Where the whitespace before `at` starts (back to the end of the last token or comment). */
function wsBefore(text: string, at: number): number {
  while (at > 0 && /[ \t\r\n]/.test(text[at - 1])) at--;
  return at;
}

function splice(text: string, start: number, end: number, insert = ""): string {
  return text.slice(0, start) + insert + text.slice(end);
}

/**
 * The text without element `k` of `container` (an array's item or an object's member) and the
 * comma that separated it, and the whitespace roster would have put there: the exact inverse of
 * `append`, and the user's comments around it kept.
 */
export function remove(text: string, container: Node, k: number): string {
  const n = countOf(container);
  const el = spanOf(container, k);
  if (n === 1) {
    const inner = gapOf(text, container.start + 1, el.start).comments ||
      gapOf(text, el.end, container.end - 1).comments;
    return inner
      ? splice(text, wsBefore(text, el.start), el.end)
      : splice(text, container.start + 1, container.end - 1);
  }
  if (k > 0) {
    const prev = spanOf(container, k - 1);
    const gap = gapOf(text, prev.end, el.start);
    if (!gap.comments) return splice(text, prev.end, el.end);
    // Keep the comments between: take out the comma, and the element with its own indent.
    const out = splice(text, wsBefore(text, el.start), el.end);
    return splice(out, gap.comma, gap.comma + 1);
  }
  const next = spanOf(container, 1);
  const gap = gapOf(text, el.end, next.start);
  if (!gap.comments) return splice(text, el.start, next.start);
  let after = gap.comma + 1;
  while (after < next.start && (text[after] === " " || text[after] === "\t")) after++;
  return splice(text, el.start, after);
}

/** The text's line break and indent step, read from the file (CRLF or LF; its first indent). */
export function styleOf(text: string): { nl: string; unit: string } {
  const nl = text.includes("\r\n") ? "\r\n" : "\n";
  const m = /\n([ \t]+)\S/.exec(text);
  return { nl, unit: m ? m[1] : "  " };
}

/** The indent of the line `at` lies on. */
function indentAt(text: string, at: number): string {
  const lineStart = text.lastIndexOf("\n", at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

function render(value: unknown, indent: string, style: { nl: string; unit: string }): string {
  return JSON.stringify(value, null, style.unit).split("\n").join(style.nl + indent);
}

/**
 * The text with one element appended to `container`: `value` as an array item, or, with
 * `key`, as an object member. Laid out like its neighbours: on a line of its own at their
 * indent when they have lines of their own, else on the same line.
 */
export function append(text: string, container: Node, value: unknown, key?: string): string {
  const style = styleOf(text);
  const n = countOf(container);
  const el = (indent: string, multiline: boolean) =>
    (key === undefined ? "" : `${JSON.stringify(key)}: `) +
    (multiline ? render(value, indent, style) : JSON.stringify(value));
  if (n > 0) {
    const last = spanOf(container, n - 1);
    const ws = wsBefore(text, last.start);
    const multiline = text.slice(ws, last.start).includes("\n");
    const indent = indentAt(text, last.start);
    const sep = multiline ? style.nl + indent : " ";
    return splice(text, last.end, last.end, `,${sep}${el(indent, multiline)}`);
  }
  const outer = indentAt(text, container.start);
  const inner = outer + style.unit;
  return splice(
    text,
    container.start + 1,
    container.start + 1,
    `${style.nl}${inner}${el(inner, true)}${style.nl}${outer}`,
  );
}
