/**
 * A strict parser for the YAML subset the GitHub workflows use: block mappings and sequences,
 * one-line flow `[...]` and `{...}`, plain and quoted scalars, `|` and `>` block scalars and
 * comments. Anything else (anchors, tags, tabs, multi-line flow, duplicate keys) throws with
 * its line number, so a workflow GitHub would read differently fails the lint. Tests only.
 */

export type Yaml = string | Yaml[] | { [key: string]: Yaml } | null;

interface Line {
  no: number;
  indent: number;
  text: string;
}

export class YamlError extends Error {}

function fail(no: number, why: string): never {
  throw new YamlError(`line ${no}: ${why}`);
}

/** Drops a comment: `#` at the start or after a space, outside quotes. */
function stripComment(s: string): string {
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') {
      if (i === 0 || /[\s:[{,-]/.test(s[i - 1])) quote = c;
    } else if (c === "#" && (i === 0 || /\s/.test(s[i - 1]))) {
      return s.slice(0, i).trimEnd();
    }
  }
  return s.trimEnd();
}

export function parseYaml(source: string): Yaml {
  const raw = source.replace(/\r\n/g, "\n").split("\n");
  const lines: Line[] = [];
  raw.forEach((text, i) => {
    if (/^\t| \t/.test(text.match(/^\s*/)![0])) fail(i + 1, "tab in indentation");
    lines.push({ no: i + 1, indent: text.length - text.trimStart().length, text });
  });
  const p = new Parser(lines);
  p.skipBlank();
  if (p.done()) return null;
  const value = p.block(p.peek().indent);
  p.skipBlank();
  if (!p.done()) fail(p.peek().no, "unexpected text after the document");
  return value;
}

class Parser {
  i = 0;
  constructor(readonly lines: Line[]) {}

  done(): boolean {
    return this.i >= this.lines.length;
  }
  peek(): Line {
    return this.lines[this.i];
  }
  skipBlank() {
    while (!this.done() && stripComment(this.peek().text).trim() === "") this.i++;
  }
  content(l: Line): string {
    return stripComment(l.text).trim();
  }

  /** A block node whose lines start at exactly `indent`. */
  block(indent: number): Yaml {
    const l = this.peek();
    if (l.indent !== indent) fail(l.no, `expected indentation ${indent}`);
    const c = this.content(l);
    if (c === "---" || c.startsWith("&") || c.startsWith("*") || c.startsWith("!")) {
      fail(l.no, `unsupported: ${c}`);
    }
    return c.startsWith("- ") || c === "-" ? this.sequence(indent) : this.mapping(indent);
  }

  sequence(indent: number): Yaml[] {
    const out: Yaml[] = [];
    while (true) {
      this.skipBlank();
      if (this.done()) break;
      const l = this.peek();
      if (l.indent < indent) break;
      if (l.indent > indent) fail(l.no, "bad indentation in a sequence");
      const c = this.content(l);
      if (!(c.startsWith("- ") || c === "-")) break;
      const rest = c === "-" ? "" : c.slice(2).trim();
      if (rest === "") {
        this.i++;
        this.skipBlank();
        if (this.done() || this.peek().indent <= indent) out.push(null);
        else out.push(this.block(this.peek().indent));
      } else if (isMappingEntry(rest)) {
        // `- key: value` starts a mapping whose keys sit where `key` does.
        const col = indent +
          (l.text.trimStart().length - l.text.trimStart().slice(1).trimStart().length);
        this.lines[this.i] = {
          no: l.no,
          indent: col,
          text: " ".repeat(col) + l.text.trimStart().slice(1).trimStart(),
        };
        out.push(this.mapping(col));
      } else {
        this.i++;
        out.push(this.inlineOrBlockScalar(rest, l, indent));
      }
    }
    return out;
  }

  mapping(indent: number): { [key: string]: Yaml } {
    const out: { [key: string]: Yaml } = {};
    while (true) {
      this.skipBlank();
      if (this.done()) break;
      const l = this.peek();
      if (l.indent < indent) break;
      if (l.indent > indent) fail(l.no, "bad indentation in a mapping");
      const c = this.content(l);
      if (c.startsWith("- ")) break;
      const m = /^("[^"]*"|'[^']*'|[^\s"'{[][^:]*?)\s*:(?:\s+(.*))?$/.exec(c);
      if (m === null) fail(l.no, `expected "key: value", got ${JSON.stringify(c)}`);
      const key = unquote(m[1], l.no);
      if (Object.hasOwn(out, key)) fail(l.no, `duplicate key ${key}`);
      const rest = (m[2] ?? "").trim();
      this.i++;
      if (rest === "") {
        this.skipBlank();
        if (this.done() || this.peek().indent < indent) out[key] = null;
        else if (this.peek().indent === indent) {
          // A sequence may sit at its key's indentation.
          out[key] = this.content(this.peek()).startsWith("- ") ? this.sequence(indent) : null;
        } else out[key] = this.block(this.peek().indent);
      } else {
        out[key] = this.inlineOrBlockScalar(rest, l, indent);
      }
    }
    return out;
  }

  /** `|`/`>` block scalars read the following more-indented lines; anything else is inline. */
  inlineOrBlockScalar(rest: string, l: Line, indent: number): Yaml {
    const block = /^([|>])([+-]?)$/.exec(rest);
    if (block === null) return flow(rest, l.no);
    const body: string[] = [];
    let bodyIndent = -1;
    while (!this.done()) {
      const n = this.peek();
      if (n.text.trim() === "") {
        body.push("");
        this.i++;
        continue;
      }
      if (n.indent <= indent) break;
      if (bodyIndent === -1) bodyIndent = n.indent;
      if (n.indent < bodyIndent) fail(n.no, "bad indentation in a block scalar");
      body.push(n.text.slice(bodyIndent));
      this.i++;
    }
    while (body.length > 0 && body[body.length - 1] === "") body.pop();
    const text = block[1] === "|" ? body.join("\n") : body.join(" ").replace(/ {2,}/g, " ");
    return block[2] === "-" ? text : text + "\n";
  }
}

function isMappingEntry(s: string): boolean {
  return /^("[^"]*"|'[^']*'|[^\s"'{[][^:]*?)\s*:(\s|$)/.test(s);
}

function unquote(s: string, no: number): string {
  if (s.startsWith('"')) {
    if (!s.endsWith('"') || s.length < 2) fail(no, "unterminated string");
    return JSON.parse(s);
  }
  if (s.startsWith("'")) {
    if (!s.endsWith("'") || s.length < 2) fail(no, "unterminated string");
    return s.slice(1, -1).replaceAll("''", "'");
  }
  return s;
}

/** One-line flow values: `[a, b]`, `{ k: v }`, quoted or plain scalars. */
function flow(s: string, no: number): Yaml {
  let i = 0;
  const ws = () => {
    while (s[i] === " ") i++;
  };
  const value = (inFlow: boolean): Yaml => {
    ws();
    if (s[i] === "[") {
      i++;
      const out: Yaml[] = [];
      ws();
      if (s[i] === "]") {
        i++;
        return out;
      }
      while (true) {
        out.push(value(true));
        ws();
        if (s[i] === ",") i++;
        else if (s[i] === "]") {
          i++;
          return out;
        } else fail(no, "expected , or ] in a flow sequence");
      }
    }
    if (s[i] === "{") {
      i++;
      const out: { [key: string]: Yaml } = {};
      ws();
      if (s[i] === "}") {
        i++;
        return out;
      }
      while (true) {
        ws();
        const key = scalar(true, true);
        ws();
        if (s[i] !== ":") fail(no, "expected : in a flow mapping");
        i++;
        if (Object.hasOwn(out, key)) fail(no, `duplicate key ${key}`);
        out[key] = value(true);
        ws();
        if (s[i] === ",") i++;
        else if (s[i] === "}") {
          i++;
          return out;
        } else fail(no, "expected , or } in a flow mapping");
      }
    }
    return scalar(inFlow, false);
  };
  const scalar = (inFlow: boolean, isKey: boolean): string => {
    if (s[i] === '"' || s[i] === "'") {
      const q = s[i];
      let j = i + 1;
      while (j < s.length && !(s[j] === q && !(q === "'" && s[j + 1] === "'"))) {
        j += q === '"' && s[j] === "\\" ? 2 : (q === "'" && s[j] === "'" ? 2 : 1);
      }
      if (j >= s.length) fail(no, "unterminated string");
      const text = unquote(s.slice(i, j + 1), no);
      i = j + 1;
      return text;
    }
    const start = i;
    while (i < s.length) {
      if (inFlow && /[,\]}]/.test(s[i])) break;
      if (isKey && s[i] === ":") break;
      if (inFlow && s[i] === ":" && s[i + 1] === " " && !isKey) break;
      i++;
    }
    const text = s.slice(start, i).trim();
    if (/^[&*!]/.test(text)) fail(no, `unsupported: ${text}`);
    if (/^[|>]/.test(text)) fail(no, "a block scalar indicator here");
    return text;
  };
  const v = value(false);
  ws();
  if (i < s.length) fail(no, `unexpected ${JSON.stringify(s.slice(i))}`);
  return v;
}
