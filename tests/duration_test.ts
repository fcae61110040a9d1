import { assertEquals, assertThrows } from "./assert.ts";
import { delay, formatAge, isoTime, parseDuration } from "../src/time.ts";
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

Deno.test("isoTime writes what Date's toISOString writes", () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const edges = [
    0,
    1,
    999,
    86_399_999,
    Date.UTC(2000, 1, 29, 23, 59, 59, 999), // a leap day of a century divisible by 400
    Date.UTC(2100, 1, 28, 12),
    Date.UTC(2100, 2, 1), // 2100 is no leap year
    Date.UTC(2024, 1, 29),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1), // Date's six-digit year from here
    1.7, // the fraction is dropped
    1_796_109_917_608.9,
    -1, // before 1970: Date's own
    -62_198_755_200_000,
  ];
  for (const ms of edges) assertEquals(isoTime(ms), iso(ms), `${ms}`);
  let seed = 42;
  for (let i = 0; i < 100_000; i++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const ms = Math.floor((seed / 2_147_483_648) * Date.UTC(9999, 11, 31));
    assertEquals(isoTime(ms), iso(ms));
  }
  assertThrows(() => isoTime(NaN), RangeError);
});

Deno.test("delay", async (t) => {
  await t.step("a pause longer than one timer holds does not end at once", async () => {
    const long = delay(2 ** 31 + 1_000);
    let ended = false;
    long.done.then(() => ended = true);
    await delay(100).done;
    assertEquals(ended, false);
    long.cancel();
  });
  await t.step("a ten-year pause is re-armed in steps a timer holds, and ends", async () => {
    // A fake clock: each timer fires at once and moves the clock on by its delay.
    const realTimeout = globalThis.setTimeout;
    const realNow = performance.now;
    let now = 0;
    const steps: number[] = [];
    performance.now = () => now;
    globalThis.setTimeout = ((fn: () => void, ms: number) => {
      steps.push(ms);
      now += ms;
      queueMicrotask(fn);
      return 0;
    }) as unknown as typeof setTimeout;
    try {
      const tenYears = 10 * 365 * 86_400_000;
      await delay(tenYears).done;
      assertEquals(steps.every((ms) => ms >= 0 && ms <= 2 ** 31 - 1), true);
      assertEquals(steps.reduce((a, b) => a + b, 0), tenYears);
      assertEquals(steps.length, Math.ceil(tenYears / (2 ** 31 - 1)));
    } finally {
      globalThis.setTimeout = realTimeout;
      performance.now = realNow;
    }
  });
  await t.step("a short pause ends after its time", async () => {
    const started = performance.now();
    await delay(50).done;
    assertEquals(performance.now() - started >= 49, true);
  });
});
