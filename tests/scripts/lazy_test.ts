/**
 * Every deferred import goes through src/lazy.ts's lazyModule with its module named twice,
 * once as a string (so `deno run` does not read it at start-up) and once as the type argument
 * (so `deno check` checks its use): this holds the two to each other. A typo in the string
 * would pass `deno check` and fail only when the command runs.
 */
import { assert, assertEquals } from "../assert.ts";

const ROOT = new URL("../../", import.meta.url);

/** main.ts and every module under src/, as [path from the root, text without comments]. */
function sources(): [string, string][] {
  const out: [string, string][] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(new URL(dir, ROOT))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (e.name.endsWith(".ts")) out.push([path, readCode(path)]);
    }
  };
  out.push(["main.ts", readCode("main.ts")]);
  walk("src");
  return out;
}

/** The file's text with its comments blanked (doc comments cite `import("...")` as prose). */
function readCode(path: string): string {
  return Deno.readTextFileSync(new URL(path, ROOT))
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
}

/** A call whose type argument is `typeof import("A")` and whose first argument is "B". */
const DEFERRED = /<\s*typeof import\("([^"]+)"\)\s*>\(\s*"([^"]+)"/g;

/** The deferred imports of `code`: each one's type and string, and whether they are one. */
export function deferredImports(code: string): { type: string; specifier: string }[] {
  return [...code.matchAll(DEFERRED)].map((m) => ({ type: m[1], specifier: m[2] }));
}

Deno.test("deferred imports: one helper, each string the module its type names", async (t) => {
  const files = sources();
  const found = files.flatMap(([path, code]) => deferredImports(code).map((d) => ({ path, ...d })));

  await t.step("the check finds them (every command's module, the backends, ...)", () => {
    assert(found.length >= 30, `only ${found.length} deferred imports found`);
  });

  await t.step("each string is the module its type argument names, and it exists", () => {
    const wrong = found.filter((d) => d.type !== d.specifier)
      .map((d) => `${d.path}: "${d.specifier}" typed as "${d.type}"`);
    assertEquals(wrong, []);
    const missing = found.filter((d) => {
      try {
        return !Deno.statSync(new URL(d.specifier, new URL(d.path, ROOT))).isFile;
      } catch {
        return true;
      }
    }).map((d) => `${d.path}: ${d.specifier}`);
    assertEquals(missing, []);
  });

  await t.step("no other way: import() only as lazyModule's loader, no untyped call", () => {
    const others: string[] = [];
    for (const [path, code] of files) {
      // `typeof import("...")` is a type; the loader `(s) => import(s)` resolves in the
      // caller's file; any other import(...) is a deferred import of its own kind.
      for (const m of code.matchAll(/(typeof\s+|\(s\) => )?\bimport\((s\))?/g)) {
        if (m[1] === undefined || (m[1].startsWith("(s)") && m[2] === undefined)) {
          others.push(`${path}: ${m[0]}`);
        }
      }
      for (const m of code.matchAll(/lazyModule<\s*([^>]*?)\s*>/g)) {
        // A wrapper passes its own type parameter on; every other call names its module.
        if (!m[1].startsWith("typeof import(") && !/^[A-Z]$/.test(m[1])) {
          others.push(`${path}: lazyModule<${m[1]}>`);
        }
      }
    }
    assertEquals(others, []);
  });

  await t.step("a planted typo is caught", () => {
    const planted = `lazy<typeof import("./commands/list.ts")>("./commands/lsit.ts")`;
    const [d] = deferredImports(planted);
    assert(d.type !== d.specifier);
  });
});
