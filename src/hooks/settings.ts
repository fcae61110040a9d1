/**
 * Merging a recipe into a harness's settings, pure: our hook groups are added to the `hooks`
 * object next to whatever else is there, found again by their command (`roster register` or
 * `roster unregister`), replaced when they differ, and removed on uninstall, leaving every
 * other key and hook exactly as it was.
 */
import { type HookGroup, isRosterCommand, type SettingsRecipe } from "./recipes.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** How the hooks of one harness compare with the current recipe. */
export type HookState = "installed" | "outdated" | "missing";

export class SettingsShapeError extends Error {}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A group of ours: every command in it runs roster register/unregister. */
function isOurs(group: Json): boolean {
  if (!isObj(group) || !Array.isArray(group.hooks) || group.hooks.length === 0) return false;
  return group.hooks.every((h) => isObj(h) && isRosterCommand(h.command));
}

function hooksOf(settings: Json, path: string): Obj | null {
  if (!isObj(settings)) throw new SettingsShapeError(`not a JSON object: ${path}`);
  const hooks = settings.hooks;
  if (hooks === undefined) return null;
  if (!isObj(hooks)) throw new SettingsShapeError(`"hooks" is not an object: ${path}`);
  for (const [event, list] of Object.entries(hooks)) {
    if (!Array.isArray(list)) {
      throw new SettingsShapeError(`"hooks.${event}" is not a list: ${path}`);
    }
  }
  return hooks;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether the settings hold the recipe's hooks, older ones of ours, or none. */
export function hookState(settings: Json, recipe: SettingsRecipe, path = "settings"): HookState {
  const hooks = hooksOf(settings, path);
  let anyOurs = false;
  let all = true;
  for (const [event, group] of Object.entries(recipe.events)) {
    const list = (hooks?.[event] ?? []) as Json[];
    const ours = list.filter(isOurs);
    if (ours.length > 0) anyOurs = true;
    if (!(ours.length === 1 && same(ours[0], group))) all = false;
  }
  // An event the recipe no longer has, still holding a hook of ours, is out of date too.
  for (const [event, list] of Object.entries(hooks ?? {})) {
    if (!(event in recipe.events) && (list as Json[]).some(isOurs)) {
      anyOurs = true;
      all = false;
    }
  }
  return all ? "installed" : anyOurs ? "outdated" : "missing";
}

/** The settings with the recipe's hooks in place of any of ours; other entries untouched. */
export function withRecipe(settings: Json, recipe: SettingsRecipe, path = "settings"): Json {
  const hooks = hooksOf(settings, path) ?? {};
  const next: Obj = {};
  for (const [event, list] of Object.entries(hooks)) {
    const kept = (list as Json[]).filter((g) => !isOurs(g));
    if (kept.length > 0 || event in recipe.events) next[event] = kept;
  }
  for (const [event, group] of Object.entries(recipe.events)) {
    next[event] = [...((next[event] ?? []) as Json[]), group as unknown as Json];
  }
  return { ...(settings as Obj), hooks: next };
}

/**
 * The settings without any hook of ours. An event list left empty is removed, and so is a
 * `hooks` object left empty, so installing then uninstalling gives back the original.
 */
export function withoutRecipe(settings: Json, path = "settings"): Json {
  const hooks = hooksOf(settings, path);
  if (hooks === null) return settings;
  const next: Obj = {};
  for (const [event, list] of Object.entries(hooks)) {
    const had = list as Json[];
    const kept = had.filter((g) => !isOurs(g));
    if (kept.length > 0 || had.length === 0) next[event] = kept;
  }
  const out: Obj = { ...(settings as Obj) };
  if (Object.keys(next).length === 0) delete out.hooks;
  else out.hooks = next;
  return out;
}

/** The groups of ours an event holds (for doctor's detail). */
export function ourGroups(settings: Json, event: string): HookGroup[] {
  const hooks = isObj(settings) && isObj(settings.hooks) ? settings.hooks : {};
  const list = hooks[event];
  return Array.isArray(list) ? list.filter(isOurs) as unknown as HookGroup[] : [];
}

export type { Json };
