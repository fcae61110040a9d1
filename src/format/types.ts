/**
 * What a field of a file format may hold: the check combinators (str, time, pid, nullable,
 * object, array, ...), each a test, the same test as code for generate.ts, and its schema.
 */
import { isLowerWord } from "../chars.ts";
import { isPid } from "../process/pid.ts";
import { parseTime } from "../time.ts";
import type { Fields, Format, Value } from "./format.ts";

export type Schema = Record<string, unknown>;

/**
 * What a value may be: a test, the same test as code (leaves), its schema, in words. Schemas
 * of composite types are built when asked for (`roster schema`), not when a format is declared
 * on a hook's path.
 */
export interface Type<V> {
  readonly kind: "leaf" | "nullable" | "either" | "object" | "array";
  /** Whether a parsed JSON value is one. */
  readonly test: (v: unknown) => boolean;
  /** A leaf's test as an expression over the expression `x`, for generated code. */
  readonly code: (x: string) => string;
  readonly schema: Schema;
  /** What it expects, in words ("a boolean"): a format may say it in a problem. */
  readonly expected: string;
  /** A leaf's short name, for generated code (`text 1 to 256`). */
  readonly label?: string;
  /** Nullable: [the type]; either: [one, other]; array: [its items]. */
  readonly of: readonly Type<unknown>[];
  /** An object type's format. */
  readonly format?: Format<Fields>;
  /** An array's most items. */
  readonly max?: number;
  /** The value type, for inference only (never set). */
  readonly _value?: V;
}

function leaf<V>(
  test: (v: unknown) => boolean,
  code: (x: string) => string,
  schema: Schema,
  expected: string,
  label: string,
): Type<V> {
  return { kind: "leaf", test, code, schema, expected, of: [], label };
}

const STRING = { type: "string" };

/** Exactly `value`. */
export function constant<const V extends string | number | boolean>(value: V): Type<V> {
  const text = JSON.stringify(value);
  return leaf((v) => v === value, (x) => `${x} === ${text}`, { const: value }, text, "constant");
}

/** One of `values`. */
export function oneOf<const V extends string>(values: readonly V[]): Type<V> {
  return leaf(
    (v) => (values as readonly unknown[]).includes(v),
    (x) => `(${values.map((s) => `${x} === ${JSON.stringify(s)}`).join(" || ")})`,
    { enum: [...values] },
    `one of ${values.join(", ")}`,
    values.length === 1 ? values[0] : `${values[0]} or ${values.length - 1} more`,
  );
}

export const bool: Type<boolean> = leaf(
  (v) => typeof v === "boolean",
  (x) => `typeof ${x} === "boolean"`,
  { type: "boolean" },
  "a boolean",
  "bool",
);

/** A string of `min` to `max` characters (the schema says only "a string"). */
export function str(max = 4096, min = 0): Type<string> {
  const bounds = (min > 0 ? [`.length >= ${min}`] : []).concat(
    max === Infinity ? [] : [`.length <= ${max}`],
  );
  return leaf(
    (v) => typeof v === "string" && v.length >= min && v.length <= max,
    (x) => [`typeof ${x} === "string"`, ...bounds.map((b) => `${x}${b}`)].join(" && "),
    STRING,
    "a string",
    `text${min > 0 ? ` ${min}` : ""}${max === Infinity ? "" : ` to ${max}`}`,
  );
}

/** A string `pattern` matches in full (the schema says only "a string"). */
export function pattern(re: RegExp): Type<string> {
  return leaf(
    (v) => typeof v === "string" && re.test(v),
    (x) => `typeof ${x} === "string" && ${re}.test(${x})`,
    STRING,
    `a string matching ${re}`,
    "match",
  );
}

/**
 * A name of 1 to `max` of [a-z0-9_] (an OS's, `Deno.build.os`), read char by char: a regex
 * costs a hook its compilation (src/chars.ts). The schema says only "a string".
 */
export function lowerWord(max: number): Type<string> {
  return leaf(
    (v) => isLowerWord(v, max),
    (x) => `isLowerWord(${x}, ${max})`,
    STRING,
    `a string of 1 to ${max} of [a-z0-9_]`,
    `word to ${max}`,
  );
}

/** An RFC 3339 time (src/time.ts parseTime). */
export const time: Type<string> = leaf(
  (v) => typeof v === "string" && parseTime(v) !== null,
  (x) => `typeof ${x} === "string" && parseTime(${x}) !== null`,
  { type: "string", format: "date-time" },
  "a time",
  "time",
);

/** A process id (src/process/pid.ts's rule). */
export const pid: Type<number> = leaf(
  isPid,
  (x) => `isPid(${x})`,
  { type: "integer", minimum: 1 },
  "a process id",
  "pid",
);

/** A safe integer from `min` to `max` (the schema says its minimum). */
export function int(min: number, max: number): Type<number> {
  return leaf(
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max,
    (x) =>
      `typeof ${x} === "number" && Number.isSafeInteger(${x}) && ${x} >= ${min} && ${x} <= ${max}`,
    { type: "integer", minimum: min },
    "an integer",
    `int ${min} to ${max}`,
  );
}

/** `type`, or null. */
export function nullable<V>(type: Type<V>): Type<V | null> {
  return {
    kind: "nullable",
    test: (v) => v === null || type.test(v),
    code: (x) => `(${x} === null || ${type.code(x)})`,
    get schema() {
      const s = type.schema;
      return "enum" in s
        ? { enum: [...(s.enum as unknown[]), null] }
        : typeof s.type === "string" && s.type !== "object"
        ? { ...s, type: [s.type, "null"] }
        : { anyOf: [s, { type: "null" }] };
    },
    expected: `${type.expected} or null`,
    of: [type as Type<unknown>],
  };
}

/** One type or another. */
export function either<A, B>(one: Type<A>, other: Type<B>): Type<A | B> {
  return {
    kind: "either",
    test: (v) => one.test(v) || other.test(v),
    code: (x) => `(${one.code(x)} || ${other.code(x)})`,
    get schema() {
      return { anyOf: [one.schema, other.schema] };
    },
    expected: `${one.expected} or ${other.expected}`,
    of: [one as Type<unknown>, other as Type<unknown>],
  };
}

/** An object of a format: its fields only (others are dropped from the copy). */
export function object<F extends Fields>(format: Format<F>): Type<Value<F>> {
  return {
    kind: "object",
    test: (v) => format.test(v),
    code: () => {
      throw new Error(`an object (${format.name}) has no inline code: generate.ts writes it`);
    },
    get schema() {
      return format.schema();
    },
    expected: `{${format.names.join(", ")}}`,
    of: [],
    format: format as unknown as Format<Fields>,
  };
}

/** An array of at most `max` items of `item`. */
export function array<V>(item: Type<V>, max: number): Type<V[]> {
  return {
    kind: "array",
    test: (v) => Array.isArray(v) && v.length <= max && v.every(item.test),
    code: () => {
      throw new Error("an array has no inline code: generate.ts writes it");
    },
    get schema() {
      return { type: "array", items: item.schema };
    },
    expected: `at most ${max} of ${item.expected}`,
    of: [item as Type<unknown>],
    max,
  };
}

/** `type` with another published schema (one that says less than the check does). */
export const withSchema = <V>(type: Type<V>, schema: Schema): Type<V> => ({ ...type, schema });
/** `type` described in other words (its schema still built only when asked for). */
export const described = <V>(type: Type<V>, expected: string): Type<V> => ({
  kind: type.kind,
  test: type.test,
  code: type.code,
  get schema() {
    return type.schema;
  },
  expected,
  of: type.of,
  format: type.format,
  max: type.max,
  label: type.label,
});
