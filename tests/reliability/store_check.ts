/**
 * Shared checks for the reliability suite: snapshot a store, and assert that every file in
 * it is a whole, valid record (nothing torn, nothing half-written left behind).
 */
import { validateRecord } from "../../src/registry/record.ts";
import { RECORD_NAME } from "../../src/registry/layout.ts";
import { assert } from "../assert.ts";
import { hostDir } from "../helpers.ts";

/**
 * Every file in the host directory: name to content (directories and links by kind). The
 * cleanup queue's files (.sweep, .sweep.next, .sweep.tmp) are left out: they are hints that
 * register and prune rewrite.
 */
export function snapshot(home: string, dir = hostDir(home)): Map<string, string> {
  const out = new Map<string, string>();
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.name.startsWith(".sweep")) continue;
    const path = `${dir}/${e.name}`;
    const info = Deno.lstatSync(path);
    if (info.isSymlink) out.set(e.name, `symlink -> ${Deno.readLinkSync(path)}`);
    else if (info.isFile) out.set(e.name, Deno.readTextFileSync(path));
    else out.set(e.name, info.isDirectory ? "<directory>" : "<special>");
  }
  return out;
}

/** Asserts every record-named file is a whole, valid record and no temp file is left. */
export function assertWhole(home: string, opts: { tempsAllowed?: boolean } = {}): number[] {
  const pids: number[] = [];
  for (const [name, content] of snapshot(home)) {
    if (name === ".lock" || name === ".lock.gate") continue;
    if (name.endsWith(".tmp")) {
      assert(opts.tempsAllowed, `temp file left behind: ${name}`);
      continue;
    }
    const m = RECORD_NAME.exec(name);
    assert(m, `unexpected file in the store: ${name}`);
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch {
      throw new Error(`torn record ${name}: ${JSON.stringify(content.slice(0, 80))}`);
    }
    const checked = validateRecord(value, Number(m[1]));
    assert("record" in checked, `invalid record ${name}: ${JSON.stringify(checked)}`);
    pids.push(Number(m[1]));
  }
  return pids.sort((a, b) => a - b);
}

/** Lines on stderr that look like a JavaScript stack trace: never acceptable. */
export function hasStackTrace(stderr: string): boolean {
  return /^\s+at .+[:(]/m.test(stderr) || /Uncaught|error: Uncaught/.test(stderr);
}
