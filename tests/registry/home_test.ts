import { assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { checkHome, type HomeEnv, resolveHome } from "../../src/registry/home.ts";
import { UsageError } from "../../src/errors.ts";
import { tempDir } from "../helpers.ts";

const env = (os: HomeEnv["os"], vars: Record<string, string>): HomeEnv => ({
  os,
  get: (n) => vars[n],
});

Deno.test("resolveHome precedence and platform defaults", async (t) => {
  await t.step("--home beats ROSTER_HOME beats the default", () => {
    const e = env("linux", { ROSTER_HOME: "/r", HOME: "/h" });
    assertEquals(resolveHome("/f", e), { path: "/f", source: "--home" });
    assertEquals(resolveHome(undefined, e), { path: "/r", source: "ROSTER_HOME" });
  });
  await t.step("Linux: XDG_STATE_HOME when absolute, else ~/.local/state", () => {
    assertEquals(
      resolveHome(undefined, env("linux", { XDG_STATE_HOME: "/x", HOME: "/h" })).path,
      "/x/roster",
    );
    assertEquals(
      resolveHome(undefined, env("linux", { XDG_STATE_HOME: "rel", HOME: "/h" })).path,
      "/h/.local/state/roster",
    );
  });
  await t.step("macOS and Windows", () => {
    assertEquals(
      resolveHome(undefined, env("darwin", { HOME: "/Users/u" })).path,
      "/Users/u/Library/Application Support/roster",
    );
    assertEquals(
      resolveHome(undefined, env("windows", { LOCALAPPDATA: "C:\\L" })).path,
      "C:\\L\\roster",
    );
  });
  await t.step("empty --home and no home at all are usage errors", () => {
    assertThrows(() => resolveHome("", env("linux", {})), UsageError);
    assertMatch(
      assertThrows(() => resolveHome(undefined, env("linux", {})), UsageError).message,
      /pass --home DIR/,
    );
  });
});

Deno.test("checkHome", async (t) => {
  await using dir = await tempDir();
  await t.step("a directory or a missing path passes", () => {
    assertEquals(checkHome({ path: dir.path, source: "--home" }), dir.path);
    assertEquals(checkHome({ path: `${dir.path}/new`, source: "--home" }), `${dir.path}/new`);
  });
  await t.step("a file is refused, naming the source", () => {
    Deno.writeTextFileSync(`${dir.path}/f`, "");
    const err = assertThrows(
      () => checkHome({ path: `${dir.path}/f`, source: "ROSTER_HOME" }),
      UsageError,
    );
    assertMatch(err.message, /^Invalid ROSTER_HOME: not a directory: /);
  });
});
