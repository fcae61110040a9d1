/**
 * `roster hooks install|uninstall|show` end to end, against settings files that already hold
 * other hooks and settings: merged, never clobbered, backed up, idempotent, and undone by
 * uninstall. The recipe is the one module docs/hooks.md shows (checked here too).
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";
import { RECIPES, recipeText } from "../../src/hooks/recipes.ts";
import { recipe as docRecipe } from "../recipes/harness.ts";

const EXISTING = {
  model: "opus",
  permissions: { allow: ["Bash(ls:*)"] },
  hooks: {
    SessionStart: [{ hooks: [{ type: "command", command: "echo mine" }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "audit.sh" }] }],
  },
};

Deno.test("roster hooks install merges into an existing Claude Code settings file", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/userhome`;
  const settings = `${home}/.claude/settings.json`;
  await Deno.mkdir(`${home}/.claude`, { recursive: true });
  const original = JSON.stringify(EXISTING, null, 4) + "\n";
  await Deno.writeTextFile(settings, original);
  await Deno.chmod(settings, 0o640);
  const env = { HOME: home };
  const read = async () => JSON.parse(await Deno.readTextFile(settings));

  await t.step("--dry-run prints the merged file and writes nothing", async () => {
    const r = await roster(["hooks", "install", "claude", "--dry-run"], { env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await Deno.readTextFile(settings), original);
    assertEquals(JSON.parse(r.stdout).hooks.SessionEnd.length, 1);
  });

  await t.step("install: the recipe's hooks are added next to the user's", async () => {
    const rec0 = RECIPES.claude;
    assert(rec0.kind === "settings");
    const r = await roster(["hooks", "install", "claude"], { env });
    assertEquals(r.code, 0, r.stderr);
    assertMatch(
      r.stdout,
      /^Installed roster's claude hooks in .*settings\.json \(backup: .*\.roster-backup\)\n$/,
    );
    const now = await read();
    assertEquals(now.model, "opus");
    assertEquals(now.permissions, EXISTING.permissions);
    // The user's own PreToolUse hook first, the recipe's (roster activity) after it.
    assertEquals(now.hooks.PreToolUse, [...EXISTING.hooks.PreToolUse, rec0.events.PreToolUse]);
    assertEquals(now.hooks.SessionStart[0], EXISTING.hooks.SessionStart[0]);
    assertEquals(now.hooks.SessionStart.length, 2);
    const rec = RECIPES.claude;
    assert(rec.kind === "settings");
    assertEquals(now.hooks.SessionStart[1], rec.events.SessionStart);
    assertEquals(now.hooks.SessionEnd, [rec.events.SessionEnd]);
    assertEquals(await Deno.readTextFile(`${settings}.roster-backup`), original);
    assertEquals((await Deno.stat(settings)).mode! & 0o777, 0o640);
  });

  await t.step("install again changes nothing", async () => {
    const before = await Deno.readTextFile(settings);
    const r = await roster(["hooks", "install", "claude", "--json"], { env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout).changed, false);
    assertEquals(await Deno.readTextFile(settings), before);
  });

  await t.step("an older roster hook is replaced, not duplicated", async () => {
    const now = await read();
    now.hooks.SessionStart[1] = { hooks: [{ type: "command", command: "roster register" }] };
    await Deno.writeTextFile(settings, JSON.stringify(now));
    const r = await roster(["hooks", "install", "claude", "--quiet"], { env });
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    assertEquals((await read()).hooks.SessionStart.length, 2);
  });

  await t.step("uninstall gives back the user's settings", async () => {
    const r = await roster(["hooks", "uninstall", "claude"], { env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await read(), EXISTING);
  });

  await t.step("a settings file that is not JSON is refused and left alone", async () => {
    await Deno.writeTextFile(settings, "{ not json");
    const r = await roster(["hooks", "install", "claude"], { env });
    assertEquals(r.code, 1);
    assertMatch(r.stderr, /^roster: Cannot merge into the settings file: not valid JSON/);
    assertEquals(await Deno.readTextFile(settings), "{ not json");
  });
});

Deno.test("roster hooks: each harness, --project, show", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/userhome`;
  const project = `${dir.path}/project`;
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(project, { recursive: true });
  const env = { HOME: home };

  for (const harness of ["claude", "codex", "gemini", "pi"] as const) {
    await t.step(`${harness}: install into a fresh home, then uninstall removes it`, async () => {
      const path = `${home}/${RECIPES[harness].userPath}`;
      const r = await roster(["hooks", "install", harness, "--json"], { env });
      assertEquals(r.code, 0, r.stderr);
      assertEquals(JSON.parse(r.stdout).path, path);
      const text = await Deno.readTextFile(path);
      if (harness === "pi") assertEquals(text, recipeText(RECIPES.pi));
      else assertEquals(JSON.parse(text), JSON.parse(recipeText(RECIPES[harness])));
      const u = await roster(["hooks", "uninstall", harness], { env });
      assertEquals(u.code, 0, u.stderr);
      // A file roster made is gone with its hooks, and so is the directory it made for it.
      assertEquals(await Deno.stat(path).then(() => true, () => false), false);
    });
  }

  await t.step("--project writes under the current directory", async () => {
    const r = await roster(["hooks", "install", "codex", "--project"], { env, cwd: project });
    assertEquals(r.code, 0, r.stderr);
    assert(await Deno.stat(`${project}/.codex/hooks.json`).then(() => true));
  });

  await t.step("show prints the recipe", async () => {
    const r = await roster(["hooks", "show", "gemini"], { env });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, recipeText(RECIPES.gemini));
  });

  await t.step("an unknown harness is a usage error", async () => {
    const r = await roster(["hooks", "install", "emacs"], { env });
    assertEquals(r.code, 2);
    assertMatch(r.stderr, /Invalid HARNESS: expected one of claude, codex, pi, gemini/);
  });
});

Deno.test("Claude Code's start hook says idle on startup, resume and /clear, not after compaction", () => {
  // Claude Code compacts in the middle of a turn and works on: idle there would be wrong.
  const recipe = RECIPES.claude;
  assert(recipe.kind === "settings");
  const start = recipe.events.SessionStart;
  assertEquals(start.matcher?.split("|").sort(), ["clear", "resume", "startup"]);
  assertMatch(start.hooks[0].command, /roster activity idle/);
});

Deno.test("docs/hooks.md shows the recipes `roster hooks install` writes", () => {
  for (const harness of ["claude", "codex", "pi", "gemini"] as const) {
    let doc: string;
    try {
      doc = docRecipe(harness);
    } catch {
      if (harness === "gemini") continue; // docs/hooks.md has no Gemini recipe yet
      throw new Error(`docs/hooks.md lacks the ${harness} recipe`);
    }
    const mine = recipeText(RECIPES[harness]);
    if (harness === "pi") assertEquals(doc, mine);
    else assertEquals(JSON.parse(doc), JSON.parse(mine), `the ${harness} recipe`);
  }
});
