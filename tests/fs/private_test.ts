import { assertEquals } from "../assert.ts";
import { untrustedFile } from "../../src/fs/private.ts";

// FileInfo values as Deno reports them on each OS, injected so every OS's rule runs on Linux.
const WINDOWS_WRITABLE = { mode: 0o100666, uid: null };
const WINDOWS_READ_ONLY = { mode: 0o100444, uid: null };

Deno.test("untrustedFile: what private means per OS", async (t) => {
  await t.step("Windows: Deno's 0o666 and null uid are every file there, so trusted", () => {
    assertEquals(untrustedFile(WINDOWS_WRITABLE, "windows", null), null);
    assertEquals(untrustedFile(WINDOWS_READ_ONLY, "windows", null), null);
  });
  await t.step("the same values on Unix are refused", () => {
    for (const os of ["linux", "darwin", "freebsd"] as const) {
      assertEquals(untrustedFile(WINDOWS_WRITABLE, os, 1000), "owned by another user");
      assertEquals(untrustedFile(WINDOWS_WRITABLE, os, null), "writable by group or others");
    }
  });
  await t.step("Unix: ours and 0600/0644 trusted; another owner or g/o-writable refused", () => {
    assertEquals(untrustedFile({ mode: 0o100600, uid: 1000 }, "linux", 1000), null);
    assertEquals(untrustedFile({ mode: 0o100644, uid: 1000 }, "darwin", 1000), null);
    assertEquals(
      untrustedFile({ mode: 0o100600, uid: 0 }, "linux", 1000),
      "owned by another user",
    );
    for (const mode of [0o100620, 0o100602, 0o100666]) {
      assertEquals(
        untrustedFile({ mode, uid: 1000 }, "freebsd", 1000),
        "writable by group or others",
      );
    }
  });
});
