/**
 * The one way roster defers an import: a module loaded on first use, named by a string. A
 * literal import of a module is read and analysed by `deno run` before main.ts runs, with all
 * it imports (one per command made every call read all of roster: docs/performance.md), so the
 * specifier is a string; the type argument names the same module for `deno check`, and
 * tests/scripts/lazy_test.ts checks that every call's string is the module its type names and
 * that the module exists.
 */

/**
 * `specifier`, loaded when the returned function is first called, by the loader the caller
 * passes: always an arrow from `s` to the dynamic import of `s`, written in the caller's own
 * file, so that the specifier resolves against that file and scripts/bundle.ts can turn it into
 * literal imports of the modules the file names as types. (No example in code here: the
 * bundler reads this file's comments too.)
 */
export function lazyModule<M>(
  specifier: string,
  load: (specifier: string) => Promise<unknown>,
): () => Promise<M> {
  let loaded: Promise<M> | undefined;
  return () => loaded ??= load(specifier) as Promise<M>;
}
