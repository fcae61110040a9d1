/**
 * `roster hooks` and `roster doctor` on disk: where each harness keeps its hooks, reading a
 * settings file with care (never through a link it may not follow, never blocking on a FIFO,
 * bounded), keeping the user's original in a backup that is never overwritten, and writing
 * under the directory's lock with a compare-and-swap, so an uninstall gives back the bytes that
 * were there and no edit made meanwhile is lost.
 *
 * Over 400 lines: each harness's settings location, the careful read, the backup and the
 * locked compare-and-swap write are one sequence an install and an uninstall both walk.
 */
import { RosterError } from "../errors.ts";
import { pause } from "../pause.ts";
import { readUpTo } from "../fs/io.ts";
import { openRegular } from "../fs/read.ts";
import { createExclusive, writeAtomic } from "../fs/write.ts";
import type { Dialect } from "./jsonc.ts";
import { type Harness, type Recipe, RECIPES, recipeText } from "./recipes.ts";
import {
  type HookState,
  hookState,
  installText,
  isEmptyObject,
  readSettings,
  SettingsShapeError,
  uninstallText,
} from "./settings.ts";

/** The suffix of the copy kept of a file before roster first changes it; later ones are numbered. */
export const BACKUP_SUFFIX = ".roster-backup";

/**
 * Which JSON each harness reads (checked against its release): Gemini CLI strips comments
 * before JSON.parse (no trailing commas); Claude Code and Codex read plain JSON.
 */
export const DIALECTS: Record<Harness, Dialect> = {
  claude: { comments: false },
  codex: { comments: false },
  gemini: { comments: true },
  pi: { comments: false },
};

/** A settings file larger than this is not one: refused, never read whole. */
const MAX_SETTINGS = 1024 * 1024;

export type HookAction = "install" | "uninstall";

/** Whose settings a file is: the user's (home directory) or a project's. */
export type HookScope = "user" | "project";

/** What an install or uninstall would do to one file. */
export interface HookChange {
  harness: Harness;
  action: HookAction;
  path: string;
  /** The file's text now, or null when there is none. */
  before: string | null;
  /** Its text afterwards, or null when the file is to be removed. */
  after: string | null;
  changed: boolean;
  /** The backup that holds the user's original (kept, made, or restored from and removed). */
  backup: string | null;
  /** Uninstall: the original came back from `backup` byte for byte, and the backup went. */
  restored: boolean;
}

/** The settings file of `harness`, under the home directory or, with `project`, the project. */
export function settingsPath(harness: Harness, base: string, project: boolean): string {
  const r = RECIPES[harness];
  return `${base}/${project ? r.projectPath : r.userPath}`;
}

/** A byte-order mark is kept as text (the parser steps over it): the backup is the original. */
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The directory a settings file is in. Not fs/path.ts's parentOf: settingsPath joins with "/"
 * on every OS (the harnesses' own spelling), and parentOf splits at this OS's separator.
 */
function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/**
 * The regular file at `path` (never through a link, never blocking on a FIFO: src/fs/read.ts
 * checks it on the open handle), at most MAX_SETTINGS bytes of UTF-8; null when there is none.
 */
function readRegular(path: string, what: string): string | null {
  const file = openRegular(
    path,
    what,
    { read: true },
    () => pause("read:before-open", dirOf(path)),
  );
  if (file === null) return null;
  let bytes: Uint8Array;
  try {
    bytes = readUpTo((b) => file.readSync(b), MAX_SETTINGS);
  } catch (err) {
    throw new RosterError(`${what}: ${describe(err)}: ${path}`);
  } finally {
    file.close();
  }
  if (bytes.length > MAX_SETTINGS) {
    throw new RosterError(`${what}: larger than ${MAX_SETTINGS} bytes: ${path}`);
  }
  try {
    return decoder.decode(bytes);
  } catch {
    throw new RosterError(`${what}: not valid UTF-8: ${path}`);
  }
}

function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw new RosterError(`Cannot read the settings file: ${describe(err)}: ${path}`);
  }
}

/**
 * The file roster reads and writes for `path`: `path` itself, or in the user's own home the
 * file a link of theirs points to (a dotfiles checkout), when it is a regular file of theirs.
 * In a project (a cloned repository may carry any link) a link is refused, and so is a linked
 * directory between the project and the file.
 */
export function resolveTarget(path: string, scope: HookScope, base: string): string {
  if (scope === "project") {
    const rel = path.slice(base.length + 1).split("/");
    let cur = base;
    for (const part of rel) {
      cur = `${cur}/${part}`;
      if (lstat(cur)?.isSymlink) {
        throw new RosterError(
          `Not writing through a symbolic link in a project (it may point anywhere): ${cur}`,
        );
      }
    }
    return path;
  }
  const info = lstat(path);
  if (!info?.isSymlink) return path;
  const me = Deno.build.os === "windows" ? null : Deno.uid();
  let target: string;
  let real: Deno.FileInfo;
  try {
    target = Deno.realPathSync(path);
    real = Deno.lstatSync(target);
  } catch {
    throw new RosterError(`Not writing through a dangling symbolic link: ${path}`);
  }
  if (!real.isFile || (me !== null && (info.uid !== me || real.uid !== me))) {
    throw new RosterError(
      `Not writing through a symbolic link to a file that is not a regular file of yours: ${path}`,
    );
  }
  return target;
}

function describe(err: unknown): string {
  if (err instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (err instanceof Deno.errors.IsADirectory) return "is a directory";
  return err instanceof Error ? err.message : String(err);
}

function shaped<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof SettingsShapeError) {
      throw new RosterError(`Cannot merge into the settings file: ${err.message}`);
    }
    throw err;
  }
}

/** The backups of `target`, oldest first: `.roster-backup`, then `.roster-backup.2`, ... */
function backupName(target: string, n: number): string {
  return n === 1 ? `${target}${BACKUP_SUFFIX}` : `${target}${BACKUP_SUFFIX}.${n}`;
}

interface Backup {
  path: string;
  /** Null: a name taken by something roster did not make (a link, a FIFO): never read or used. */
  text: string | null;
}

function backupsOf(target: string): Backup[] {
  const out: Backup[] = [];
  for (let n = 1; n < 1000; n++) {
    const path = backupName(target, n);
    const info = lstat(path);
    if (info === null) break;
    let text: string | null = null;
    if (info.isFile) {
      try {
        text = readRegular(path, "Cannot read the backup");
      } catch { /* swapped or unreadable: not ours to use */ }
    }
    out.push({ path, text });
  }
  return out;
}

function isOursText(recipe: Recipe, text: string): boolean {
  return recipe.kind === "file" && (text === recipe.content || isOldRosterExtension(text));
}

/** Whether `text` holds no hook of roster's: the user's own, worth a backup. */
function isUsersOwn(recipe: Recipe, harness: Harness, text: string, path: string): boolean {
  if (recipe.kind === "file") return !isOursText(recipe, text);
  if (text.trim() === "") return true;
  return hookState(readSettings(text, DIALECTS[harness], path), recipe) === "missing";
}

/** Everything applyChange needs beyond the change itself. */
interface Plan extends HookChange {
  target: string;
  /** Install: the user's original needs a new backup (none holds these bytes yet). */
  makeBackup: boolean;
  /** Backups to remove once written: the one restored from, or one the result equals. */
  dropBackups: string[];
}

function plan(
  harness: Harness,
  action: HookAction,
  path: string,
  scope: HookScope,
  base: string,
): Plan {
  const recipe = RECIPES[harness];
  const dialect = DIALECTS[harness];
  const target = resolveTarget(path, scope, base);
  const before = readRegular(target, "Cannot read the settings file");
  const backups = before === null ? [] : backupsOf(target);
  const p: Plan = {
    harness,
    action,
    path,
    target,
    before,
    after: before,
    changed: false,
    backup: null,
    restored: false,
    makeBackup: false,
    dropBackups: [],
  };
  if (action === "install") {
    const after = recipe.kind === "file"
      ? recipe.content
      : shaped(() => installText(before ?? "", recipe, dialect, path));
    if (after === before) return p;
    p.after = after;
    p.changed = true;
    if (before !== null && shaped(() => isUsersOwn(recipe, harness, before, path))) {
      const kept = backups.find((b) => b.text === before);
      p.backup = kept?.path ?? null;
      p.makeBackup = kept === undefined;
    }
    return p;
  }
  if (before === null) return p;
  if (recipe.kind === "file") {
    if (!isOursText(recipe, before)) {
      throw new RosterError(
        `Not removing the extension: it is not roster's recipe (edit or remove it yourself): ${path}`,
      );
    }
  } else if (shaped(() => isUsersOwn(recipe, harness, before, path))) return p;
  // The newest backup this file is the install of: the original, byte for byte.
  const install = (text: string) =>
    recipe.kind === "file" ? recipe.content : installText(text, recipe, dialect, path);
  const from = [...backups].reverse().find((b) => {
    if (b.text === null) return false;
    try {
      return install(b.text) === before || (recipe.kind === "file" && isOursText(recipe, before));
    } catch {
      return false;
    }
  });
  p.changed = true;
  if (from !== undefined) {
    p.after = from.text;
    p.backup = from.path;
    p.restored = true;
    p.dropBackups = [from.path];
    return p;
  }
  if (recipe.kind === "file") {
    p.after = null;
    return p;
  }
  // Only backups roster can read are backups: a name taken by a link or a FIFO (a checkout may
  // carry one) is never named as the one kept.
  const usable = backups.filter((b) => b.text !== null);
  // The newest is the user's file as it was before install: what of it was theirs stays.
  const after = shaped(() => uninstallText(before, dialect, path, usable.at(-1)?.text ?? null));
  // What is left of a file roster made (there is no backup of an original): removed. Not a
  // file reached through a link (the user's dotfiles): that one is theirs, and stays.
  p.after = usable.length === 0 && isEmptyObject(after) && target === path ? null : after;
  const same = usable.find((b) => b.text === after);
  if (same !== undefined) p.dropBackups = [same.path];
  p.backup = same?.path ?? usable.at(-1)?.path ?? null;
  return p;
}

/** What `action` would change in `path`; nothing is written. */
export function planChange(
  harness: Harness,
  action: HookAction,
  path: string,
  scope: HookScope = "user",
  base = path.slice(0, path.lastIndexOf("/")),
): HookChange {
  const { target: _t, makeBackup: _m, dropBackups: _d, ...change } = plan(
    harness,
    action,
    path,
    scope,
    base,
  );
  return change;
}

function isOldRosterExtension(text: string): boolean {
  return /pi\.exec\("roster", \["register"/.test(text);
}

/** The file changed between roster's read and its rename: planned again from the new bytes. */
class Conflict extends RosterError {}

/** Tries at most this many times when another writer keeps changing the file. */
const MAX_TRIES = 20;

/** The directories between `base` and `dir` that do not exist yet, outermost first. */
function missingDirs(base: string, dir: string): string[] {
  const out: string[] = [];
  for (
    let d = dir;
    d.length > base.length && lstat(d) === null;
    d = d.slice(0, d.lastIndexOf("/"))
  ) {
    out.unshift(d);
  }
  return out;
}

/** Holds the directory's advisory lock (flock on the directory itself: no lock file left). */
function lockDir(dir: string): Deno.FsFile | null {
  if (Deno.build.os === "windows") return null;
  try {
    const f = Deno.openSync(dir, { read: true });
    f.lockSync(true);
    return f;
  } catch {
    return null;
  }
}

/**
 * Makes the change, planned again under the lock of the file's directory: the user's original
 * goes to a new backup first (created exclusively: a name already taken, even by a link, is
 * skipped, never written through), then the new text to a temp file renamed over the old one
 * (same mode) if the file still holds what was planned from; otherwise it is planned again.
 * Directories roster created for a file are removed with it when left empty.
 */
export function applyChange(
  harness: Harness,
  action: HookAction,
  path: string,
  scope: HookScope,
  base: string,
): HookChange {
  for (let attempt = 0;; attempt++) {
    const first = plan(harness, action, path, scope, base);
    if (!first.changed) return strip(first);
    const dir = dirOf(first.target);
    const made = missingDirs(base, dir);
    try {
      for (const d of made) Deno.mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      throw new RosterError(`Cannot write the settings file: ${describe(err)}: ${dir}`);
    }
    resolveTarget(path, scope, base); // a directory made above is not a link
    const lock = lockDir(dir);
    try {
      const p = plan(harness, action, path, scope, base);
      write(p);
      if (p.after === null) removeEmpty(base, dir);
      return strip(p);
    } catch (err) {
      if (!(err instanceof Conflict) || attempt >= MAX_TRIES) throw err;
    } finally {
      lock?.close();
    }
  }
}

function strip(p: Plan): HookChange {
  const { target: _t, makeBackup: _m, dropBackups: _d, ...change } = p;
  return change;
}

function write(p: Plan): void {
  if (!p.changed) return;
  const target = p.target;
  const still = () => {
    pause("hooks:before-rename", dirOf(target));
    if (readRegular(target, "Cannot read the settings file") !== p.before) {
      throw new Conflict(`The settings file changed while being written: ${target}`);
    }
  };
  try {
    let mode = 0o600;
    if (p.before !== null) mode = (Deno.statSync(target).mode ?? 0o600) & 0o777;
    if (p.makeBackup && p.before !== null) {
      for (let n = 1;; n++) {
        const name = backupName(target, n);
        if (lstat(name) !== null) continue;
        if (createExclusive(name, p.before) !== null) {
          p.backup = name;
          break;
        }
      }
    }
    if (p.after === null) {
      still();
      Deno.removeSync(target);
    } else writeAtomic(target, p.after, true, still, mode);
    for (const b of p.dropBackups) {
      if (lstat(b)?.isFile) Deno.removeSync(b);
    }
  } catch (err) {
    if (err instanceof RosterError) throw err;
    throw new RosterError(`Cannot write the settings file: ${describe(err)}: ${target}`);
  }
}

/**
 * Removes the empty directories from `dir` up to (not including) `base`: what a recipe's file
 * needed. Only directories inside `base`: none of a file reached through a link elsewhere.
 */
function removeEmpty(base: string, dir: string): void {
  const inside = (d: string) => d.startsWith(base.endsWith("/") ? base : `${base}/`);
  for (let d = dir; inside(d); d = d.slice(0, d.lastIndexOf("/"))) {
    // A link to a directory (`~/.claude` into the user's dotfiles) is theirs: removing it would
    // unlink it, however full the directory it points to.
    if (lstat(d)?.isSymlink !== false) return;
    try {
      Deno.removeSync(d); // fails on a directory that is not empty: the user's, kept
    } catch {
      return;
    }
  }
}

/** A file a harness reads its hooks from. */
export interface HookFile {
  harness: Harness;
  scope: HookScope;
  path: string;
}

/**
 * Every file `harness` reads hooks from, for the user at `home` and the project at `project`:
 * the user's settings, the project's, and the project's local ones where the harness has them.
 * A project that is the home directory shares its files with the user: each path is listed once.
 */
export function hookFiles(
  harness: Harness,
  home: string | null,
  project: string | null,
): HookFile[] {
  const r = RECIPES[harness];
  const files: HookFile[] = [];
  const add = (scope: HookScope, base: string | null, rel: string | undefined) => {
    if (base === null || rel === undefined) return;
    const path = `${base}/${rel}`;
    if (!files.some((f) => f.path === path)) files.push({ harness, scope, path });
  };
  add("user", home, r.userPath);
  add("project", project, r.projectPath);
  add("project", project, r.kind === "settings" ? r.projectLocalPath : undefined);
  return files;
}

/** What doctor reports for one file a harness reads its hooks from. */
export interface HookReport {
  harness: Harness;
  scope: HookScope;
  path: string;
  /** `absent`: no settings file; `invalid`: a file roster cannot read as settings. */
  state: HookState | "absent" | "invalid";
  detail: string | null;
}

/** Reads one hook file for doctor: a link is read where it points, never a FIFO or device. */
export function readHookFile(path: string): string | null {
  let target = path;
  if (lstat(path)?.isSymlink) {
    try {
      target = Deno.realPathSync(path);
    } catch {
      throw new RosterError(`Cannot read the settings file: a dangling symbolic link: ${path}`);
    }
  }
  return readRegular(target, "Cannot read the settings file");
}

export function inspectHooks(file: HookFile): HookReport {
  const { harness, scope, path } = file;
  const recipe = RECIPES[harness];
  let text: string | null;
  try {
    text = readHookFile(path);
  } catch (err) {
    return { harness, scope, path, state: "invalid", detail: (err as Error).message };
  }
  if (text === null) return { harness, scope, path, state: "absent", detail: null };
  if (recipe.kind === "file") {
    const state = text === recipe.content
      ? "installed"
      : isOldRosterExtension(text)
      ? "outdated"
      : "missing";
    return { harness, scope, path, state, detail: null };
  }
  try {
    const state = hookState(readSettings(text, DIALECTS[harness], path), recipe);
    return { harness, scope, path, state, detail: null };
  } catch (err) {
    return { harness, scope, path, state: "invalid", detail: (err as Error).message };
  }
}

export { recipeText };
