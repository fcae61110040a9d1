/**
 * Derives the `struct kinfo_proc` offsets roster decodes on macOS and FreeBSD from typed sources
 * outside this repository, and writes them to tests/fixtures/offsets/<os>-<arch>.json, which the
 * decoder tests lay their bytes out from (never from the constants in src/process/).
 *
 * Sources (read from local git mirrors; nothing of them is copied, only the numbers derived):
 *   - golang/sys `unix/ztypes_darwin_{amd64,arm64}.go`: KinfoProc, ExternProc, Eproc, ...
 *   - shirou/gopsutil `process/process_freebsd_{amd64,arm64}.go`: KinfoProc (golang/sys has no
 *     FreeBSD KinfoProc).
 * Both are `cgo -godefs` output: the C compiler's layout of <sys/sysctl.h>/<sys/proc.h> (xnu) and
 * <sys/user.h> (FreeBSD) written as Go structs, with any padding the C compiler added spelled out
 * as `_ [N]byte` fields. So Go's layout rules (each field at the next multiple of its alignment;
 * a struct aligned to its widest member and its size rounded up to that) give the C offsets.
 * The computed struct size must equal the sizeof constant cgo wrote into the same file
 * (SizeofKinfoProc, sizeOfKinfoProc), which checks the layout computation against the C
 * compiler's own answer.
 *
 * Usage (the mirrors are bare git directories, e.g. from `git clone --bare`):
 *   deno run --allow-run=git --allow-read --allow-write=tests/fixtures/offsets \
 *     scripts/derive_offsets.ts --golang-sys DIR --gopsutil DIR [--check]
 * --check compares with the committed tables instead of writing them and exits 1 on a difference.
 * The committed tables came from golang/sys e8c1c3274309bd87f360205f5706e986ceccb317 and gopsutil
 * b9930e2b530a6ac8c63c44eca1aefd9fea04c1f4 (each table's `source` says which); a cross-check of
 * the figures against the xnu and FreeBSD C headers is in docs/platforms.md.
 */

/** Where each table comes from, and the Go field path of each C field roster reads. */
export interface Target {
  os: "darwin" | "freebsd";
  arch: "amd64" | "arm64";
  repo: "golang/sys" | "shirou/gopsutil";
  path: string;
  type: string;
  /** The `const` cgo wrote with the C compiler's sizeof(struct kinfo_proc). */
  sizeConst: string;
  fields: Record<string, string>;
}

const DARWIN_FIELDS = {
  "p_starttime.tv_sec": "Proc.P_starttime.Sec",
  "p_starttime.tv_usec": "Proc.P_starttime.Usec",
  "p_stat": "Proc.P_stat",
  "p_pid": "Proc.P_pid",
  "p_comm": "Proc.P_comm",
  "e_ppid": "Eproc.Ppid",
};

const FREEBSD_FIELDS = {
  "ki_structsize": "Structsize",
  "ki_pid": "Pid",
  "ki_ppid": "Ppid",
  "ki_start.tv_sec": "Start.Sec",
  "ki_start.tv_usec": "Start.Usec",
  "ki_stat": "Stat",
  "ki_comm": "Comm",
};

const TARGETS: Target[] = [
  ...(["amd64", "arm64"] as const).map((arch): Target => ({
    os: "darwin",
    arch,
    repo: "golang/sys",
    path: `unix/ztypes_darwin_${arch}.go`,
    type: "KinfoProc",
    sizeConst: "SizeofKinfoProc",
    fields: DARWIN_FIELDS,
  })),
  ...(["amd64", "arm64"] as const).map((arch): Target => ({
    os: "freebsd",
    arch,
    repo: "shirou/gopsutil",
    path: `process/process_freebsd_${arch}.go`,
    type: "KinfoProc",
    sizeConst: "sizeOfKinfoProc",
    fields: FREEBSD_FIELDS,
  })),
];

export interface FieldLayout {
  offset: number;
  size: number;
  /** The Go type cgo gave the field, e.g. `int32` or `[17]byte`. */
  type: string;
}

export interface OffsetTable {
  generatedBy: string;
  os: string;
  arch: string;
  struct: "kinfo_proc";
  source: { repo: string; commit: string; path: string; type: string };
  size: number;
  fields: Record<string, FieldLayout>;
}

/** The Go declarations of one file: struct bodies and plain type definitions. */
export interface GoDecls {
  structs: Map<string, { name: string; type: string }[]>;
  aliases: Map<string, string>;
  consts: Map<string, number>;
}

function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "");
}

/** Parses the subset of Go that cgo -godefs writes: structs, type definitions, integer consts. */
export function parseGo(source: string): GoDecls {
  const lines = stripComments(source).split("\n").map((l) => l.trim());
  const decls: GoDecls = { structs: new Map(), aliases: new Map(), consts: new Map() };
  let inTypeGroup = false;
  let inConstGroup = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === "") continue;
    if (inTypeGroup || inConstGroup) {
      if (line === ")") {
        inTypeGroup = inConstGroup = false;
        continue;
      }
      if (inTypeGroup) {
        const m = /^(\w+)\s+(\S+)$/.exec(line);
        if (m) decls.aliases.set(m[1], m[2]);
      } else {
        addConst(decls, line);
      }
      continue;
    }
    if (line === "type (") {
      inTypeGroup = true;
      continue;
    }
    if (line === "const (") {
      inConstGroup = true;
      continue;
    }
    if (line.startsWith("const ")) {
      addConst(decls, line.slice(6));
      continue;
    }
    const struct = /^type\s+(\w+)\s+struct\s*\{$/.exec(line);
    if (struct) {
      const fields: { name: string; type: string }[] = [];
      for (i++; i < lines.length && lines[i] !== "}"; i++) {
        if (lines[i] === "") continue;
        const f = /^(\w+)\s+(\S+)$/.exec(lines[i]);
        if (!f) throw new Error(`Unsupported field in ${struct[1]}: ${lines[i]}`);
        fields.push({ name: f[1], type: f[2] });
      }
      decls.structs.set(struct[1], fields);
      continue;
    }
    const alias = /^type\s+(\w+)\s+(\S+)$/.exec(line);
    if (alias) decls.aliases.set(alias[1], alias[2]);
  }
  return decls;
}

function addConst(decls: GoDecls, line: string): void {
  const m = /^(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)$/.exec(line);
  if (m) decls.consts.set(m[1], Number(m[2]));
}

/** Size and alignment of the basic Go types on a 64-bit target (amd64, arm64). */
const BASIC: Record<string, number> = {
  bool: 1,
  byte: 1,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  rune: 4,
  float32: 4,
  int64: 8,
  uint64: 8,
  float64: 8,
  int: 8,
  uint: 8,
  uintptr: 8,
};

interface Layout {
  size: number;
  align: number;
  fields?: Map<string, { offset: number; type: string }>;
}

/** Go's layout of `type` (gc on 64-bit targets), as cgo relied on it to mirror C's. */
export function layoutOf(decls: GoDecls, type: string, seen: string[] = []): Layout {
  if (type.startsWith("*")) return { size: 8, align: 8 };
  const array = /^\[(\d+)\](.+)$/.exec(type);
  if (array) {
    const elem = layoutOf(decls, array[2], seen);
    return { size: Number(array[1]) * elem.size, align: elem.align };
  }
  if (type in BASIC) return { size: BASIC[type], align: BASIC[type] };
  if (seen.includes(type)) throw new Error(`Recursive type: ${[...seen, type].join(" -> ")}`);
  const alias = decls.aliases.get(type);
  if (alias !== undefined) return layoutOf(decls, alias, [...seen, type]);
  const struct = decls.structs.get(type);
  if (struct === undefined) throw new Error(`Unknown Go type: ${type}`);
  let offset = 0;
  let align = 1;
  const fields = new Map<string, { offset: number; type: string }>();
  for (const f of struct) {
    const l = layoutOf(decls, f.type, [...seen, type]);
    offset = Math.ceil(offset / l.align) * l.align;
    if (f.name !== "_") fields.set(f.name, { offset, type: f.type });
    offset += l.size;
    align = Math.max(align, l.align);
  }
  return { size: Math.ceil(offset / align) * align, align, fields };
}

/** Offset, size and Go type of a dotted field path such as `Proc.P_starttime.Sec`. */
export function fieldAt(decls: GoDecls, type: string, path: string): FieldLayout {
  let offset = 0;
  let current = type;
  for (const name of path.split(".")) {
    const field = layoutOf(decls, current).fields?.get(name);
    if (field === undefined) throw new Error(`No field ${name} in ${current} (path ${path})`);
    offset += field.offset;
    current = field.type;
  }
  return { offset, size: layoutOf(decls, current).size, type: current };
}

/** The table for one target, from the text of its source file. */
export function deriveTable(target: Target, source: string, commit: string): OffsetTable {
  const decls = parseGo(source);
  const size = layoutOf(decls, target.type).size;
  const declared = decls.consts.get(target.sizeConst);
  if (declared !== size) {
    throw new Error(
      `${target.repo} ${target.path}: computed size ${size}, but ${target.sizeConst} is ${declared}`,
    );
  }
  const fields: Record<string, FieldLayout> = {};
  for (const [cName, goPath] of Object.entries(target.fields)) {
    fields[cName] = fieldAt(decls, target.type, goPath);
  }
  return {
    generatedBy: "scripts/derive_offsets.ts (see docs/platforms.md); do not edit by hand",
    os: target.os,
    arch: target.arch,
    struct: "kinfo_proc",
    source: { repo: target.repo, commit, path: target.path, type: target.type },
    size,
    fields,
  };
}

function git(dir: string, ...args: string[]): string {
  const out = new Deno.Command("git", { args: ["--git-dir", dir, ...args], stdout: "piped" })
    .outputSync();
  if (!out.success) throw new Error(`git ${args.join(" ")} failed in ${dir}`);
  return new TextDecoder().decode(out.stdout);
}

function flag(args: string[], name: string): string {
  const i = args.indexOf(name);
  if (i < 0 || i + 1 >= args.length) {
    throw new Error(`Missing ${name} DIR: the git directory of a ${name.slice(2)} mirror`);
  }
  return args[i + 1];
}

if (import.meta.main) {
  const args = Deno.args;
  const mirrors: Record<Target["repo"], string> = {
    "golang/sys": flag(args, "--golang-sys"),
    "shirou/gopsutil": flag(args, "--gopsutil"),
  };
  const check = args.includes("--check");
  const outDir = new URL("../tests/fixtures/offsets/", import.meta.url);
  let differs = false;
  for (const target of TARGETS) {
    const dir = mirrors[target.repo];
    const commit = git(dir, "rev-parse", "HEAD").trim();
    const table = deriveTable(target, git(dir, "show", `${commit}:${target.path}`), commit);
    const file = new URL(`${target.os}-${target.arch}.json`, outDir);
    const name = `tests/fixtures/offsets/${target.os}-${target.arch}.json`;
    if (check) {
      const committed = JSON.parse(Deno.readTextFileSync(file));
      // The commit may move on; the numbers must not.
      const same = JSON.stringify({ ...committed, source: null }) ===
        JSON.stringify({ ...table, source: null });
      console.log(`${same ? "same" : "DIFFERS"}: ${name}`);
      differs ||= !same;
    } else {
      Deno.mkdirSync(outDir, { recursive: true });
      Deno.writeTextFileSync(file, JSON.stringify(table, null, 2) + "\n");
      const summary = Object.entries(table.fields).map(([k, f]) => `${k}@${f.offset}`).join(" ");
      console.log(`${name}: size ${table.size}; ${summary}`);
    }
  }
  if (differs) Deno.exit(1);
}
