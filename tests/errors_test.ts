import { assertEquals } from "./assert.ts";
import {
  CannotTellError,
  ioError,
  NoSuchProcessError,
  RosterError,
  UsageError,
} from "../src/errors.ts";
import { EXIT, VERDICT_EXIT } from "../src/exit.ts";

Deno.test("errors carry their exit codes", () => {
  assertEquals(new RosterError("x").exitCode, 1);
  assertEquals(new UsageError("x").exitCode, 2);
  assertEquals(new NoSuchProcessError(42).exitCode, 3);
  assertEquals(new NoSuchProcessError(42).message, "No such process: 42");
  assertEquals(new CannotTellError("x").exitCode, 4);
});

Deno.test("ioError names what failed, the OS's reason, then the path", () => {
  const cases: [unknown, string][] = [
    [new Deno.errors.NotFound("x"), "no such file or directory"],
    [new Deno.errors.PermissionDenied("x"), "permission denied"],
    [new Deno.errors.NotADirectory("x"), "not a directory"],
    [new Error("No space left on device (os error 28)"), "no space left on device"],
  ];
  for (const [err, reason] of cases) {
    const e = ioError("Could not write", "/p", err);
    assertEquals([e.message, e.exitCode], [`Could not write: ${reason}: /p`, 1]);
  }
  const usage = new UsageError("u");
  assertEquals(ioError("x", "/p", usage), usage);
});

Deno.test("every exit code in src/exit.ts is in the README's table, and no other", () => {
  const readme = Deno.readTextFileSync(new URL("../README.md", import.meta.url));
  const table = [...readme.matchAll(/^\| (\d+) +\| /gm)].map((m) => Number(m[1]));
  const codes = [...Object.values(EXIT), ...Object.values(VERDICT_EXIT)];
  assertEquals(
    [...new Set(table)].sort((a, b) => a - b),
    [...new Set(codes)].sort((a, b) => a - b),
  );
});
