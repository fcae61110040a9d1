/** Thin assertion helpers over node:assert/strict (start-up cost does not matter in tests). */
import nodeAssert from "node:assert/strict";

export function assert(condition: unknown, message?: string): asserts condition {
  nodeAssert.ok(condition, message);
}

export function assertEquals(actual: unknown, expected: unknown, message?: string): void {
  nodeAssert.deepStrictEqual(actual, expected, message);
}

export function assertMatch(actual: string, pattern: RegExp, message?: string): void {
  nodeAssert.match(actual, pattern, message);
}

export function assertThrows<E extends Error = Error>(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  cls?: new (...a: any[]) => E,
): E {
  try {
    fn();
  } catch (err) {
    if (cls && !(err instanceof cls)) {
      throw new nodeAssert.AssertionError({ message: `Expected ${cls.name}, got ${err}` });
    }
    return err as E;
  }
  throw new nodeAssert.AssertionError({ message: "Expected the function to throw" });
}

export async function assertRejects<E extends Error = Error>(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  cls?: new (...a: any[]) => E,
): Promise<E> {
  try {
    await fn();
  } catch (err) {
    if (cls && !(err instanceof cls)) {
      throw new nodeAssert.AssertionError({ message: `Expected ${cls.name}, got ${err}` });
    }
    return err as E;
  }
  throw new nodeAssert.AssertionError({ message: "Expected the promise to reject" });
}
