/** The code blocks the docs mark for their tests: `<!-- KIND: NAME -->` before a fenced block. */

/** The fenced block that follows `<!-- KIND: NAME -->` in the markdown file at `doc`. */
export function markedBlock(doc: string, kind: string, name: string): string {
  const text = Deno.readTextFileSync(doc);
  const marker = `<!-- ${kind}: ${name} -->`;
  const at = text.indexOf(marker);
  if (at === -1) throw new Error(`${doc} has no ${kind}: ${name}`);
  const m = /```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at + marker.length));
  if (!m) throw new Error(`${doc} has no code block after: ${marker}`);
  return m[1] + "\n";
}
