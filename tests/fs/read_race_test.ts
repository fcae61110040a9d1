/**
 * A small file replaced by rename while it is read (every record, plan and lock is written
 * so) reads as its old or its new text, never as a damaged file: two registers of one session
 * hold the store's lock shared, and one read as damaged what the other was replacing, then
 * wrote the record anew and lost what the session's hooks had recorded (seen under load).
 */
import { assertEquals } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import { readSmallFile } from "../../src/fs/read.ts";

Deno.test("readSmallFile: a file replaced by rename while it is read is read, never damaged", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/record.json`;
  Deno.writeTextFileSync(path, "{}\n");
  // Replaces the file by rename as fast as a shell can, until the test ends it.
  const renamer = new Deno.Command("sh", {
    args: [
      "-c",
      `cd '${dir.path}' && while :; do printf '{}\\n' > r.tmp && mv r.tmp record.json; done`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const problems = new Map<string, number>();
  try {
    // Enough reads that, read once each, dozens land inside a rename (a read takes
    // microseconds, a rename comes every millisecond or so); bounded by count, not time.
    for (let i = 0; i < 20_000; i++) {
      const read = readSmallFile(path);
      const what = read === null ? "missing" : read.ok ? "" : read.problem;
      if (what !== "") problems.set(what, (problems.get(what) ?? 0) + 1);
    }
  } finally {
    renamer.kill("SIGKILL");
    await renamer.status;
  }
  assertEquals(Object.fromEntries(problems), {});
});
