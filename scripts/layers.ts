/**
 * `deno task layers`: checks the layer rule of docs/architecture.md on every import in
 * main.ts and src/, and exits 1 naming each import that breaks it.
 *
 *   main.ts -> src/cli -> src/metrics (a read-only report over both features) -> features
 *   (src/registry, src/continuation) -> platform (src/fs, src/identity, src/format) ->
 *   src/process;
 *   src/*.ts (errors, exit codes, time, ...) is the base that every layer may use.
 *
 * Nothing imports upward or sideways: a feature never imports another feature's files, and
 * the platform's units never import each other. The crossings allowed are CROSSING below:
 * the continuation reads registry rows through src/registry/mod.ts (a plan's session, on a
 * hook's path, through src/registry/lookup.ts); src/fs's careful reads return the one result
 * type, src/format/result.ts. ENTRY_POINT narrows a
 * downward import too: metrics reads rows only through src/registry/mod.ts.
 *
 * Usage: deno run --allow-read scripts/layers.ts [--root DIR]   (default: this repository)
 */

/** A unit of the layer rule and its rank: a unit may import units of a lower rank only. */
const UNITS: [unit: string, rank: number, test: (path: string) => boolean][] = [
  ["main", 6, (p) => p === "main.ts"],
  ["cli", 5, (p) => p.startsWith("src/cli/")],
  ["metrics", 4, (p) => p.startsWith("src/metrics/")],
  ["registry", 3, (p) => p.startsWith("src/registry/")],
  ["continuation", 3, (p) => p.startsWith("src/continuation/")],
  ["hooks", 3, (p) => p.startsWith("src/hooks/")],
  ["fs", 2, (p) => p.startsWith("src/fs/")],
  ["identity", 2, (p) => p.startsWith("src/identity/")],
  ["format", 2, (p) => p.startsWith("src/format/")],
  ["process", 1, (p) => p.startsWith("src/process/")],
  ["base", 0, (p) => /^src\/[^/]+\.ts$/.test(p)],
];

/**
 * The imports allowed across units of a rank: the continuation reads registry rows through
 * mod.ts, and continuation-check, on a hook's path, a plan's session through lookup.ts alone
 * (mod.ts would load the store's scanner and writers with it); src/fs's reads return
 * src/format's one result type.
 */
const CROSSING: [from: string, to: string][] = [
  ["continuation", "src/registry/mod.ts"],
  ["continuation", "src/registry/lookup.ts"],
  ["fs", "src/format/result.ts"],
];

/** Units that may reach a lower unit only through its entry point: [from, to, entry point]. */
const ENTRY_POINT: [from: string, to: string, entry: string][] = [
  ["metrics", "registry", "src/registry/mod.ts"],
];

function unitOf(path: string): { unit: string; rank: number } | null {
  for (const [unit, rank, test] of UNITS) if (test(path)) return { unit, rank };
  return null;
}

/**
 * Every relative module specifier in `source`: static, re-exported and dynamic imports, the
 * dynamic ones quoted or in a template literal (one without `${...}`: a computed path cannot
 * be checked, and the tree has none).
 */
function importsOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\sfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\bimport\s*\(\s*`([^`$]+)`\s*\)/g,
  ];
  for (const re of patterns) {
    for (const m of source.matchAll(re)) if (m[1].startsWith(".")) found.push(m[1]);
  }
  return found;
}

/** `spec` imported from `from` (both relative to the root), as a root-relative path. */
function resolve(from: string, spec: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg !== ".") parts.push(seg);
  }
  return parts.join("/");
}

/** Pure: what is wrong with one import, or null when the rule allows it. */
function violation(from: string, to: string): string | null {
  const a = unitOf(from);
  if (a === null) return `${from}: not in any layer (move it into one of src/<layer>/)`;
  if (!to.endsWith(".ts")) return null; // data (deno.json): not a module of any layer
  const b = unitOf(to);
  if (b === null) return `${from} imports ${to}: outside every layer`;
  if (a.unit === b.unit) return null;
  if (CROSSING.some(([unit, path]) => unit === a.unit && path === to)) return null;
  const entry = ENTRY_POINT.find(([from, unit]) => from === a.unit && unit === b.unit);
  if (entry !== undefined && to !== entry[2]) {
    return `past the entry point: ${from} (${a.unit}) imports ${to}; use ${entry[2]}`;
  }
  if (b.rank < a.rank && !(a.rank === 3 && b.rank === 3)) return null;
  const kind = b.rank > a.rank ? "upward import" : "sideways import";
  return `${kind}: ${from} (${a.unit}) imports ${to} (${b.unit})`;
}

function* modules(root: string, dir: string): Generator<string> {
  for (const e of Deno.readDirSync(`${root}/${dir}`)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* modules(root, path);
    else if (e.isFile && e.name.endsWith(".ts")) yield path;
  }
}

function checkTree(root: string): { files: number; imports: number; problems: string[] } {
  const files = ["main.ts", ...modules(root, "src")];
  const problems: string[] = [];
  let imports = 0;
  for (const file of files) {
    for (const spec of importsOf(Deno.readTextFileSync(`${root}/${file}`))) {
      imports++;
      const problem = violation(file, resolve(file, spec));
      if (problem !== null) problems.push(problem);
    }
  }
  return { files: files.length, imports, problems: [...new Set(problems)].sort() };
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--root");
  const root = i === -1 ? new URL("..", import.meta.url).pathname : Deno.args[i + 1];
  const { files, imports, problems } = checkTree(root.replace(/\/$/, ""));
  for (const p of problems) console.error(`layers: ${p}`);
  if (problems.length > 0) {
    console.error(
      `layers: ${problems.length} import(s) break the layer rule (docs/architecture.md)`,
    );
    Deno.exit(1);
  }
  console.log(`layers: ${files} modules, ${imports} imports, all follow the layer rule`);
}
