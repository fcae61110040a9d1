/** `roster schema [NAME]`: the JSON Schema of one JSON output, or the list of them. */
import { notOneOf } from "../../errors.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { schemaDocument, SCHEMAS } from "../schemas.ts";

export function run(ctx: Context, args: Parsed): number {
  const [name] = args.positionals;
  if (name === undefined) {
    const list = Object.entries(SCHEMAS).map(([n, s]) => ({ name: n, summary: s.summary }));
    if (ctx.json) ctx.printJson(list);
    else {
      const width = Math.max(...list.map((l) => l.name.length)) + 2;
      ctx.out(list.map((l) => l.name.padEnd(width) + l.summary).join("\n"));
    }
    return 0;
  }
  const doc = schemaDocument(name);
  if (doc === null) {
    throw notOneOf("NAME", Object.keys(SCHEMAS), name);
  }
  ctx.printJson(doc);
  return 0;
}
