/**
 * main.ts run as if on another OS ($ROSTER_TEST_AS_OS: darwin or windows), for
 * tests/scripts/baked_permissions_test.ts: `Deno.build.os` is that OS's before any module of
 * roster loads, so the code paths that OS's binary takes run here, under its permission set.
 * Its process backend finds no libSystem or kernel32 on Linux and falls back as it would there.
 */
const os = Deno.env.get("ROSTER_TEST_AS_OS");
if (os !== undefined) {
  Object.defineProperty(Deno, "build", { value: Object.freeze({ ...Deno.build, os }) });
}
const { main } = await import("../../main.ts");
Deno.exit(await main(Deno.args));
