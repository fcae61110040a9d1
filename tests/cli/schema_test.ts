/**
 * The JSON Schemas: schemas/*.json are the schema module's, exactly as `roster schema NAME`
 * prints them; the validator the suite checks every JSON output with rejects what they forbid.
 */
import { assert, assertEquals } from "../assert.ts";
import { roster } from "../helpers.ts";
import { validate } from "../schema.ts";
import { SCHEMA_DIR, schemaText } from "../../scripts/schemas.ts";
import { schemaDocument, SCHEMAS } from "../../src/cli/schemas.ts";

Deno.test("schemas/*.json are current (deno run -A scripts/schemas.ts rewrites them)", async () => {
  const files = [...Deno.readDirSync(SCHEMA_DIR)].map((e) => e.name).sort();
  assertEquals(files, Object.keys(SCHEMAS).map((n) => `${n}.json`).sort());
  for (const name of Object.keys(SCHEMAS)) {
    assertEquals(await Deno.readTextFile(`${SCHEMA_DIR}${name}.json`), schemaText(name), name);
  }
  const r = await roster(["schema", "prune"]);
  assertEquals(r.stdout, schemaText("prune"));
});

Deno.test("the validator rejects what a schema forbids", () => {
  const row = schemaDocument("token")!;
  const good = {
    pid: 1,
    token: "1@b",
    start_token: "1",
    boot_id: "b",
    process_started_at: "2026-01-01T00:00:00.000Z",
    state: "running",
  };
  assertEquals(validate(row, good), []);
  assert(validate(row, { ...good, extra: 1 }).some((e) => /unexpected field extra/.test(e)));
  assert(validate(row, { ...good, pid: "1" }).some((e) => /\$\.pid: expected integer/.test(e)));
  assert(validate(row, { ...good, state: "x" }).some((e) => /expected one of/.test(e)));
  const { state: _, ...missing } = good;
  assert(validate(row, missing).some((e) => /missing state/.test(e)));
  assert(validate(row, { ...good, process_started_at: "yesterday" }).length > 0);
});
