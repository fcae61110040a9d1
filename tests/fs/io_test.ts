/** The byte loops every read and write shares (src/fs/io.ts), and replacing a file atomically. */
import { assertEquals, assertThrows } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import { readFully, readUpTo, writeAll } from "../../src/fs/io.ts";
import { replaceAtomically } from "../../src/fs/write.ts";

/** A source that hands out `data` at most `step` bytes a read, as a pipe or a slow disk may. */
function trickle(data: Uint8Array, step: number) {
  let at = 0;
  return {
    reads: 0,
    readSync(p: Uint8Array): number | null {
      this.reads++;
      if (at >= data.length) return null;
      const n = Math.min(step, p.length, data.length - at);
      p.set(data.subarray(at, at + n));
      at += n;
      return n;
    },
  };
}

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 251);

Deno.test("io: short writes and short reads are finished, never taken for the whole", async (t) => {
  await t.step("writeAll: a sink that takes 3 bytes a call gets every byte, in order", () => {
    const got: number[] = [];
    const sink = {
      writeSync(p: Uint8Array) {
        const n = Math.min(3, p.length);
        got.push(...p.subarray(0, n));
        return n;
      },
    };
    writeAll(sink, bytes(100));
    assertEquals(got, [...bytes(100)]);
    got.length = 0;
    writeAll(sink, "é✓");
    assertEquals(new TextDecoder().decode(Uint8Array.from(got)), "é✓");
  });
  await t.step("readFully: fills the buffer from 7-byte reads, stops at the end", () => {
    const into = new Uint8Array(64);
    assertEquals(readFully(trickle(bytes(50), 7), into), 50);
    assertEquals(into.subarray(0, 50), bytes(50));
    assertEquals(readFully(trickle(bytes(100), 7), into), 64, "no more than the buffer");
  });
  await t.step("readFully: stops once `enough` bytes are in (no read more for the end)", () => {
    const source = trickle(bytes(100), 10);
    assertEquals(readFully(source, new Uint8Array(64), 20), 20);
    assertEquals(source.reads, 2);
  });
  await t.step("readUpTo: the whole source, or one byte past the cap to say it was passed", () => {
    const all = trickle(bytes(200_000), 70_000);
    assertEquals(readUpTo((b) => all.readSync(b)), bytes(200_000));
    const capped = trickle(bytes(200_000), 70_000);
    assertEquals(readUpTo((b) => capped.readSync(b), 1000).length, 1001);
  });
});

Deno.test({
  name: "replaceAtomically: the target replaced whole, never written through the temp name",
  ignore: Deno.build.os === "windows",
  async fn(t) {
    await using dir = await tempDir();
    const target = `${dir.path}/queue`;
    const temp = `${dir.path}/queue.tmp`;
    Deno.writeTextFileSync(target, "old\n");
    await t.step("what fill writes, in chunks, becomes the file; the temp name is gone", () => {
      replaceAtomically(target, (s) => {
        writeAll(s, "a\n");
        writeAll(s, "b\n");
      }, { durable: false, temp });
      assertEquals(Deno.readTextFileSync(target), "a\nb\n");
      assertThrows(() => Deno.lstatSync(temp), Deno.errors.NotFound);
      assertEquals(Deno.statSync(target).mode! & 0o777, 0o600);
    });
    await t.step("a link left at the fixed temp name is replaced, its target untouched", () => {
      const victim = `${dir.path}/victim`;
      Deno.writeTextFileSync(victim, "mine\n");
      Deno.symlinkSync(victim, temp);
      replaceAtomically(target, (s) => writeAll(s, "c\n"), { temp });
      assertEquals(Deno.readTextFileSync(victim), "mine\n");
      assertEquals(Deno.readTextFileSync(target), "c\n");
    });
    await t.step("a fill that fails leaves the old file and no temp file", () => {
      assertThrows(() =>
        replaceAtomically(target, () => {
          throw new Error("disk full");
        })
      );
      assertEquals(Deno.readTextFileSync(target), "c\n");
      assertEquals([...Deno.readDirSync(dir.path)].map((e) => e.name).sort(), ["queue", "victim"]);
    });
  },
});
