/**
 * Waiting for exits the OS's own way: each OS gets its mechanism (Linux pidfd, macOS and
 * FreeBSD kqueue, Windows a process handle), a wait costs no probes while the process runs
 * (the kernel tells, nothing polls), and the exit is seen. Runs for real wherever it runs
 * (Linux here, Windows under Wine, macOS in its CI job); the kqueue structs are pinned byte by
 * byte on every OS, since no kqueue runs here.
 */
import { assert, assertEquals } from "../assert.ts";
import { HANG_MS, NO_PID, type Sleeper, spawnSleeper } from "../helpers.ts";
import { spawnPing } from "../windows/helpers.ts";
import { waitMechanism, watchExit } from "../../src/process/exit_wait.ts";
import {
  DARWIN_KEVENT,
  decodeKevent,
  encodeKevent,
  EV_ERROR,
  EVFILT_PROC,
  exitWatchChange,
  FREEBSD_KEVENT,
  isExitEvent,
  judgeReceipt,
  type KeventLayout,
  NOTE_EXIT,
} from "../../src/process/kqueue.ts";
import { judgeWait, WAIT_OBJECT_0, WAIT_TIMEOUT } from "../../src/process/windows_wait.ts";
import { processBackend } from "../../src/process/mod.ts";
import type { ProcessBackend } from "../../src/process/types.ts";

const NATIVE: Partial<Record<typeof Deno.build.os, string>> = {
  linux: "pidfd",
  darwin: "kqueue",
  freebsd: "kqueue",
  windows: "handle",
};
const NO_NATIVE = NATIVE[Deno.build.os] === undefined;

function sleeper(): Sleeper {
  return Deno.build.os === "windows" ? spawnPing(300) : spawnSleeper(300);
}

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

Deno.test("kqueue: struct kevent as macOS and FreeBSD lay it out", async (t) => {
  await t.step("the exit-watch change, byte by byte (macOS: 32 bytes)", () => {
    const bytes = exitWatchChange(0x1234, DARWIN_KEVENT);
    // ident 0x1234 (u64) | filter -5 (i16) | flags ADD|ENABLE|ONESHOT|RECEIPT = 0x55 (u16) |
    // fflags NOTE_EXIT (u32) | data 0 (i64) | udata 0 (pointer)
    assertEquals(
      hex(bytes),
      "3412000000000000" + "fbff" + "5500" + "00000080" + "0000000000000000" +
        "0000000000000000",
    );
  });

  await t.step("FreeBSD's is the same with ext[4] after udata: 64 bytes", () => {
    const bytes = exitWatchChange(0x1234, FREEBSD_KEVENT);
    assertEquals(bytes.length, 64);
    assertEquals(hex(bytes.subarray(0, 32)), hex(exitWatchChange(0x1234, DARWIN_KEVENT)));
    assert(bytes.subarray(32).every((b) => b === 0));
  });

  for (const layout of [DARWIN_KEVENT, FREEBSD_KEVENT]) {
    await t.step(`${layout.os}: decode reads what encode wrote; a wrong size is refused`, () => {
      const e = { ident: 99_999, filter: EVFILT_PROC, flags: 0x4011, fflags: NOTE_EXIT, data: -3n };
      assertEquals(decodeKevent(encodeKevent(e, layout), layout), e);
      assertEquals(decodeKevent(new Uint8Array(layout.size - 1), layout), null);
    });
  }

  await t.step("the receipt: watching, gone (ESRCH), or failed (poll instead)", () => {
    const receipt = (layout: KeventLayout, data: bigint, over: Record<string, number> = {}) =>
      encodeKevent({
        ident: 42,
        filter: EVFILT_PROC,
        flags: EV_ERROR,
        fflags: NOTE_EXIT,
        data,
        ...over,
      }, layout);
    for (const l of [DARWIN_KEVENT, FREEBSD_KEVENT]) {
      assertEquals(judgeReceipt(1, receipt(l, 0n), 42, l), "watching");
      assertEquals(judgeReceipt(1, receipt(l, 3n), 42, l), "gone");
      assertEquals(judgeReceipt(1, receipt(l, 1n), 42, l), "failed"); // EPERM
      assertEquals(judgeReceipt(-1, receipt(l, 0n), 42, l), "failed");
      assertEquals(judgeReceipt(1, receipt(l, 0n, { flags: 0 }), 42, l), "failed");
      assertEquals(judgeReceipt(1, receipt(l, 0n, { ident: 43 }), 42, l), "failed");
    }
  });

  await t.step("only the watched pid's NOTE_EXIT is its exit", () => {
    const l = DARWIN_KEVENT;
    const e = { ident: 7, filter: EVFILT_PROC, flags: 0, fflags: NOTE_EXIT, data: 0n };
    assert(isExitEvent(decodeKevent(encodeKevent(e, l), l), 7));
    assert(!isExitEvent(e, 8));
    assert(!isExitEvent({ ...e, fflags: 0x4000_0000 }, 7)); // NOTE_FORK
    assert(!isExitEvent(null, 7));
  });
});

Deno.test("a process handle's wait result (Windows)", () => {
  assertEquals(judgeWait(WAIT_OBJECT_0), "exited");
  assertEquals(judgeWait(WAIT_TIMEOUT), "running");
  assertEquals(judgeWait(0xffff_ffff), "failed"); // WAIT_FAILED
});

Deno.test({
  name: "wait: the OS tells when a process exits, with no probing meanwhile",
  // Other OSes have no mechanism of their own: they probe, which the next test covers.
  ignore: NO_NATIVE,
  async fn(t) {
    const real = await processBackend();
    let probes = 0;
    const counting: ProcessBackend = {
      ...real,
      probe(pid) {
        probes++;
        return real.probe(pid);
      },
    };

    await t.step(`this OS waits by ${NATIVE[Deno.build.os]}`, () => {
      assertEquals(waitMechanism(), NATIVE[Deno.build.os]);
    });

    await t.step("a running process: no probe while waiting; its exit ends the wait", async () => {
      await using s = sleeper();
      const w = watchExit(s.pid, counting);
      try {
        assertEquals(w.gone, false);
        probes = 0;
        let ended = false;
        const exited = w.exited().then(() => ended = true);
        await new Promise((ok) => setTimeout(ok, 1_000));
        // Polling would have probed about eight times by now (10 ms doubling to 250 ms).
        assertEquals([ended, probes], [false, 0]);
        await s.kill();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<"late">((ok) => timer = setTimeout(() => ok("late"), HANG_MS));
        assertEquals(await Promise.race([exited.then(() => "ended"), late]), "ended");
        clearTimeout(timer);
      } finally {
        w.close();
      }
    });

    await t.step("a pid with no process is gone at once", async () => {
      const w = watchExit(NO_PID, counting);
      assertEquals(w.gone, true);
      await w.exited();
      w.close();
    });
  },
});
