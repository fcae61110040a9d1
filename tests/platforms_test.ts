/**
 * tests/platforms.ts stays true: every test file is in exactly one of its lists (a new file in
 * none fails here, so nobody's test silently runs on Linux only), every listed file exists (the
 * macOS and Windows jobs would fail on a missing one), and each Linux-only file says why.
 */
import { assert, assertEquals } from "./assert.ts";
import { EVERYWHERE, LINUX_ONLY, testFilesFor, WINDOWS_ONLY } from "./platforms.ts";

/** Every `*_test.ts` under `dir`, as `prefix`-relative paths, sorted. */
function testFiles(dir: URL, prefix: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.isDirectory) out.push(...testFiles(new URL(`${e.name}/`, dir), `${prefix}${e.name}/`));
    else if (e.name.endsWith("_test.ts")) out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

/** What is wrong with the lists against the files there are, as sentences. */
export function listProblems(actual: readonly string[], lists: readonly string[][]): string[] {
  const listed = lists.flat();
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const f of listed) {
    if (seen.has(f)) problems.push(`${f} is listed twice`);
    seen.add(f);
    if (!actual.includes(f)) problems.push(`${f} is listed but does not exist`);
  }
  for (const f of actual) {
    if (!seen.has(f)) {
      problems.push(
        `${f} is in no list of tests/platforms.ts: add it to EVERYWHERE, WINDOWS_ONLY, or LINUX_ONLY with the reason`,
      );
    }
  }
  return problems;
}

Deno.test("tests/platforms.ts lists every test file, each once, and only existing ones", () => {
  const actual = testFiles(new URL("./", import.meta.url), "tests/");
  assertEquals(
    listProblems(actual, [[...EVERYWHERE], [...WINDOWS_ONLY], Object.keys(LINUX_ONLY)]),
    [],
  );
  for (const [file, why] of Object.entries(LINUX_ONLY)) assert(why.length > 5, file);
  assertEquals(testFilesFor("linux"), ["tests/"]);
  assert(testFilesFor("windows").includes("tests/windows/backend_test.ts"));
  assert(!testFilesFor("darwin").includes("tests/windows/backend_test.ts"));
});

Deno.test("a test file in no list, one listed twice, and one missing are each named", () => {
  assertEquals(
    listProblems(["tests/a_test.ts", "tests/new_test.ts"], [["tests/a_test.ts"], [
      "tests/a_test.ts",
      "tests/gone_test.ts",
    ]]),
    [
      "tests/a_test.ts is listed twice",
      "tests/gone_test.ts is listed but does not exist",
      "tests/new_test.ts is in no list of tests/platforms.ts: add it to EVERYWHERE, WINDOWS_ONLY, or LINUX_ONLY with the reason",
    ],
  );
});
