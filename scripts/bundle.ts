/**
 * `deno task bundle`: roster as a code-split ESM bundle (dist/bundle/ by default): main.js plus
 * one chunk per lazily loaded module and per group of modules they share, so each command
 * compiles only its own JavaScript. This is what `deno compile` embeds (scripts/build.ts) and
 * what the benchmark measures as the shipped start-up.
 *
 *   deno task bundle [--out DIR] [--verbose]
 *
 * roster imports its lazy modules through variables (src/lazy.ts lazyModule: `deno run` from
 * source would read every module a literal import names before main runs), and esbuild, under
 * `deno bundle`, does not follow a variable. So the bundler's input is a copy of main.ts,
 * deno.json and src/ in which every `import(variable)` becomes a choice among literal imports
 * of the modules its file names in a `typeof import("...")` (the type argument every such site
 * carries for `deno check`): literalImports(). The sources stay as they are. esbuild's output is
 * then scanned: an `import(` whose argument is not a string literal, or names no file of the
 * bundle, fails the bundle, since at run time it would look for a module that is not there.
 * Last, each chunk's literal `import("./chunk.js")` is put back into a variable
 * (deferChunkImports), for the reason the sources use one: `deno run main.js` would otherwise
 * read and analyse every chunk of every command before main runs.
 */

/** A failure the user can act on: printed as one `bundle: ...` line, exit 1. */
export class BundleError extends Error {}

/** The repo root as a path, with a trailing slash. */
export const ROOT = decodeURIComponent(new URL("../", import.meta.url).pathname)
  .replace(/^\/([A-Za-z]:)/, "$1");

/** The bundle's entry, beside its chunks. */
export const ENTRY = "main.js";

/** `import(` + an identifier + `)`: a variable specifier (not `x.import(`, not `typeof import("`). */
const VARIABLE_IMPORT = /(?<![\w$.])import\(\s*([A-Za-z_$][\w$]*)\s*\)/g;
/** The modules a file names for the type checker: `typeof import("./x.ts")`. */
const TYPE_IMPORT = /\btypeof\s+import\(\s*"([^"\\]+)"\s*\)/g;

/**
 * The bundler's copy of one source file: each `import(name)` replaced by a call of a function
 * appended to the file, which imports the module `name` holds through a literal `import("...")`,
 * one per module the file names in a `typeof import("...")`, and refuses any other value. null
 * when the file has no variable import. A file whose variable import has no `typeof import` to
 * choose from is refused (BundleError): the bundle could not load anything there.
 */
export function literalImports(source: string, file: string): string | null {
  const first = source.search(VARIABLE_IMPORT);
  if (first < 0) return null;
  const targets = [...new Set([...source.matchAll(TYPE_IMPORT)].map((m) => m[1]))].sort();
  if (targets.length === 0) {
    const line = source.slice(0, first).split("\n").length;
    throw new BundleError(
      `${file}:${line}: import() of a variable with no typeof import("...") naming its module`,
    );
  }
  const cases = targets.map((t) => {
    const s = JSON.stringify(t);
    return `    case ${s}:\n      return import(${s});\n`;
  }).join("");
  // The command table's function has a name of its own: commandChunks reads the commands there.
  const fn = file === COMMAND_TABLE ? COMMAND_IMPORT : "__rosterImport";
  return source.replace(VARIABLE_IMPORT, (_, name) => `${fn}(${name})`) +
    "\n// Added by scripts/bundle.ts: the literal imports esbuild follows.\n" +
    `function ${fn}(specifier: string): Promise<any> {\n` +
    `  switch (specifier) {\n${cases}` +
    `    default:\n      return Promise.reject(new Error(` +
    `\`The bundle has no module \${specifier} (imported from ${file})\`));\n  }\n}\n`;
}

/** Where a bundle's JavaScript calls import() with anything but a string literal. */
export interface NonLiteral {
  file: string;
  line: number;
  text: string;
}

/**
 * Every `import(` in a bundle file whose argument is not one string literal. esbuild strips
 * comments, so a match is code (or text in a string, which this scan refuses too: loudly wrong
 * beats silently loading a path that does not exist beside the bundle).
 */
export function nonLiteralImports(js: string, file: string): NonLiteral[] {
  const found: NonLiteral[] = [];
  for (const m of js.matchAll(/(?<![\w$.])import\s*\(/g)) {
    const rest = js.slice(m.index + m[0].length);
    if (/^\s*("[^"\\\n]*"|'[^'\\\n]*')\s*\)/.test(rest)) continue;
    const line = js.slice(0, m.index).split("\n").length;
    found.push({ file, line, text: js.slice(m.index, m.index + 60).split("\n")[0] });
  }
  return found;
}

/** The relative modules a bundle file imports by a literal `import("./x.js")`. */
export function literalTargets(js: string): string[] {
  return [...js.matchAll(/(?<![\w$.])import\s*\(\s*["'](\.\.?\/[^"']+)["']\s*\)/g)].map((m) =>
    m[1]
  );
}

/** A bundle file's static imports of other files of the bundle, `./x.js`, in their order. */
export function staticTargets(js: string): string[] {
  return [...js.matchAll(STATIC_IMPORT)].map((m) => m[2]);
}

/**
 * A top-level `import ... from "./x.js";`, `import "./x.js";` or `export ... from "./x.js";`
 * as esbuild writes them (a statement from the start of a line; braces hold no `;`).
 */
const STATIC_IMPORT = /^((?:import|export)\s(?:[^;"']*?\sfrom\s)?)"(\.\/[^"\n]+)";$/gm;

/** The names a bundle file exports (its `export { a, b as c };` lists), as importers see them. */
export function exportedNames(js: string): string[] {
  const names: string[] = [];
  for (const m of js.matchAll(/^export\s*\{([^}]*)\};$/gm)) {
    for (const part of m[1].split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      names.push(part.split(/\s+as\s+/).at(-1)!);
    }
  }
  return names;
}

/**
 * The chunks main.js loads before main runs: its static imports and theirs, in the order
 * they are evaluated (depth first, each import before the file that names it).
 */
export function startupChunks(read: (file: string) => string): string[] {
  const order: string[] = [];
  const seen = new Set<string>([ENTRY]);
  const visit = (file: string) => {
    for (const target of staticTargets(read(file))) {
      const name = target.slice(2);
      if (seen.has(name)) continue;
      seen.add(name);
      visit(name);
      order.push(name);
    }
  };
  visit(ENTRY);
  return order;
}

/** `js` with each static import of a file in `merged` made an import of `into`. */
export function redirectImports(js: string, merged: ReadonlySet<string>, into: string): string {
  return js.replace(
    STATIC_IMPORT,
    (all, head: string, target: string) =>
      merged.has(target.slice(2)) ? `${head}"./${into}";` : all,
  );
}

/** The source file whose lazy imports are the commands, one a call (main.ts loads one). */
export const COMMAND_TABLE = "src/cli/spec.ts";
/** The name of COMMAND_TABLE's import function in the bundler's copy (literalImports). */
const COMMAND_IMPORT = "__rosterCommandImport";
/** A case of that function as esbuild writes it: the chunk one command's module is in. */
const COMMAND_CASE = /case "[^"\\\n]+":\s*return import\("\.\/([^"\\\n]+)"\);/g;

/**
 * The chunks a bundle file's command table loads, one per command: the cases of the command
 * table's own function only (another file's lazy import of a module under commands/ is a module
 * loaded on demand like any other). esbuild writes a top-level function's closing brace alone on
 * a line.
 */
export function commandChunks(js: string): string[] {
  const start = js.indexOf(`function ${COMMAND_IMPORT}(`);
  if (start < 0) return [];
  const end = js.indexOf("\n}\n", start);
  const body = js.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(COMMAND_CASE)].map((m) => m[1]);
}

/** `js` with each literal `import("./from")` made `import("./to")`. */
export function renameImport(js: string, from: string, to: string): string {
  return js.replaceAll(`import("./${from}")`, `import("./${to}")`);
}

/** Every file reachable from `from` through `next`, `from` included, added to `into`. */
function reach(
  from: string,
  next: (file: string) => readonly string[],
  into = new Set<string>(),
): Set<string> {
  if (into.has(from)) return into;
  into.add(from);
  for (const t of next(from)) reach(t, next, into);
  return into;
}

/**
 * For each command's chunk, the chunks to fold into it (mergeCommandChunks): those of its
 * static imports, and theirs, that no other file a call of that command may load imports.
 * Kept where they are: main.js's chunks, and every chunk imported by a module the command's
 * code or main's may load on demand (an OS backend, the ledger, help), found through the
 * literal imports of every file it may load: a copy of those in the command's file would be a
 * second instance of the module beside the one that module loads. A chunk several commands use
 * is folded into each: main.ts loads one command a process. That rule is checked, not assumed:
 * a command's chunk that anything imports statically, or that a file other than the table
 * loads, fails the bundle, and tests/scripts/bundle_test.ts fails on a `.load()` of a command
 * anywhere but main.ts.
 */
export function commandMerges(
  read: (file: string) => string,
  files: readonly string[],
): Map<string, string[]> {
  const statics = new Map(files.map((f) => [f, staticTargets(read(f)).map((t) => t.slice(2))]));
  const lazies = new Map(
    files.map((f) => [f, literalTargets(read(f)).map((t) => t.replace(/^\.\//, ""))]),
  );
  const commands = new Set(files.flatMap((f) => commandChunks(read(f))));
  if (commands.size === 0) {
    throw new BundleError(`no command table in the bundle (${COMMAND_TABLE}'s lazy imports)`);
  }
  for (const c of commands) {
    const importers = files.filter((f) => statics.get(f)!.includes(c));
    const loaders = files.flatMap((f) => lazies.get(f)!.filter((t) => t === c));
    if (importers.length > 0 || loaders.length !== 1) {
      throw new BundleError(
        `${c} is loaded other than through the command table` +
          `${importers.length > 0 ? ` (imported by ${importers.join(", ")})` : ""}: ` +
          "its chunks cannot be merged into it",
      );
    }
  }
  const closure = (from: string) => reach(from, (f) => statics.get(f) ?? []);
  /** Into `into`: every file a call may load from `from` on, other commands' chunks aside. */
  const loadable = (from: string, into: Set<string>) =>
    reach(from, (f) => [
      ...statics.get(f) ?? [],
      ...(lazies.get(f) ?? []).filter((t) => !commands.has(t)),
    ], into);
  const fromMain = loadable(ENTRY, new Set());
  const plan = new Map<string, string[]>();
  for (const c of [...commands].sort()) {
    const own = closure(c);
    // What main.js may load, and whatever the command's own files may load on demand.
    const others = new Set(fromMain);
    for (const f of own) {
      for (const t of lazies.get(f) ?? []) if (!commands.has(t)) loadable(t, others);
    }
    const folded = [...own].filter((f) => f !== c && !others.has(f)).sort();
    if (folded.length > 0) plan.set(c, folded);
  }
  return plan;
}

/** The files of a bundle main.js can load, by static or literal dynamic imports. */
export function reachableFiles(read: (file: string) => string): Set<string> {
  return reach(ENTRY, (f) => {
    const js = read(f);
    return [...staticTargets(js), ...literalTargets(js)].map((t) => t.replace(/^\.\//, ""));
  });
}

/** The name a chunk's deferred import is held in (deferChunkImports). */
const CHUNK_VAR = "__rosterChunk";

/**
 * A bundle file with each literal `import("./x.js")` made `import(__rosterChunkN)`, the names
 * declared first in the file: what the graph `deno run` builds before main runs does not follow
 * (src/lazy.ts). Run on esbuild's output after checkOutput, so every one names a file
 * of the bundle.
 */
export function deferChunkImports(js: string): string {
  const names: string[] = [];
  const body = js.replace(
    /(?<![\w$.])import\(\s*("\.\.?\/[^"\\\n]+"|'\.\.?\/[^'\\\n]+')\s*\)/g,
    (_, literal: string) => {
      names.push(`const ${CHUNK_VAR}${names.length} = "${literal.slice(1, -1)}";\n`);
      return `import(${CHUNK_VAR}${names.length - 1})`;
    },
  );
  return names.length === 0 ? js : names.join("") + body;
}

/** The chunks a deferred bundle file names (deferChunkImports' declarations). */
export function deferredTargets(js: string): string[] {
  return [...js.matchAll(new RegExp(`^const ${CHUNK_VAR}\\d+ = "([^"]+)";$`, "gm"))].map((m) =>
    m[1]
  );
}

export interface Options {
  out: string;
  /** The tree to bundle: main.ts, deno.json and src/ under it (tests plant modules in a copy). */
  root?: string;
  verbose: boolean;
  help: boolean;
}

export function parseOptions(args: readonly string[]): Options {
  const opts: Options = { out: `${ROOT}dist/bundle`, verbose: false, help: false };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].startsWith("--") && args[i].includes("=")
      ? [args[i].slice(0, args[i].indexOf("=")), args[i].slice(args[i].indexOf("=") + 1)]
      : [args[i], undefined];
    if (flag === "--out") {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new BundleError(`missing value for ${flag}`);
      opts.out = v;
    } else if (flag === "--verbose" || flag === "-v") opts.verbose = true;
    else if (flag === "--help" || flag === "-h") opts.help = true;
    else throw new BundleError(`unknown argument ${JSON.stringify(args[i])} (see --help)`);
  }
  return opts;
}

/** deno bundle runs elsewhere, so a path relative to ours must be fixed first. */
function absolute(path: string): string {
  return /^([A-Za-z]:)?[\\/]/.test(path) ? path : `${Deno.cwd()}/${path}`;
}

/** The sources the bundle is made of, relative to the root: main.ts, deno.json, src/**. */
function sourceFiles(root: string): string[] {
  // deno.lock too once there is one: deno.json's lock is frozen, and the copy must obey it.
  const found = ["main.ts", "deno.json", "deno.lock"].filter((f) => {
    try {
      return Deno.statSync(`${root}${f}`).isFile;
    } catch {
      return false;
    }
  });
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(`${root}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (entry.isFile) found.push(path);
    }
  };
  walk("src");
  return found.sort();
}

/** Copies the sources into `dir`, each variable import made literal (literalImports). */
export function prepareInput(dir: string, root: string = ROOT): string[] {
  const rewritten: string[] = [];
  for (const file of sourceFiles(root)) {
    const target = `${dir}/${file}`;
    Deno.mkdirSync(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    if (!file.endsWith(".ts")) {
      Deno.copyFileSync(`${root}${file}`, target);
      continue;
    }
    const source = Deno.readTextFileSync(`${root}${file}`);
    const literal = literalImports(source, file);
    if (literal !== null) rewritten.push(file);
    Deno.writeTextFileSync(target, literal ?? source);
  }
  return rewritten;
}

/** The JavaScript files in `dir`, by name, sorted. */
function jsFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].filter((e) => e.isFile && e.name.endsWith(".js"))
    .map((e) => e.name).sort();
}

/** Fails (BundleError) on a bundle file's non-literal import or one naming a missing file. */
export function checkOutput(dir: string): string[] {
  const files = jsFiles(dir);
  if (!files.includes(ENTRY)) throw new BundleError(`deno bundle wrote no ${ENTRY} in ${dir}`);
  for (const name of files) {
    const js = Deno.readTextFileSync(`${dir}/${name}`);
    const [bad] = nonLiteralImports(js, name);
    if (bad) {
      throw new BundleError(
        `${bad.file}:${bad.line}: import() of a non-literal specifier (${bad.text.trim()}): ` +
          'name its module in a typeof import("...") in the source file',
      );
    }
    for (const target of literalTargets(js)) {
      if (!files.includes(target.replace(/^\.\//, ""))) {
        throw new BundleError(`${name}: import("${target}") names no file of the bundle`);
      }
    }
  }
  return files;
}

const USAGE = `Usage: deno task bundle [--out DIR] [--verbose]

Bundles roster (main.ts and src/) into DIR (default dist/bundle/) as ${ENTRY} plus chunks,
code-split so that each command loads only its own. Run it with
deno run -A --v8-flags=... DIR/${ENTRY}.
`;

/**
 * `deno <args>` in `cwd` with only `env`, its stdout and stderr kept as one log (shown when
 * `verbose`): how the bundle and the build run deno bundle and deno compile.
 */
export async function runDeno(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  verbose: boolean,
): Promise<{ success: boolean; code: number; log: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const log = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  if (verbose) await Deno.stderr.write(new TextEncoder().encode(log));
  return { success: r.success, code: r.code, log };
}

/**
 * esbuild again over `entry` in `dir`, every other file of `files` not `inside` left external
 * (imported as it is): the text it writes. `what` names the pass in the one-line failure.
 */
async function bundleAgain(
  dir: string,
  entry: string,
  inside: ReadonlySet<string>,
  files: readonly string[],
  what: string,
  verbose: boolean,
): Promise<string> {
  const output = `.${entry}.out`;
  const r = await runDeno(
    [
      "bundle",
      "--no-config",
      "--platform",
      "deno",
      "--format",
      "esm",
      ...files.filter((f) => !inside.has(f)).flatMap((f) => ["--external", `./${f}`]),
      "--output",
      output,
      entry,
    ],
    dir,
    { NO_COLOR: "1" },
    verbose,
  );
  if (!r.success) {
    const more = verbose ? "" : "; run with --verbose for its output";
    throw new BundleError(`deno bundle of ${what} failed (exit ${r.code})${more}`);
  }
  const js = Deno.readTextFileSync(`${dir}/${output}`);
  Deno.removeSync(`${dir}/${output}`);
  return js;
}

/** The entry of the second bundling pass, written beside the chunks it merges and removed. */
const STARTUP_ENTRY = "startup-entry.js";

/**
 * The chunks main.js imports (startupChunks) made one chunk, `chunk-<hash>.js`, by a second
 * esbuild pass over them; every other file imports that one instead. esbuild splits by the
 * set of entry points that use a module, and cannot know that every command's chunk is only
 * ever loaded after main.js: so main's own code came as 16 chunks, each a file every call
 * opens, looks up in the code cache and links, about 0.1 ms each (docs/performance.md, fix
 * 17). Nothing is loaded that was not loaded before, nor in another order: the pass's entry
 * re-exports the chunks in main.js's order, and the two differ only in how many files hold
 * the code. The other chunks stay as esbuild split them: merging any of them would run a
 * module's top level in calls that never loaded it.
 */
async function mergeStartupChunks(dir: string, verbose: boolean): Promise<void> {
  const read = (f: string) => Deno.readTextFileSync(`${dir}/${f}`);
  const members = startupChunks(read);
  if (members.length < 2) return;
  // Each name must mean one thing in the merged chunk (an ambiguous `export *` name is
  // dropped, and its importer would fail to link at run time).
  const owner = new Map<string, string>();
  for (const m of members) {
    for (const name of exportedNames(read(m))) {
      const other = owner.get(name);
      if (other !== undefined) {
        throw new BundleError(`${m} and ${other} both export ${name}: cannot merge them`);
      }
      owner.set(name, m);
    }
  }
  const files = jsFiles(dir);
  const merged = new Set(members);
  Deno.writeTextFileSync(
    `${dir}/${STARTUP_ENTRY}`,
    members.map((m) => `export * from "./${m}";\n`).join(""),
  );
  // The commands' chunks stay where they are, loaded when asked for.
  const js = await bundleAgain(dir, STARTUP_ENTRY, merged, files, "the start-up chunks", verbose);
  const missing = [...owner.keys()].filter((n) => !exportedNames(js).includes(n));
  if (missing.length > 0) {
    throw new BundleError(`the merged start-up chunk does not export ${missing.join(", ")}`);
  }
  const name = `chunk-${await contentHash(js)}.js`;
  Deno.writeTextFileSync(`${dir}/${name}`, js);
  for (const f of [...members, STARTUP_ENTRY]) {
    Deno.removeSync(`${dir}/${f}`);
  }
  for (const f of files.filter((f) => !merged.has(f))) {
    Deno.writeTextFileSync(`${dir}/${f}`, redirectImports(read(f), merged, name));
  }
}

/**
 * Each command's chunk and the chunks only it needs (commandMerges) made one file,
 * `<command>-<hash>.js`, by an esbuild pass per command with every other file external; the
 * table is pointed at it and the chunks nothing loads any more are removed. esbuild splits
 * shared code by the set of commands using it, so `activity` came as its own chunk and nine
 * more; folded, esbuild also drops what the command never reaches of them (53 KB -> 37 KB),
 * about 1.6 ms of CPU off its start-up (docs/performance.md, fix 18). Within the file the
 * modules run in the order they did; the chunks left external (main.js's, and those a module
 * loaded on demand shares) are imported first, as they already were by the chunks that
 * needed them.
 */
async function mergeCommandChunks(dir: string, verbose: boolean): Promise<void> {
  const read = (f: string) => Deno.readTextFileSync(`${dir}/${f}`);
  const files = jsFiles(dir);
  const renamed = new Map<string, string>();
  for (const [command, own] of commandMerges(read, files)) {
    const inside = new Set([command, ...own]);
    const js = await bundleAgain(dir, command, inside, files, `${command} and its chunks`, verbose);
    const name = `${command.replace(/-[A-Z0-9]+\.js$/, "")}-${await contentHash(js)}.js`;
    Deno.writeTextFileSync(`${dir}/${name}`, js);
    renamed.set(command, name);
  }
  for (const f of jsFiles(dir)) {
    let js = read(f);
    for (const [from, to] of renamed) js = renameImport(js, from, to);
    Deno.writeTextFileSync(`${dir}/${f}`, js);
  }
  const kept = reachableFiles(read);
  for (const f of jsFiles(dir)) if (!kept.has(f)) Deno.removeSync(`${dir}/${f}`);
}

/** Eight base32 characters of the SHA-256 of `text`: a chunk's name changes with its code. */
async function contentHash(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

/** Builds the bundle into opts.out; returns the files written (main.js first). */
export async function bundle(opts: Options): Promise<string[]> {
  const out = absolute(opts.out);
  const work = await Deno.makeTempDir({ prefix: "roster-bundle-" });
  try {
    const rewritten = prepareInput(`${work}/in`, (opts.root ?? ROOT).replace(/\/?$/, "/"));
    if (opts.verbose) console.error(`literal imports made in ${rewritten.join(", ")}`);
    const r = await runDeno(
      [
        "bundle",
        "--code-splitting",
        "--platform",
        "deno",
        "--format",
        "esm",
        "--outdir",
        `${work}/out`,
        "main.ts",
      ],
      `${work}/in`,
      { NO_COLOR: "1" },
      opts.verbose,
    );
    const log = r.log;
    if (!r.success) {
      if (/lockfile is out of date/i.test(log)) {
        throw new BundleError("deno.lock is out of date and it is frozen: update it on purpose");
      }
      const more = opts.verbose ? "" : "; run with --verbose for its output";
      throw new BundleError(`deno bundle failed (exit ${r.code})${more}`);
    }
    // esbuild's own output checked first: what the merges read must be literal imports.
    checkOutput(`${work}/out`);
    await mergeCommandChunks(`${work}/out`, opts.verbose);
    await mergeStartupChunks(`${work}/out`, opts.verbose);
    const files = checkOutput(`${work}/out`);
    // An installed roster may be running from `out` while it is rebuilt: each file is written
    // beside its place and renamed in (never half written), the chunks before the entry that
    // names them, and only then the earlier bundle's chunks are removed (their names carry a
    // hash of their content, so a name both bundles have holds the same code).
    await Deno.mkdir(out, { recursive: true });
    const entryLast = [...files.filter((f) => f !== ENTRY), ENTRY];
    for (const f of entryLast) {
      const tmp = `${out}/.${f}.${Deno.pid}.tmp`;
      Deno.writeTextFileSync(tmp, deferChunkImports(Deno.readTextFileSync(`${work}/out/${f}`)));
      Deno.renameSync(tmp, `${out}/${f}`);
    }
    const kept = new Set(files);
    for (const e of Deno.readDirSync(out)) {
      if (e.isFile && e.name.endsWith(".js") && !kept.has(e.name)) {
        Deno.removeSync(`${out}/${e.name}`);
      }
    }
    return [ENTRY, ...files.filter((f) => f !== ENTRY)];
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  try {
    const opts = parseOptions(Deno.args);
    if (opts.help) {
      console.log(USAGE);
    } else {
      const files = await bundle(opts);
      let bytes = 0;
      for (const f of files) bytes += Deno.statSync(`${absolute(opts.out)}/${f}`).size;
      console.log(
        `bundled ${absolute(opts.out)}/${ENTRY} and ${files.length - 1} chunks ` +
          `(${(bytes / 1e3).toFixed(0)} KB)`,
      );
    }
  } catch (err) {
    const msg = err instanceof BundleError
      ? err.message
      : `unexpected failure: ${err instanceof Error ? err.message : err}`;
    await Deno.stderr.write(new TextEncoder().encode(`bundle: ${msg}\n`));
    Deno.exit(1);
  }
}
