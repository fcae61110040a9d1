/**
 * The Claude Code recipe's hooks and a stand-in `claude` to run them under: what the recipe
 * tests share (tests/recipes/claude_test.ts, and tests/serial/ for real PID reuse).
 */
import { rosterJson, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { Harness, hookCommands, installRoster, recipe, recipeEnv, standIn } from "./harness.ts";

const config = recipe("claude");
export const [START] = hookCommands(config, "SessionStart");
export const [END] = hookCommands(config, "SessionEnd");
export const SESSION = "5f0c2b1e-0000-4000-8000-000000000001";

/** A temp dir with `roster` and a stand-in `claude` in it; `start` runs a new `claude`. */
export async function setUp() {
  const dir = await tempDir("roster-recipe-");
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  const claude = standIn(dir.path, "claude");
  const env = recipeEnv(dir.path, home, { CLAUDE_CODE_SESSION_ID: SESSION });
  const start = () => Harness.start(claude, env, dir.path);
  const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);
  return { dir, home, start, rows };
}
