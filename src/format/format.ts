/**
 * A file format declared once: its fields, in their order, which are optional, and each field's
 * type, built from the combinators here. From the declaration come its checker with reasons
 * (problem), its typed copy (check, copy), its JSON Schema (schema) and, through generate.ts,
 * a straight-line check for a hot path.
 */
import { isPid } from "../process/pid.ts";
import { parseTime } from "../time.ts";
import { isObject, type Result } from "./result.ts";

export type Schema = Record<string, unknown>;

/** What a value may be: a test, the same test as code (leaves), its schema, in words. */
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
  const s = type.schema;
  const schema = "enum" in s
    ? { enum: [...(s.enum as unknown[]), null] }
    : typeof s.type === "string" && s.type !== "object"
    ? { ...s, type: [s.type, "null"] }
    : { anyOf: [s, { type: "null" }] };
  return {
    kind: "nullable",
    test: (v) => v === null || type.test(v),
    code: (x) => `(${x} === null || ${type.code(x)})`,
    schema,
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
    schema: { anyOf: [one.schema, other.schema] },
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
    schema: format.schema(),
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
    schema: { type: "array", items: item.schema },
    expected: `at most ${max} of ${item.expected}`,
    of: [item as Type<unknown>],
    max,
  };
}

/** `type` with another published schema (one that says less than the check does). */
export const withSchema = <V>(type: Type<V>, schema: Schema): Type<V> => ({ ...type, schema });
/** `type` described in other words. */
export const described = <V>(type: Type<V>, expected: string): Type<V> => ({ ...type, expected });

// ---------------------------------------------------------------------------------------
// Fields

/**
 * How a field may be absent: never (required); read as `default` (optional when read, always
 * in the copy); left absent (optional); or left out of the copy also when it is not well formed
 * (lenient).
 */
type Presence = "required" | "default" | "optional" | "lenient";

export interface Field<V, P extends Presence = Presence> {
  readonly type: Type<V>;
  readonly presence: P;
  readonly default?: V;
  /**
   * Checked in two steps: first only that it is an object (an array no longer than its most),
   * then, after every field's first step, its inside, with problems naming the field within.
   */
  readonly deep?: boolean;
  /** The published schema does not require it, though the check does. */
  readonly schemaOptional?: boolean;
  /** The published schema lists it after this field (where it has always stood there). */
  readonly schemaAfter?: string;
}

type Options = Pick<Field<unknown>, "deep" | "schemaOptional" | "schemaAfter">;

export type Fields = Record<string, Type<unknown> | Field<unknown>>;

/** A field that may be absent: read as `fallback` when given, else left absent. */
export function optional<V>(type: Type<V>): Field<V, "optional">;
export function optional<V>(type: Type<V>, fallback: V, options?: Options): Field<V, "default">;
export function optional<V>(type: Type<V>, ...rest: [V?, Options?]): Field<V> {
  return rest.length === 0
    ? { type, presence: "optional" }
    : { type, presence: "default", default: rest[0], ...rest[1] };
}

/** A field that may be absent, and is dropped when not well formed. */
export const lenient = <V>(type: Type<V>): Field<V, "lenient"> => ({ type, presence: "lenient" });
/** A required field with options. */
export const required = <V>(type: Type<V>, options: Options): Field<V, "required"> => ({
  type,
  presence: "required",
  ...options,
});

type ValueOfField<F> = F extends Type<infer V> ? V : F extends Field<infer V> ? V : never;
type Absent<F> = F extends Field<unknown, "optional" | "lenient"> ? true : false;
/** The typed copy a format's check returns. */
export type Value<F extends Fields> = Flat<
  & { -readonly [K in keyof F as Absent<F[K]> extends true ? never : K]: ValueOfField<F[K]> }
  & { -readonly [K in keyof F as Absent<F[K]> extends true ? K : never]?: ValueOfField<F[K]> }
>;
/** One object type of an intersection's (what editors and errors show). */
type Flat<T> = { [K in keyof T]: T[K] } & unknown;
/** A format's typed copy. */
export type ValueOf<T> = T extends Format<infer F> ? Value<F> : never;

/** A field as checked: a name, a type, how it may be absent. */
export type FieldOf = Field<unknown> & { readonly name: string };

/** How a format words a problem with a field: `name` with its path (`session.host`). */
export interface Wording {
  notObject: string;
  missing: (name: string) => string;
  invalid: (name: string, value: unknown, type: Type<unknown>) => string;
}

const FIELD_WORDING: Wording = {
  notObject: "not a JSON object",
  missing: (name) => `missing field: ${name}`,
  invalid: (name) => `invalid field: ${name}`,
};

/** A declared format (format()). */
export class Format<F extends Fields> {
  readonly fields: readonly FieldOf[];
  readonly names: readonly string[];
  readonly #wording: Wording;

  constructor(readonly name: string, declared: F, wording: Partial<Wording> = {}) {
    this.fields = Object.entries(declared).map(([name, f]) =>
      "presence" in f ? { ...f, name } : { type: f, presence: "required" as const, name }
    );
    this.names = this.fields.map((f) => f.name);
    this.#wording = { ...FIELD_WORDING, ...wording };
  }

  /** Whether `v` is an object of this format. */
  test(v: unknown): boolean {
    if (!isObject(v)) return false;
    for (const f of this.fields) {
      if (!(f.name in v)) {
        if (f.presence === "required") return false;
      } else if (f.presence !== "lenient" && !f.type.test(v[f.name])) return false;
    }
    return true;
  }

  /**
   * What is wrong with the object `o` (prefixing field names with `where`); null when nothing
   * is. The required fields first, in order, then the optional ones, then `extra` (a check
   * across fields, of an object whose fields passed), then the deep fields' insides.
   */
  problem(
    o: Record<string, unknown>,
    where = "",
    extra?: (o: Record<string, unknown>) => string | null,
  ): string | null {
    const w = this.#wording;
    for (const pass of ["required", "optional"]) {
      for (const f of this.fields) {
        if ((f.presence === "required") !== (pass === "required") || f.presence === "lenient") {
          continue;
        }
        if (!(f.name in o)) {
          if (f.presence === "required") return w.missing(where + f.name);
          continue;
        }
        const v = o[f.name];
        if (!(f.deep ? shallow(f.type, v) : f.type.test(v))) {
          return w.invalid(where + f.name, v, f.type);
        }
      }
    }
    const across = extra?.(o) ?? null;
    if (across !== null) return across;
    for (const f of this.fields) {
      if (!f.deep || !(f.name in o)) continue;
      const v = o[f.name];
      const t = f.type;
      if (t.kind === "object") {
        const inner = t.format!.problem(v as Record<string, unknown>, `${where}${f.name}.`);
        if (inner !== null) return inner;
      } else if (t.kind === "array") {
        const item = t.of[0];
        for (const [i, x] of (v as unknown[]).entries()) {
          if (!item.test(x)) {
            return `${w.invalid(`${where}${f.name}[${i}]`, x, item)} (expected ${item.expected})`;
          }
        }
      }
    }
    return null;
  }

  /** The copy of an object of this format: its fields in order, defaults for the absent. */
  copy(o: Record<string, unknown>): Value<F> {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) {
      if (f.name in o) {
        const v = o[f.name];
        if (f.presence !== "lenient" || f.type.test(v)) out[f.name] = copyOf(f.type, v);
      } else if (f.presence === "default") out[f.name] = structuredClone(f.default);
    }
    return out as Value<F>;
  }

  /** A parsed JSON value checked and copied, or what is wrong with it. */
  check(value: unknown, extra?: (o: Record<string, unknown>) => string | null): Result<Value<F>> {
    if (!isObject(value)) return { ok: false, problem: this.#wording.notObject };
    const problem = this.problem(value, "", extra);
    return problem === null ? { ok: true, value: this.copy(value) } : { ok: false, problem };
  }

  /** The published schema's properties, in the order it lists them. */
  properties(): Record<string, Schema> {
    const order = this.fields.filter((f) => f.schemaAfter === undefined);
    for (const f of this.fields) {
      if (f.schemaAfter !== undefined) {
        order.splice(order.findIndex((g) => g.name === f.schemaAfter) + 1, 0, f);
      }
    }
    return Object.fromEntries(order.map((f) => [f.name, f.type.schema]));
  }

  /** The published JSON Schema: a closed object. */
  schema(): Schema {
    const properties = this.properties();
    const needed = new Set(
      this.fields.filter((f) => f.presence === "required" && !f.schemaOptional).map((f) => f.name),
    );
    return {
      type: "object",
      properties,
      required: Object.keys(properties).filter((k) => needed.has(k)),
      additionalProperties: false,
    };
  }
}

/** A deep field's first step: only that it is an object, or an array not past its most. */
function shallow(t: Type<unknown>, v: unknown): boolean {
  if (t.kind === "object") return isObject(v);
  if (t.kind === "array") return Array.isArray(v) && v.length <= t.max!;
  return t.test(v);
}

function copyOf(t: Type<unknown>, v: unknown): unknown {
  if (t.kind === "object") return t.format!.copy(v as Record<string, unknown>);
  if (t.kind === "array") return (v as unknown[]).map((x) => copyOf(t.of[0], x));
  if (t.kind === "nullable") return v === null ? null : copyOf(t.of[0], v);
  return v;
}

/** Declares a format: `fields` in the order of the copy. */
export function format<const F extends Fields>(
  name: string,
  fields: F,
  wording?: Partial<Wording>,
): Format<F> {
  return new Format(name, fields, wording);
}
