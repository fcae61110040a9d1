/**
 * Merging a recipe into a harness's settings, pure: our hook groups are added to the `hooks`
 * object next to whatever else is there, found again by their command (`roster register` or
 * `roster unregister`), replaced when they differ, and removed on uninstall. Edits are made to
 * the text (src/hooks/jsonc.ts), so every other key, hook, comment and byte stays as it was.
 */
import { type HookGroup, isRosterCommand, type SettingsRecipe } from "./recipes.ts";
import {
  append,
  type Dialect,
  type Json,
  JsonSyntaxError,
  memberOf,
  type Node,
  parse,
  remove,
  valueOf,
} from "./jsonc.ts";

type Obj = { [k: string]: Json };

/** How the hooks of one harness compare with the current recipe. */
export type HookState = "installed" | "outdated" | "missing";

/** A settings file roster cannot merge into (not JSON, not an object, hooks of another shape). */
export class SettingsShapeError extends Error {}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A group of ours: every command in it runs roster register/unregister. */
function isOurs(group: Json): boolean {
  if (!isObj(group) || !Array.isArray(group.hooks) || group.hooks.length === 0) return false;
  return group.hooks.every((h) => isObj(h) && isRosterCommand(h.command));
}

/** A settings file's text, parsed and checked: an object whose `hooks` holds lists. */
export interface Settings {
  text: string;
  root: Node;
  value: Obj;
}

export function readSettings(text: string, dialect: Dialect, path = "settings"): Settings {
  let root: Node;
  try {
    root = parse(text, dialect);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    throw new SettingsShapeError(`not valid JSON (${err.message}): ${path}`);
  }
  const value = valueOf(text, root);
  if (!isObj(value)) throw new SettingsShapeError(`not a JSON object: ${path}`);
  const hooks = value.hooks;
  if (hooks !== undefined) {
    if (!isObj(hooks)) throw new SettingsShapeError(`"hooks" is not an object: ${path}`);
    for (const [event, list] of Object.entries(hooks)) {
      if (!Array.isArray(list)) {
        throw new SettingsShapeError(`"hooks.${event}" is not a list: ${path}`);
      }
    }
  }
  return { text, root, value };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether the settings hold the recipe's hooks, older ones of ours, or none. */
export function hookState(settings: Settings, recipe: SettingsRecipe): HookState {
  const hooks = (settings.value.hooks ?? {}) as { [event: string]: Json[] };
  let anyOurs = false;
  let all = true;
  for (const [event, group] of Object.entries(recipe.events)) {
    const ours = (hooks[event] ?? []).filter(isOurs);
    if (ours.length > 0) anyOurs = true;
    if (!(ours.length === 1 && same(ours[0], group))) all = false;
  }
  // An event the recipe no longer has, still holding a hook of ours, is out of date too.
  for (const [event, list] of Object.entries(hooks)) {
    if (!(event in recipe.events) && list.some(isOurs)) {
      anyOurs = true;
      all = false;
    }
  }
  return all ? "installed" : anyOurs ? "outdated" : "missing";
}

/** Where a group of ours lies: its event's member, the list, and its index there. */
function findOurs(s: Settings): { hooks: Node; event: number; list: Node; k: number } | null {
  const hooks = memberOf(s.root, "hooks")?.value;
  if (hooks?.kind !== "object") return null;
  for (let e = 0; e < hooks.members.length; e++) {
    const list = hooks.members[e].value;
    if (list.kind !== "array") continue;
    const k = list.items.findIndex((item) => isOurs(valueOf(s.text, item)));
    if (k >= 0) return { hooks, event: e, list, k };
  }
  return null;
}

/**
 * The text without any group of ours. An event list left empty by that is removed, and so is a
 * `hooks` object left empty, so installing into a file without them then uninstalling gives
 * back the same bytes; but not one the user's `original` (the backup install made) already had:
 * an empty list or `hooks` of theirs, a comment in it, stays.
 */
export function uninstallText(
  text: string,
  dialect: Dialect,
  path = "settings",
  original: string | null = null,
): string {
  let s = readSettings(text, dialect, path);
  const theirs = original === null ? null : containersOf(original, dialect);
  for (let found = findOurs(s); found !== null; found = findOurs(s)) {
    const { hooks, event, list, k } = found;
    const eventName = hooks.kind === "object" ? hooks.members[event].key : "";
    let next: string;
    if (list.kind === "array" && (list.items.length > 1 || theirs?.events.has(eventName))) {
      next = remove(s.text, list, k);
    } else if (hooks.kind === "object" && (hooks.members.length > 1 || theirs?.hooks)) {
      next = remove(s.text, hooks, event);
    } else {
      const root = s.root;
      next = remove(
        s.text,
        root,
        root.kind === "object" ? root.members.lastIndexOf(memberOf(root, "hooks")!) : 0,
      );
    }
    s = readSettings(next, dialect, path);
  }
  return s.text;
}

/** Whether a settings text has a `hooks` object, and the events it lists; none if unreadable. */
function containersOf(text: string, dialect: Dialect): { hooks: boolean; events: Set<string> } {
  try {
    const hooks = memberOf(readSettings(text, dialect).root, "hooks")?.value;
    if (hooks?.kind !== "object") return { hooks: false, events: new Set() };
    return { hooks: true, events: new Set(hooks.members.map((m) => m.key)) };
  } catch {
    return { hooks: false, events: new Set() };
  }
}

/** A new settings file holding only the recipe's hooks. */
export function recipeFile(recipe: SettingsRecipe): string {
  const hooks: Record<string, HookGroup[]> = {};
  for (const [event, group] of Object.entries(recipe.events)) hooks[event] = [group];
  return JSON.stringify({ hooks }, null, 2) + "\n";
}

/**
 * The text with the recipe's hooks in place of any of ours; every other byte kept. An empty
 * (or all-blank) file becomes the recipe's own file; one already holding the recipe is returned
 * as it is.
 */
export function installText(
  text: string,
  recipe: SettingsRecipe,
  dialect: Dialect,
  path = "settings",
): string {
  if (text.trim() === "") return recipeFile(recipe);
  const first = readSettings(text, dialect, path);
  if (hookState(first, recipe) === "installed") return text;
  let s = readSettings(uninstallText(text, dialect, path), dialect, path);
  for (const [event, group] of Object.entries(recipe.events)) {
    const hooks = memberOf(s.root, "hooks")?.value;
    let next: string;
    if (hooks === undefined) next = append(s.text, s.root, { [event]: [group] }, "hooks");
    else {
      const list = memberOf(hooks, event)?.value;
      next = list === undefined
        ? append(s.text, hooks, [group], event)
        : append(s.text, list, group);
    }
    s = readSettings(next, dialect, path);
  }
  return s.text;
}

/** Whether the text is an object with no members and no comments: what is left of a file roster made. */
export function isEmptyObject(text: string): boolean {
  return /^\s*\{\s*\}\s*$/.test(text);
}

/** The groups of ours an event holds (for doctor's detail). */
export function ourGroups(settings: Settings, event: string): HookGroup[] {
  const hooks = isObj(settings.value.hooks) ? settings.value.hooks : {};
  const list = hooks[event];
  return Array.isArray(list) ? list.filter(isOurs) as unknown as HookGroup[] : [];
}

export type { Dialect, Json };
