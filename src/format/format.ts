/**
 * A file format declared once: its fields, in their order, which are optional, and each field's
 * type (types.ts). From the declaration come its checker with reasons (problem), its typed copy
 * (check, copy), its JSON Schema (schema) and, through generate.ts, a straight-line check for
 * a hot path.
 */
import { isObject, type Result } from "./result.ts";
import type { Schema, Type } from "./types.ts";

export * from "./types.ts";

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
