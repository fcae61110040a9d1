/** The benchmark's statistics (scripts/stats.ts): pure, so every OS runs them. */
import { assertEquals, assertThrows } from "../assert.ts";
import { median, pairedRatio } from "../../scripts/stats.ts";

Deno.test("stats", async (t) => {
  await t.step("median: the middle sample, or the mean of the middle two", () => {
    assertEquals(median([3, 1, 2]), 2);
    assertEquals(median([4, 1, 3, 2]), 2.5);
    assertEquals(median([7]), 7);
  });

  await t.step("pairedRatio: round by round, so a round's drift cancels", () => {
    // Every hook run costs 1.2x the hello world of its round; from the third round's hook
    // on, the machine is three times as slow (another tenant started between the two runs).
    const floor = [10, 10, 10, 30, 30];
    const hook = [12, 12, 36, 36, 36];
    assertEquals(pairedRatio([12, 12, 12, 36, 36], floor), 1.2);
    // One round's ratio is off (3.6x), the median of the rounds is not.
    assertEquals(pairedRatio(hook, floor), 1.2);
    // The ratio of the two medians takes the loaded hook against the quiet floor.
    assertEquals(median(hook) / median(floor), 3.6);
  });

  await t.step("pairedRatio: refuses samples of different lengths, or none", () => {
    const uneven = assertThrows(() => pairedRatio([1, 2], [1]), RangeError);
    assertEquals(uneven.message, "Paired samples must be two of one length: got 2 and 1");
    assertEquals(
      assertThrows(() => pairedRatio([], []), RangeError).message.endsWith("0 and 0"),
      true,
    );
  });
});
