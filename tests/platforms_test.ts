/**
 * tests/platforms.ts stays true: every listed file exists (the macOS and Windows jobs would
 * fail on a missing one) and is listed once. A test file not listed runs on Linux only; it is
 * named here so it gets listed, but does not fail the run (several people add tests at once).
 */
import { assert, assertEquals } from "./assert.ts";
import { EVERYWHERE, LINUX_ONLY, testFilesFor, WINDOWS_ONLY } from "./platforms.ts";

function testFiles(dir: URL, prefix: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.isDirectory) out.push(...testFiles(new URL(`${e.name}/`, dir), `${prefix}${e.name}/`));
    else if (e.name.endsWith("_test.ts")) out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

Deno.test("tests/platforms.ts lists existing test files, each once", () => {
  const listed = [...EVERYWHERE, ...WINDOWS_ONLY, ...Object.keys(LINUX_ONLY)];
  assertEquals(listed.length, new Set(listed).size, "a file is listed twice");
  const actual = testFiles(new URL("./", import.meta.url), "tests/");
  assertEquals(listed.filter((f) => !actual.includes(f)), [], "listed but missing");
  const unlisted = actual.filter((f) => !listed.includes(f));
  if (unlisted.length > 0) {
    console.log(`Linux only until listed in tests/platforms.ts: ${unlisted.join(", ")}`);
  }
  for (const [file, why] of Object.entries(LINUX_ONLY)) assert(why.length > 5, file);
  assertEquals(testFilesFor("linux"), ["tests/"]);
  assert(testFilesFor("windows").includes("tests/windows/backend_test.ts"));
  assert(!testFilesFor("darwin").includes("tests/windows/backend_test.ts"));
});
