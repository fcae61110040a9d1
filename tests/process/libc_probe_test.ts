/**
 * Linux probes read /proc through libc only once something loaded libc (list and prune do):
 * then a dead pid costs a failed open(2) and an errno, not an exception. Without libc, a
 * failure must never be read as an errno it is not (a -1 taken for -EPERM made a pid of no
 * process "exist"). Both ways give the same verdicts.
 */
import { assert, assertEquals } from "../assert.ts";
import { NO_PID } from "../helpers.ts";
import { linuxBackend } from "../../src/process/linux.ts";
import { libc } from "../../src/process/libc.ts";
import { loadedLibc } from "../../src/process/types.ts";

Deno.test({
  name: "linux probe: the same verdicts before and after libc is loaded",
  ignore: Deno.build.os !== "linux",
  fn() {
    // This file's own process: nothing else here loads libc first.
    assertEquals(loadedLibc(), null);
    const backend = linuxBackend();
    const self = backend.probe(Deno.pid);
    const dead = backend.probe(NO_PID);
    assertEquals(self.kind, "exists");
    assertEquals(dead.kind, "gone");
    assert(libc() !== null, "glibc loads here");
    assert(loadedLibc() !== null);
    const self2 = backend.probe(Deno.pid);
    assertEquals(self2.kind, "exists");
    if (self.kind === "exists" && self2.kind === "exists") {
      assertEquals(self2.info.startToken, self.info.startToken);
      assertEquals(self2.info.ppid, self.info.ppid);
    }
    assertEquals(backend.probe(NO_PID).kind, "gone");
    assertEquals(backend.probe(NO_PID + 1).kind, "gone");
  },
});
