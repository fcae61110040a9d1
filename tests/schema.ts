/**
 * A validator for the subset of JSON Schema roster's schemas use (type, const, enum,
 * properties, required, additionalProperties: false, items, anyOf, `$ref: "#"`, minimum,
 * format date-time), and the map from a roster command line to the schema of its JSON output.
 * Every JSON output the suite produces through helpers.ts is checked here.
 */
import { schemaDocument } from "../src/cli/schemas.ts";

type Schema = Record<string, unknown>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

const KNOWN = new Set([
  "$schema",
  "$id",
  "title",
  "description",
  "type",
  "const",
  "enum",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "$ref",
  "minimum",
  "format",
]);

/** The problems of `value` against `schema` (empty: valid), each with its JSON path. */
export function validate(schema: Schema, value: unknown, root = schema, at = "$"): string[] {
  for (const k of Object.keys(schema)) {
    if (!KNOWN.has(k)) return [`${at}: the schema uses ${k}, which this validator does not know`];
  }
  if (schema.$ref !== undefined) {
    if (schema.$ref !== "#") return [`${at}: unsupported $ref ${schema.$ref}`];
    return validate(root, value, root, at);
  }
  const errors: string[] = [];
  const t = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const ok = types.includes(t) || (t === "integer" && types.includes("number"));
    if (!ok) return [`${at}: expected ${types.join(" or ")}, got ${t}`];
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${at}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
  }
  if (schema.enum !== undefined && !(schema.enum as unknown[]).includes(value as never)) {
    errors.push(
      `${at}: expected one of ${JSON.stringify(schema.enum)}, got ${JSON.stringify(value)}`,
    );
  }
  if (schema.anyOf !== undefined) {
    const branches = (schema.anyOf as Schema[]).map((s) => validate(s, value, root, at));
    if (!branches.some((e) => e.length === 0)) errors.push(...branches.flat());
  }
  if (typeof schema.minimum === "number" && typeof value === "number" && value < schema.minimum) {
    errors.push(`${at}: ${value} is below ${schema.minimum}`);
  }
  if (schema.format === "date-time" && typeof value === "string" && !RFC3339.test(value)) {
    errors.push(`${at}: not an RFC 3339 date-time: ${value}`);
  }
  if (t === "object") {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const r of (schema.required ?? []) as string[]) {
      if (!(r in obj)) errors.push(`${at}: missing ${r}`);
    }
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) errors.push(...validate(props[k], v, root, `${at}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: unexpected field ${k}`);
    }
  }
  if (t === "array" && schema.items !== undefined) {
    (value as unknown[]).forEach((v, i) =>
      errors.push(...validate(schema.items as Schema, v, root, `${at}[${i}]`))
    );
  }
  return errors;
}

/**
 * Commands whose `--json` prints no JSON of roster's own, each with the reason. Every other
 * command must have a schema (tests/cli/schema_test.ts goes through the command table).
 */
export const NO_JSON_OUTPUT: Readonly<Record<string, string>> = {
  exec: "stdout is the command's own; roster prints nothing there",
  help: "prints the help text, as --help does",
};

/** The command a roster command line runs: its first word that is no flag or flag value. */
function commandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--home" || args[i] === "--color") i++;
    else if (!args[i].startsWith("-")) return args[i];
  }
  return undefined;
}

/**
 * The schema of what `roster ARGS --json` prints, by command: a name in SCHEMAS, `none` for a
 * command of NO_JSON_OUTPUT, or null for a command that has no schema (a failure).
 */
export function schemaFor(args: readonly string[]): string | null {
  if (args.includes("--version") || args.includes("-V")) return "version";
  const command = commandOf(args);
  if (command === undefined) return null;
  if (command in NO_JSON_OUTPUT) return "none";
  switch (command) {
    case "register":
    case "park":
    case "resume":
      return "row";
    case "token":
      return args.includes("--verify") ? "token-verify" : "token";
    case "continuation-check":
      return "verdict";
    case "continuation-plan":
    case "continuation-release":
      return "plan";
    case "continuation-show":
      return "continuation-key";
    case "hooks":
      return args.includes("show") ? "hooks-show" : "hooks";
    default:
      return schemaDocument(command) !== null ? command : null;
  }
}

/**
 * Throws, naming the command and every problem, when `stdout` does not match its schema, or
 * when the command has no schema at all: every JSON output needs one.
 */
export function assertSchema(args: readonly string[], stdout: string): void {
  const name = schemaFor(args);
  if (name === "none") return;
  if (name === null) {
    throw new Error(
      `roster ${args.join(" ")} --json: no schema for this output: add one to ` +
        "src/cli/schemas.ts (and its command to schemaFor in tests/schema.ts)",
    );
  }
  const schema = schemaDocument(name)!;
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    throw new Error(
      `roster ${args.join(" ")} --json printed invalid JSON: ${stdout.slice(0, 200)}`,
    );
  }
  const problems = validate(schema, value);
  if (problems.length > 0) {
    throw new Error(
      `roster ${args.join(" ")}: the output does not match schema ${name}:\n  ` +
        problems.slice(0, 10).join("\n  "),
    );
  }
}
