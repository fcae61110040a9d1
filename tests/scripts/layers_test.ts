/**
 * The layer check (scripts/layers.ts): it passes on this tree, and fails, naming the import,
 * on a copy of this tree with one upward or sideways import added, or one import of the
 * registry from metrics that goes past src/registry/mod.ts.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { tempDir } from "../helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const SCRIPT = `${ROOT}/scripts/layers.ts`;

async function layers(root: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", SCRIPT, "--root", root],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** A copy of main.ts and src/ with `line` appended to `file`. */
function treeWith(dir: string, file: string, line: string): string {
  const copy = (from: string, to: string) => {
    Deno.mkdirSync(to, { recursive: true });
    for (const e of Deno.readDirSync(from)) {
      if (e.isDirectory) copy(`${from}/${e.name}`, `${to}/${e.name}`);
      else Deno.copyFileSync(`${from}/${e.name}`, `${to}/${e.name}`);
    }
  };
  copy(`${ROOT}/src`, `${dir}/src`);
  Deno.copyFileSync(`${ROOT}/main.ts`, `${dir}/main.ts`);
  Deno.writeTextFileSync(`${dir}/${file}`, `\n${line}\n`, { append: true });
  return dir;
}

Deno.test("deno task layers", async (t) => {
  await t.step("this tree follows the layer rule", async () => {
    const r = await layers(ROOT);
    assertEquals([r.code, r.stderr], [0, ""]);
    assertMatch(r.stdout, /^layers: \d+ modules, \d+ imports, all follow the layer rule\n$/);
  });
  const broken: [string, string, string, RegExp][] = [
    [
      "an upward import (fs -> cli)",
      "src/fs/read.ts",
      'import "../cli/context.ts";',
      /upward import: src\/fs\/read\.ts \(fs\) imports src\/cli\/context\.ts \(cli\)/,
    ],
    [
      "an upward type import (process -> identity)",
      "src/process/types.ts",
      'import type { HostIdentity } from "../identity/identity.ts";',
      /upward import: src\/process\/types\.ts \(process\) imports src\/identity\/identity\.ts/,
    ],
    [
      "a dynamic upward import (base -> registry)",
      "src/pause.ts",
      'export const lazy = () => import("./registry/store.ts");',
      /upward import: src\/pause\.ts \(base\) imports src\/registry\/store\.ts \(registry\)/,
    ],
    [
      "a dynamic upward import in a template literal (fs -> registry)",
      "src/fs/read.ts",
      "export const lazy = () => import(`../registry/store.ts`);",
      /upward import: src\/fs\/read\.ts \(fs\) imports src\/registry\/store\.ts \(registry\)/,
    ],
    [
      "metrics reading rows past src/registry/mod.ts",
      "src/metrics/collect.ts",
      'import { forEachRow as again } from "../registry/scan.ts";',
      /past the entry point: src\/metrics\/collect\.ts \(metrics\) imports src\/registry\/scan\.ts; use src\/registry\/mod\.ts/,
    ],
    [
      "a feature importing another feature's files",
      "src/continuation/plan.ts",
      'import { readRows as again } from "../registry/store.ts";',
      /sideways import: src\/continuation\/plan\.ts \(continuation\) imports src\/registry\/store\.ts/,
    ],
    [
      "the registry importing the continuation",
      "src/registry/store.ts",
      'import "../continuation/mod.ts";',
      /sideways import: src\/registry\/store\.ts \(registry\) imports src\/continuation\/mod\.ts/,
    ],
    [
      "fs importing identity",
      "src/fs/dir.ts",
      'import "../identity/pid.ts";',
      /sideways import: src\/fs\/dir\.ts \(fs\) imports src\/identity\/pid\.ts \(identity\)/,
    ],
  ];
  for (const [name, file, line, expected] of broken) {
    await t.step(`fails on ${name}`, async () => {
      await using dir = await tempDir();
      const r = await layers(treeWith(dir.path, file, line));
      assertEquals(r.code, 1);
      assertMatch(r.stderr, expected);
      assertMatch(r.stderr, /layers: 1 import\(s\) break the layer rule/);
      assertEquals(r.stdout, "");
    });
  }
  await t.step("the continuation may read rows through src/registry/mod.ts", async () => {
    await using dir = await tempDir();
    const r = await layers(
      treeWith(dir.path, "src/continuation/check.ts", 'import "../registry/mod.ts";'),
    );
    assert(r.code === 0, r.stderr);
  });
});
