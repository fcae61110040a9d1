/**
 * Writes schemas/<name>.json from the schema module (src/cli/schemas.ts), the one place they
 * are defined: `deno run --allow-write scripts/schemas.ts` (or `deno task formats`, which also
 * writes the code generated from the file formats). A test keeps the files current.
 */
import { schemaDocument, SCHEMAS } from "../src/cli/schemas.ts";

export const SCHEMA_DIR = new URL("../schemas/", import.meta.url).pathname;

/** The text of schemas/<name>.json, exactly as `roster schema NAME` prints it. */
export function schemaText(name: string): string {
  return JSON.stringify(schemaDocument(name), null, 2) + "\n";
}

/** Writes every schema's file. */
export function writeSchemas() {
  Deno.mkdirSync(SCHEMA_DIR, { recursive: true });
  for (const name of Object.keys(SCHEMAS)) {
    Deno.writeTextFileSync(`${SCHEMA_DIR}${name}.json`, schemaText(name));
  }
  console.log(`wrote ${Object.keys(SCHEMAS).length} schemas to ${SCHEMA_DIR}`);
}

if (import.meta.main) writeSchemas();
