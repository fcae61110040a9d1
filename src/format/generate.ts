/**
 * A format's straight-line code, pure: its check, its reasons and its copy written out field by
 * field, for a hot path (`deno task formats` writes the files; a test keeps them current).
 * Named loads and direct calls optimise early, where format.ts's loops over fields make every
 * load and call site megamorphic.
 */
import type { FieldOf, Fields, Format, Type } from "./format.ts";

/** What to write for one format. */
export interface Generated {
  format: Format<Fields>;
  /** The declaration the code is written from (a path, for the header). */
  source: string;
  /** The type of the copy, and the import that brings it. */
  type: { name: string; from: string };
  /** The names of the exported functions: the check, the reasons, the copy. */
  names: { test: string; problem: string; copy: string };
  /** More exports: a constant of some fields' values (null for "every field null"). */
  constants?: { name: string; doc: string; fields: readonly string[] | null; type?: string }[];
  /** Where the imports the code needs come from, relative to the file written. */
  imports: { isPid: string; parseTime: string; chars: string };
}

const IDENT = /^[A-Za-z_$][\w$]*$/;
/** The longest test written inline (`typeof x === "boolean"`). */
const SHORT = 24;
const prop = (o: string, name: string) =>
  IDENT.test(name) ? `${o}.${name}` : `${o}[${JSON.stringify(name)}]`;
const pascal = (name: string) =>
  name.split(/[^A-Za-z0-9]+/).map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join("");

/** The module's text (before `deno fmt`). */
export function generate(g: Generated): string {
  const helpers = new Map<string, string>();

  /** Tests of a leaf (or a nullable one), by their code: one small function each. */
  const tests = new Map<string, { name: string; text: string }>();
  const leafTest = (t: Type<unknown>, x: string): string => {
    const code = t.kind === "leaf" ? t.code("x") : `x === null || ${t.of[0].code("x")}`;
    // A short test stays inline; a longer one is a function every field of its type calls,
    // which V8 optimises after a few records (inline, each copy would wait for its own).
    if (code.length <= SHORT) return t.kind === "leaf" ? t.code(x) : `(${t.code(x)})`;
    let test = tests.get(code);
    if (test === undefined) {
      const label = t.kind === "leaf" ? t.label! : `${t.of[0].label} or null`;
      const base = `is${pascal(label)}`;
      const taken = new Set([...tests.values()].map((v) => v.name));
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base}${i}`;
      test = {
        name,
        text: `/** ${t.expected.replaceAll("*/", "* /")}. */\n` +
          `function ${name}(x: unknown): boolean {\n  return ${code};\n}`,
      };
      tests.set(code, test);
    }
    return `${test.name}(${x})`;
  };

  const expr = (t: Type<unknown>, x: string): string => {
    if (t.kind === "leaf" || (t.kind === "nullable" && t.of[0].kind === "leaf")) {
      return leafTest(t, x);
    }
    if (t.kind === "nullable") return `(${x} === null || ${expr(t.of[0], x)})`;
    if (t.kind === "either") return `(${expr(t.of[0], x)} || ${expr(t.of[1], x)})`;
    return `${helper(t)}(${x})`;
  };

  const copyExpr = (t: Type<unknown>, x: string): string => {
    if (t.kind === "object") return `${copyHelper(t)}(${x} as Raw)`;
    if (t.kind === "array") {
      const item = t.of[0];
      return item.kind === "leaf"
        ? `(${x} as unknown[]).slice()`
        : item.kind === "object"
        ? `(${x} as Raw[]).map(${copyHelper(item)})`
        : `(${x} as unknown[]).map((x) => ${copyExpr(item, "x")})`;
    }
    if (t.kind === "nullable" && t.of[0].kind !== "leaf") {
      return `(${x} === null ? null : ${copyExpr(t.of[0], x)})`;
    }
    return x;
  };

  /**
   * The check of all of an object's fields, as one expression over `o`: the record's a field a
   * line; a nested object's run on (deno fmt wraps it), which keeps the helpers short.
   */
  const fieldsExpr = (fields: readonly FieldOf[], o: string, nested = false) =>
    fields.filter((f) => f.presence !== "lenient").map((f) => {
      const test = expr(f.type, prop(o, f.name));
      return f.presence === "required"
        ? `${JSON.stringify(f.name)} in ${o} && ${test}`
        : `(!(${JSON.stringify(f.name)} in ${o}) || ${test})`;
    }).join(nested ? " && " : " &&\n    ");

  /**
   * The copy of an object's fields, as an object literal over `o`: the record's typed a field a
   * line; a nested object's (typed by its caller's cast) on one line.
   */
  const copyLiteral = (fields: readonly FieldOf[], o: string, nested = false) => {
    const entries = fields.map((f) => {
      const key = JSON.stringify(f.name);
      const v = `${copyExpr(f.type, prop(o, f.name))}${nested ? "" : " as never"}`;
      if (f.presence === "required") return `${f.name}: ${v}`;
      if (f.presence === "default") {
        return `${f.name}: ${key} in ${o} ? ${v} : ${literal(f.default, f.name)}`;
      }
      const test = f.presence === "lenient" ? ` && ${expr(f.type, prop(o, f.name))}` : "";
      return `...(${key} in ${o}${test} ? { ${f.name}: ${v} } : {})`;
    });
    return nested
      ? `{ ${entries.join(", ")} }`
      : `{\n${entries.map((e) => `    ${e},`).join("\n")}\n  }`;
  };

  const literal = (v: unknown, name: string) =>
    Array.isArray(v) && v.length === 0
      ? `[] as ${g.type.name}[${JSON.stringify(name)}]`
      : JSON.stringify(v);

  function helper(t: Type<unknown>): string {
    if (t.kind === "object") {
      const name = `ok${pascal(t.format!.name)}`;
      if (!helpers.has(name)) {
        helpers.set(name, "");
        helpers.set(
          name,
          // result.ts's isObject written out: importing it put a chunk of its own on every
          // hook's start-up.
          `function ${name}(o: unknown): boolean {\n` +
            `  return typeof o === "object" && o !== null && !Array.isArray(o) && ${
              fieldsExpr(t.format!.fields, "o", true)
            };\n}`,
        );
      }
      return name;
    }
    const item = t.of[0];
    const name = `ok${item.kind === "object" ? pascal(item.format!.name) : "Item"}List`;
    if (!helpers.has(name)) {
      helpers.set(name, "");
      helpers.set(
        name,
        `function ${name}(v: unknown): boolean {\n` +
          `  if (!Array.isArray(v) || v.length > ${t.max}) return false;\n` +
          // A loop, not every(): every() with a callback took 1.14x to 1.46x the loop's time.
          `  for (const x of v) if (!(${expr(item, "x")})) return false;\n  return true;\n}`,
      );
    }
    return name;
  }

  function copyHelper(t: Type<unknown>): string {
    const name = `copy${pascal(t.format!.name)}`;
    if (!helpers.has(name)) {
      helpers.set(name, "");
      helpers.set(
        name,
        `function ${name}(o: Raw): unknown {\n  return ${
          copyLiteral(t.format!.fields, "o", true)
        };\n}`,
      );
    }
    return name;
  }

  const { format, names } = g;
  for (const f of format.fields) {
    if (f.deep) throw new Error(`${format.name}.${f.name}: a deep field has no generated reasons`);
  }
  const test =
    `/** Whether \`o\` is a ${format.name}: the declaration's checks, field by field. */\n` +
    `export function ${names.test}(o: Raw): boolean {\n  return ${
      fieldsExpr(format.fields, "o")
    };\n}`;
  const reasons = [
    ...format.fields.filter((f) => f.presence === "required"),
    ...format.fields.filter((f) => f.presence === "default" || f.presence === "optional"),
  ].map((f) => {
    const key = JSON.stringify(f.name);
    const invalid = `if (!(${expr(f.type, prop("o", f.name))})) return "invalid field: ${f.name}";`;
    return f.presence === "required"
      ? `  if (!(${key} in o)) return "missing field: ${f.name}";\n  ${invalid}`
      : `  if (${key} in o && !(${
        expr(f.type, prop("o", f.name))
      })) return "invalid field: ${f.name}";`;
  }).join("\n");
  const problem =
    `/**\n * What is wrong with \`o\` as a ${format.name}: the first field that fails, the required ones\n` +
    ` * first, in order; null when nothing is.\n */\n` +
    `export function ${names.problem}(o: Raw): string | null {\n${reasons}\n  return null;\n}`;
  const copy =
    `/** The copy of a ${format.name} \`o\` (${names.test}): its fields only, in order. */\n` +
    `export function ${names.copy}(o: Raw): ${g.type.name} {\n  return ${
      copyLiteral(format.fields, "o")
    };\n}`;
  const constants = (g.constants ?? []).map((c) => {
    if (c.fields === null) {
      // Every field null: built from the names, one line of them, not a line a field.
      const names = format.fields.map((f) => f.name).join(" ");
      return `/** ${c.doc} */\nexport const ${c.name} = Object.fromEntries(\n` +
        `  ${JSON.stringify(names)}.split(" ").map((k) => [k, null]),\n) as ${
          c.type ?? "Record<string, null>"
        };`;
    }
    const fields = c.fields.map((n) => {
      const f = format.fields.find((f) => f.name === n)!;
      return [n, literal(f.default, n)];
    });
    return `/** ${c.doc} */\nexport const ${c.name}${c.type ? `: ${c.type}` : ""} = {\n${
      fields.map(([k, v]) => `  ${k}: ${v},`).join("\n")
    }\n}${c.type ? "" : " as const"};`;
  });
  const body = [
    test,
    problem,
    copy,
    ...helpers.values(),
    ...[...tests.values()].map((t) => t.text),
    ...constants,
  ].join("\n\n");
  const imports = [
    body.includes("isPid(") ? `import { isPid } from "${g.imports.isPid}";` : "",
    body.includes("parseTime(") ? `import { parseTime } from "${g.imports.parseTime}";` : "",
    body.includes("isLowerWord(") ? `import { isLowerWord } from "${g.imports.chars}";` : "",
    `import type { ${g.type.name} } from "${g.type.from}";`,
  ].filter((l) => l !== "");
  return [
    `/**\n * The ${format.name}'s checks and copy written out, from ${g.source}:\n` +
    ` * generated by \`deno task formats\` (scripts/formats.ts); do not edit.\n */`,
    ...imports,
    "",
    "/** A parsed object's fields, as read (nothing about them checked yet). */",
    "type Raw = Record<string, unknown>;",
    "",
    body,
    "",
  ].join("\n");
}
