/**
 * `roster hooks install|uninstall|show HARNESS`: puts the recipe of src/hooks/recipes.ts into
 * the harness's settings (user's, or with --project the current directory's), merged with
 * everything else there, backed up and written atomically; or takes it out; or prints it.
 */
import { notOneOf, UsageError } from "../../errors.ts";
import { applyChange, type HookAction, planChange, settingsPath } from "../../hooks/install.ts";
import { type Harness, HOOK_HARNESSES, RECIPES, recipeText } from "../../hooks/recipes.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";

const ACTIONS = ["install", "uninstall", "show"] as const;

function userHome(): string {
  const home = Deno.env.get(Deno.build.os === "windows" ? "USERPROFILE" : "HOME");
  if (!home) throw new UsageError("Cannot find the home directory: HOME is not set");
  return home;
}

export function run(ctx: Context, args: Parsed): number {
  const [action, harness] = args.positionals;
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw notOneOf("ACTION", ACTIONS, action);
  }
  if (!(HOOK_HARNESSES as readonly string[]).includes(harness)) {
    throw notOneOf("HARNESS", HOOK_HARNESSES, harness);
  }
  const h = harness as Harness;
  if (action === "show") {
    const recipe = RECIPES[h];
    if (ctx.json) {
      ctx.printJson({ harness: h, kind: recipe.kind, content: recipeText(recipe) });
    } else ctx.out(recipeText(recipe));
    return 0;
  }
  const project = args.has("project");
  const base = project ? Deno.cwd() : userHome();
  const scope = project ? "project" : "user";
  const path = settingsPath(h, base, project);
  const dryRun = args.has("dry-run");
  const change = dryRun
    ? planChange(h, action as HookAction, path, scope, base)
    : applyChange(h, action as HookAction, path, scope, base);
  const backup = change.backup;
  // A dry run's output is its whole point; otherwise --quiet silences the JSON too.
  if (args.has("quiet") && !dryRun) return 0;
  if (ctx.json) {
    ctx.printJson({
      harness: h,
      action,
      path,
      changed: change.changed,
      dry_run: dryRun,
      backup,
      content: change.after,
    });
  } else if (dryRun) {
    ctx.out(change.after ?? `(${path} would be removed)`);
  } else {
    const done = action === "install" ? "Installed" : "Removed";
    const where = action === "install" ? "in" : "from";
    ctx.out(
      !change.changed
        ? `Nothing to change: ${path} already ${
          action === "install" ? "has" : "lacks"
        } roster's ${h} hooks`
        : `${done} roster's ${h} hooks ${where} ${path}` + (
          change.restored
            ? ` (the original is back from ${backup}, which is removed)`
            : backup
            ? ` (backup: ${backup})`
            : ""
        ),
    );
    if (h === "codex" && action === "install" && change.changed) {
      // Codex 0.169 runs a hook only once a person trusted it; codex exec skips it silently.
      ctx.out(
        "Codex runs these hooks only once you trust them: start codex in a terminal and choose " +
          '"Trust all and continue" at "Hooks need review" (codex exec skips untrusted hooks ' +
          "silently; in CI: codex exec --dangerously-bypass-hook-trust). roster doctor checks.",
      );
    }
  }
  return 0;
}
