/** The one result type of careful reads and checks: a value, or what is wrong with it. */

/** A value, or a sentence saying what is wrong (never a throw for bad data). */
export type Result<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
