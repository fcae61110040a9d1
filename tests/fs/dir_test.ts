import { assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import { privateChild, trustedDir, UntrustedError } from "../../src/fs/dir.ts";
import { openJudged } from "../../src/fs/read.ts";

const unix = Deno.build.os !== "windows";

Deno.test(
  { name: "trustedDir: checks from / down, creates what is missing", ignore: !unix },
  async (t) => {
    await using dir = await tempDir();
    await t.step("missing: null without create, created 0700 with it", () => {
      assertEquals(trustedDir(`${dir.path}/a/b`, "the store", { create: false }), null);
      assertEquals(trustedDir(`${dir.path}/a/b`, "the store", { create: true }), `${dir.path}/a/b`);
      assertEquals(Deno.statSync(`${dir.path}/a`).mode! & 0o777, 0o700);
    });
    await t.step("a link of ours is followed to a checked target", () => {
      Deno.symlinkSync(`${dir.path}/a`, `${dir.path}/l`);
      assertEquals(
        trustedDir(`${dir.path}/l/b`, "the store", { create: false }),
        `${dir.path}/a/b`,
      );
      Deno.symlinkSync("a/b", `${dir.path}/rel`);
      assertEquals(
        trustedDir(`${dir.path}/rel/../b`, "the store", { create: false }),
        `${dir.path}/a/b`,
      );
    });
    await t.step("a parent others may write to, not sticky: refused", () => {
      Deno.mkdirSync(`${dir.path}/open`);
      Deno.chmodSync(`${dir.path}/open`, 0o777);
      assertMatch(
        assertThrows(
          () => trustedDir(`${dir.path}/open/h`, "the store", { create: true }),
          UntrustedError,
        )
          .message,
        /writable by group or others/,
      );
      Deno.chmodSync(`${dir.path}/open`, 0o1777);
      assertEquals(
        trustedDir(`${dir.path}/open/h`, "the store", { create: true }),
        `${dir.path}/open/h`,
      );
    });
    await t.step("our own loose root is tightened; a sticky one is left alone", () => {
      Deno.chmodSync(`${dir.path}/a/b`, 0o777);
      trustedDir(`${dir.path}/a/b`, "the store", { create: true });
      assertEquals(Deno.statSync(`${dir.path}/a/b`).mode! & 0o7777, 0o700);
      trustedDir(`${dir.path}/open`, "the store", { create: true });
      assertEquals(Deno.statSync(`${dir.path}/open`).mode! & 0o7777, 0o1777);
    });
    await t.step("privateChild: never a link, never another's, tightened", () => {
      Deno.symlinkSync(`${dir.path}/a`, `${dir.path}/a/b/sessions`);
      assertMatch(
        assertThrows(() => privateChild(`${dir.path}/a/b`, "sessions", true), UntrustedError)
          .message,
        /symbolic link/,
      );
      assertEquals(privateChild(`${dir.path}/a/b`, "c", false), null);
      assertEquals(privateChild(`${dir.path}/a/b`, "c", true), `${dir.path}/a/b/c`);
    });
  },
);

Deno.test({
  name: "openJudged: no FIFO hang, nothing swapped in, the type from the handle",
  ignore: !unix,
}, async () => {
  await using dir = await tempDir();
  const f = `${dir.path}/f`;
  Deno.writeTextFileSync(f, "x");
  Deno.chmodSync(f, 0o600);
  const judged = Deno.lstatSync(f);
  openJudged(f, judged, { read: true })!.close();
  // What was judged is swapped for a link, a FIFO (which must not block), a directory.
  Deno.writeTextFileSync(`${dir.path}/g`, "y");
  Deno.renameSync(f, `${dir.path}/old`);
  Deno.symlinkSync(`${dir.path}/g`, f);
  assertEquals(openJudged(f, judged, { read: true }), null);
  Deno.removeSync(f);
  new Deno.Command("mkfifo", { args: [f] }).outputSync();
  assertEquals(openJudged(f, judged, { read: true }), null);
  assertEquals(openJudged(f, null, { read: true }), null);
  Deno.removeSync(f);
  Deno.mkdirSync(f);
  assertThrows(() => openJudged(f, judged, { read: true }));
  assertThrows(() => openJudged(`${dir.path}/none`, null, { read: true }), Deno.errors.NotFound);
  // A file of ours the mode keeps us from writing is still read (as root: any mode).
  Deno.chmodSync(`${dir.path}/g`, 0o400);
  openJudged(`${dir.path}/g`, null, { read: true })!.close();
});
