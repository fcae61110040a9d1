import { assertEquals, assertThrows } from "./assert.ts";
import { formatAge, parseDuration } from "../src/time.ts";
import { UsageError } from "../src/errors.ts";

Deno.test("parseDuration", async (t) => {
  await t.step("accepts the documented forms", () => {
    assertEquals(parseDuration("90s", "--x"), 90_000);
    assertEquals(parseDuration("30m", "--x"), 1_800_000);
    assertEquals(parseDuration("12h", "--x"), 43_200_000);
    assertEquals(parseDuration("7d", "--x"), 604_800_000);
    assertEquals(parseDuration("0s", "--x", true), 0);
  });
  for (
    const bad of ["", "0s", "-1h", "1y", "1.5h", "h", "10", " 1h", "1h ", "1H", "99999999999d"]
  ) {
    await t.step(`rejects ${JSON.stringify(bad)} naming the flag`, () => {
      const err = assertThrows(() => parseDuration(bad, "--older-than"), UsageError);
      assertEquals(err.exitCode, 2);
      assertEquals(err.message.startsWith("Invalid --older-than: "), true);
    });
  }
});

Deno.test("formatAge", () => {
  assertEquals(formatAge(5_000), "5s");
  assertEquals(formatAge(600_000), "10m");
  assertEquals(formatAge(3 * 3_600_000), "3h");
  assertEquals(formatAge(9 * 86_400_000), "9d");
  assertEquals(formatAge(-5), "0s");
});
