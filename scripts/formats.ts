/**
 * `deno task formats`: writes the code generated from the file formats' declarations
 * (src/format/generate.ts) and the schemas built from them (scripts/schemas.ts). A test
 * (tests/format/generated_test.ts) fails while either is stale.
 */
import { generate, type Generated } from "../src/format/generate.ts";
import type { Fields, Format } from "../src/format/format.ts";
import { LIFECYCLE, SESSION_RECORD } from "../src/registry/record_format.ts";
import { writeSchemas } from "./schemas.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Every generated file: its path from the root, and what is written there. */
export const GENERATED: { path: string; spec: Generated }[] = [{
  path: "src/registry/record_check.ts",
  spec: {
    format: SESSION_RECORD as unknown as Format<Fields>,
    source: "record_format.ts (SESSION_RECORD)",
    type: { name: "SessionRecord", from: "./record_format.ts" },
    names: { test: "isRecord", problem: "recordFieldProblem", copy: "copyRecord" },
    constants: [
      {
        name: "NO_LIFECYCLE",
        doc:
          "The lifecycle fields of a session that has not ended, been parked or been planned for.",
        fields: Object.keys(LIFECYCLE),
      },
      {
        name: "NULL_RECORD",
        doc: "Every record field null: the base of rows that no valid record stands behind.",
        fields: null,
        type: "Readonly<{ [K in keyof SessionRecord]: null }>",
      },
    ],
    imports: { isPid: "../process/pid.ts", parseTime: "../time.ts", chars: "../chars.ts" },
  },
}];

/** The text of a generated file, formatted as `deno fmt` leaves it. */
export async function generatedText(spec: Generated): Promise<string> {
  const fmt = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "ts", "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = fmt.stdin.getWriter();
  await writer.write(new TextEncoder().encode(generate(spec)));
  await writer.close();
  const out = await fmt.output();
  if (!out.success) throw new Error(`deno fmt failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  for (const { path, spec } of GENERATED) {
    Deno.writeTextFileSync(`${ROOT}${path}`, await generatedText(spec));
    console.log(`wrote ${path}`);
  }
  writeSchemas();
}
