/**
 * `roster hooks` and `roster doctor` on disk: where each harness keeps its hooks, reading a
 * settings file (refusing one that is not JSON, never overwriting it), and writing the merged
 * file atomically after keeping a backup of what was there.
 */
import { RosterError } from "../errors.ts";
import { type Harness, type Recipe, RECIPES, recipeText } from "./recipes.ts";
import {
  type HookState,
  hookState,
  type Json,
  SettingsShapeError,
  withoutRecipe,
  withRecipe,
} from "./settings.ts";

/** The suffix of the copy kept of a file before roster first changes it. */
export const BACKUP_SUFFIX = ".roster-backup";

export type HookAction = "install" | "uninstall";

/** What an install or uninstall would do to one file. */
export interface HookChange {
  harness: Harness;
  action: HookAction;
  path: string;
  /** The file's text now, or null when there is none. */
  before: string | null;
  /** Its text afterwards, or null when the file is to be removed (pi's extension). */
  after: string | null;
  changed: boolean;
}

/** The settings file of `harness`, under the home directory or, with `project`, the project. */
export function settingsPath(harness: Harness, base: string, project: boolean): string {
  const r = RECIPES[harness];
  return `${base}/${project ? r.projectPath : r.userPath}`;
}

function readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw new RosterError(`Cannot read the settings file: ${describe(err)}: ${path}`);
  }
}

function describe(err: unknown): string {
  if (err instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (err instanceof Deno.errors.IsADirectory) return "is a directory";
  return err instanceof Error ? err.message : String(err);
}

/** Parses a settings file; what is not a JSON object is an error naming the file, never replaced. */
export function parseSettings(text: string, path: string): Json {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RosterError(
      `Cannot merge into the settings file: not valid JSON (${(err as Error).message}): ${path}`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RosterError(`Cannot merge into the settings file: not a JSON object: ${path}`);
  }
  return value;
}

/** What `action` would change in `path`; nothing is written. */
export function planChange(harness: Harness, action: HookAction, path: string): HookChange {
  const recipe: Recipe = RECIPES[harness];
  const before = readText(path);
  let after: string | null;
  if (recipe.kind === "file") {
    after = action === "install" ? recipe.content : null;
  } else if (action === "install") {
    const value = before === null || before.trim() === "" ? {} : parseSettings(before, path);
    after = JSON.stringify(shaped(() => withRecipe(value, recipe, path)), null, 2) + "\n";
  } else if (before === null) {
    after = null;
  } else {
    const value = parseSettings(before, path);
    const next = shaped(() => withoutRecipe(value, path));
    after = JSON.stringify(next) === JSON.stringify(value)
      ? before
      : JSON.stringify(next, null, 2) + "\n";
  }
  // Unchanged content is no change, whatever the formatting of the file.
  let changed = before !== after;
  if (changed && before !== null && after !== null && recipe.kind === "settings") {
    try {
      changed = JSON.stringify(JSON.parse(before)) !== JSON.stringify(JSON.parse(after));
    } catch { /* an unparsable file is replaced only through parseSettings, which threw */ }
  }
  if (
    recipe.kind === "file" && action === "uninstall" && before !== null &&
    before !== recipe.content && !isOldRosterExtension(before)
  ) {
    throw new RosterError(
      `Not removing the extension: it is not roster's recipe (edit or remove it yourself): ${path}`,
    );
  }
  return { harness, action, path, before, after: changed ? after : before, changed };
}

function isOldRosterExtension(text: string): boolean {
  return /pi\.exec\("roster", \["register"/.test(text);
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

/**
 * Writes the change: the previous file is copied to `<path>.roster-backup` first, then the new
 * text goes to a temp file in the same directory, renamed over the old one (same mode), so a
 * reader never sees half a file. A symlinked settings file is written where the link points.
 */
export function applyChange(change: HookChange): string | null {
  if (!change.changed) return null;
  let target = change.path;
  try {
    if (Deno.lstatSync(target).isSymlink) target = Deno.realPathSync(target);
  } catch { /* missing: created below */ }
  const dir = target.slice(0, target.lastIndexOf("/")) || "/";
  let backup: string | null = null;
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    let mode = 0o600;
    if (change.before !== null) {
      mode = (Deno.statSync(target).mode ?? 0o600) & 0o777;
      backup = `${target}${BACKUP_SUFFIX}`;
      Deno.writeTextFileSync(backup, change.before, { mode });
      Deno.chmodSync(backup, mode);
    }
    if (change.after === null) {
      Deno.removeSync(target);
      return backup;
    }
    const temp = `${dir}/.${target.slice(dir.length + 1)}.roster-${Deno.pid}.tmp`;
    try {
      Deno.writeTextFileSync(temp, change.after, { mode, createNew: true });
      Deno.chmodSync(temp, mode);
      Deno.renameSync(temp, target);
    } catch (err) {
      try {
        Deno.removeSync(temp);
      } catch { /* never created */ }
      throw err;
    }
  } catch (err) {
    if (err instanceof RosterError) throw err;
    throw new RosterError(`Cannot write the settings file: ${describe(err)}: ${target}`);
  }
  return backup;
}

/** Whose settings a file is: the user's (home directory) or a project's. */
export type HookScope = "user" | "project";

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

export function inspectHooks(file: HookFile): HookReport {
  const { harness, scope, path } = file;
  const recipe = RECIPES[harness];
  let text: string | null;
  try {
    text = readText(path);
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
    const state = hookState(parseSettings(text, path), recipe, path);
    return { harness, scope, path, state, detail: null };
  } catch (err) {
    return { harness, scope, path, state: "invalid", detail: (err as Error).message };
  }
}

export { recipeText };
