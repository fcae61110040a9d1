/**
 * docs/architecture.md matches the tree: every path its map cites exists, every exported name it
 * cites is exported by the file (or directory) it is cited beside, and every module of main.ts
 * and src/ is on the map and, past 400 lines, says why at its top. The check fails, naming the break, on a copy with one planted.
 */
import { assert, assertEquals } from "../assert.ts";
import { tempDir } from "../helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
/** Where the map's description column starts: a line indented this far continues the one above. */
const DESCRIPTION_COLUMN = 24;
/** A module longer than this says why in its first comment ("Over 400 lines: ..."). */
const MAX_LINES = 400;
/** Capitalised words in the map that are prose, not names exported by the tree. */
const PROSE = new Set([
  "BSD",
  "Deno",
  "FIFO",
  "FreeBSD",
  "JSON",
  "Linux",
  "MiB",
  "Prometheus",
  "README",
  "RFC",
  "Schemas",
  "UTF",
  "Windows",
  "O_NOFOLLOW",
  "O_NONBLOCK",
  "OS",
  "ROSTER_RETENTION",
  "macOS",
]); // deno-fmt-ignore

function* modules(root: string, dir: string): Generator<string> {
  for (const e of Deno.readDirSync(`${root}/${dir}`)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* modules(root, path);
    else if (e.isFile && e.name.endsWith(".ts")) yield path;
  }
}

/** The names a module exports: declarations and `export { ... }` lists. */
function exportsOf(source: string): Set<string> {
  const names = new Set<string>();
  const decl =
    /\bexport\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g;
  for (const m of source.matchAll(decl)) names.add(m[1]);
  for (const m of source.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[1].split(",")) {
      const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/).pop()!.trim();
      if (name !== "") names.add(name);
    }
  }
  return names;
}

/** The identifiers a description cites: any word with a capital letter that is not prose. */
function namesIn(text: string): string[] {
  const words = text.replace(/[\w/]+\.ts\b|<\w+>|\bI\/O\b/g, "").match(/\b[A-Za-z_$][\w$]*/g) ?? [];
  return words.filter((w) => /[A-Z]/.test(w) && !PROSE.has(w));
}

/** What is wrong with docs/architecture.md against the tree at `root`, one line each. */
export function mapProblems(root: string): string[] {
  const doc = Deno.readTextFileSync(`${root}/docs/architecture.md`);
  const block = /## The tree\n\n```\n([\s\S]*?)\n```/.exec(doc);
  if (block === null) return ["docs/architecture.md: no map under ## The tree"];
  const problems: string[] = [];
  const onMap = new Set<string>();
  const exportsCache = new Map<string, Set<string>>();
  const exported = (file: string) => {
    let names = exportsCache.get(file);
    if (names === undefined) exportsCache.set(file, names = exportsOf(Deno.readTextFileSync(file)));
    return names;
  };
  const exists = (path: string) => {
    try {
      Deno.statSync(`${root}/${path}`);
      return true;
    } catch {
      return false;
    }
  };
  // Each entry: its files (or one directory) and its description, continuation lines included.
  const entries: { dir: string; paths: string[]; text: string }[] = [];
  const dirs: string[] = [];
  for (const line of block[1].split("\n")) {
    const indent = line.length - line.trimStart().length;
    if (indent >= DESCRIPTION_COLUMN && entries.length > 0) {
      entries[entries.length - 1].text += " " + line.trim();
      continue;
    }
    const m = /^((?:[\w.]+\/?)(?: [\w.]+\.ts)*)(?:\s{2,}(.*))?$/.exec(line.trimStart());
    if (m === null) {
      problems.push(`docs/architecture.md: a map line that names no file: ${line.trim()}`);
      continue;
    }
    const depth = indent / 2;
    dirs.length = depth;
    const parent = dirs.join("");
    const paths = m[1].split(" ").map((p) => parent + p);
    if (m[1].endsWith("/")) dirs.push(m[1]);
    entries.push({ dir: parent, paths, text: m[2] ?? "" });
  }
  for (const { dir, paths, text } of entries) {
    const files: string[] = [];
    for (const path of paths) {
      if (!exists(path)) {
        problems.push(`docs/architecture.md cites ${path}, which does not exist`);
        continue;
      }
      if (path.endsWith("/")) {
        const own = [...modules(root, path.slice(0, -1))];
        files.push(...own);
        if (!entries.some((e) => e.dir === path)) { for (const f of own) onMap.add(f); }
      } else {
        files.push(`${root}/${path}`.replace(`${root}/`, ""));
        onMap.add(path);
      }
    }
    // A file named in a description: beside the entry (inside it, for a directory), or in src/.
    const here = paths[0].endsWith("/") ? paths[0] : dir;
    for (const cited of text.match(/[\w/]+\.ts\b/g) ?? []) {
      const path = [`${here}${cited}`, `src/${cited}`].find(exists);
      if (path === undefined) {
        problems.push(`docs/architecture.md cites ${cited} beside ${paths[0]}: no such file`);
      } else onMap.add(path);
    }
    if (files.length === 0) continue;
    for (const name of namesIn(text)) {
      if (!files.some((f) => exported(`${root}/${f}`).has(name))) {
        problems.push(`docs/architecture.md cites ${name} beside ${paths.join(" ")}: not exported`);
      }
    }
  }
  for (const module of ["main.ts", ...modules(root, "src")]) {
    if (!onMap.has(module)) problems.push(`docs/architecture.md leaves ${module} off the map`);
    const text = Deno.readTextFileSync(`${root}/${module}`);
    const lines = text.split("\n").length - 1;
    const head = /^\/\*\*[\s\S]*?\*\//.exec(text)?.[0] ?? "";
    if (lines > MAX_LINES && !head.includes(`Over ${MAX_LINES} lines:`)) {
      problems.push(
        `${module} has ${lines} lines and no reason at its top (Over ${MAX_LINES} lines: ...)`,
      );
    }
  }
  // The rest of the page: paths in backticks or in the table, and the pure decisions it names.
  const rest = doc.slice(block.index + block[0].length);
  for (const path of new Set(rest.match(/\b(?:src|scripts|tests|docs)\/[\w/.]*\w/g) ?? [])) {
    if (!path.includes("<") && !exists(path)) {
      problems.push(`docs/architecture.md cites ${path}, which does not exist`);
    }
  }
  const everything = new Set([...modules(root, "src")].flatMap((f) => [
    ...exported(`${root}/${f}`),
  ]));
  for (const m of rest.matchAll(/\(([A-Za-z]\w*(?:, [A-Za-z]\w*)*)[,)]/g)) {
    for (const name of m[1].split(", ")) {
      if (/[a-z][A-Z]/.test(name) && !everything.has(name)) {
        problems.push(`docs/architecture.md cites ${name}: not exported`);
      }
    }
  }
  return problems;
}

/** A copy of main.ts, src/, docs/, scripts/ and tests/scripts/ with `edit` applied to the file `file`. */
function treeWith(dir: string, file: string, edit: (text: string) => string): string {
  const copy = (from: string, to: string) => {
    Deno.mkdirSync(to, { recursive: true });
    for (const e of Deno.readDirSync(from)) {
      if (e.isDirectory) copy(`${from}/${e.name}`, `${to}/${e.name}`);
      else Deno.copyFileSync(`${from}/${e.name}`, `${to}/${e.name}`);
    }
  };
  for (const sub of ["src", "docs", "scripts", "tests/scripts"]) {
    copy(`${ROOT}/${sub}`, `${dir}/${sub}`);
  }
  Deno.copyFileSync(`${ROOT}/main.ts`, `${dir}/main.ts`);
  const path = `${dir}/${file}`;
  let before = "";
  try {
    before = Deno.readTextFileSync(path);
  } catch {
    // a planted new file
  }
  const after = edit(before);
  if (after === before) throw new Error(`the planted break changed nothing in ${file}`);
  Deno.writeTextFileSync(path, after);
  return dir;
}

Deno.test("docs/architecture.md matches the tree", async (t) => {
  await t.step("every path and name it cites exists, and every module is on the map", () => {
    assertEquals(mapProblems(ROOT), []);
  });
  const planted: [string, string, (s: string) => string, RegExp][] = [
    [
      "a name the file does not export",
      "docs/architecture.md",
      (s) => s.replace("parseDuration, formatAge", "parseDuration, readRowsAgain, formatAge"),
      /cites readRowsAgain beside src\/time\.ts: not exported/,
    ],
    [
      "a file that does not exist",
      "docs/architecture.md",
      (s) => s.replace("    args.ts ", "    argv.ts "),
      /cites src\/cli\/argv\.ts, which does not exist/,
    ],
    [
      "a module left off the map",
      "src/cli/extra.ts",
      () => "export const extra = 1;\n",
      /leaves src\/cli\/extra\.ts off the map/,
    ],
    [
      "an export renamed in the tree",
      "src/env.ts",
      (s) => s.replace(/\bexport function envVar\b/, "export function envValue"),
      /cites envVar beside src\/env\.ts: not exported/,
    ],
    [
      "a long module with no reason at its top",
      "src/cli/table.ts",
      (s) => s + "\n".repeat(400),
      /src\/cli\/table\.ts has \d+ lines and no reason at its top/,
    ],
    [
      "a path in the table that does not exist",
      "docs/architecture.md",
      (s) => s.replace("src/hooks/settings.ts (pure)", "src/hooks/merge.ts (pure)"),
      /cites src\/hooks\/merge\.ts, which does not exist/,
    ],
  ];
  for (const [name, file, edit, expected] of planted) {
    await t.step(`fails on ${name}`, async () => {
      await using dir = await tempDir();
      const root = treeWith(dir.path, file, edit);
      const problems = mapProblems(root);
      assert(problems.some((p) => expected.test(p)), problems.join("\n") || "no problem found");
    });
  }
});
