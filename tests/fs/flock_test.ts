/**
 * The store lock's waiting rules, in one process (flock conflicts between two opens of one
 * file): shared holders do not wait for each other, a waiter keeps waiting while the lock
 * changes hands, and gives up on a holder that hangs or after its whole patience.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { HANG_MS, tempDir } from "../helpers.ts";
import { LockTimeoutError, withLock } from "../../src/fs/flock.ts";

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Another holder: its own open of `.lock`, held (shared or alone) until released. */
async function holder(dir: string, exclusive: boolean) {
  const file = Deno.openSync(`${dir}/.lock`, { read: true, write: true, create: true });
  await file.lock(exclusive);
  // A new holder moves the mark, as withLock's holders do.
  const at = new Date(Date.now() + Math.floor(Math.random() * 1000) + 1);
  file.utimeSync(at, at);
  return { release: () => file.close() };
}

Deno.test("store lock: who waits, for how long", async (t) => {
  await using dir = await tempDir();

  await t.step("a shared hold does not wait for another shared hold", async () => {
    const other = await holder(dir.path, false);
    try {
      const patience = { stallMs: 300, totalMs: 300 };
      // The other hold lasts past this call: an answer at all means it did not wait for it
      // (a wait would end in LockTimeoutError, as the holder-alone's below does).
      assertEquals(await withLock(dir.path, () => 1, { shared: true, patience }), 1);
      // One that holds alone does wait for it.
      await assertRejects(() => withLock(dir.path, () => 1, { patience }), LockTimeoutError);
    } finally {
      other.release();
    }
  });

  await t.step("a waiter outlasts its stall time while the lock changes hands", async () => {
    // Shared holders that overlap (a burst of registers): the lock is never free, but each
    // new holder moves the mark. Five of 200 ms: a second in all, against a 400 ms stall limit.
    let current = await holder(dir.path, false);
    const handOvers = (async () => {
      for (let i = 0; i < 5; i++) {
        await sleep(200);
        const next = await holder(dir.path, false);
        current.release();
        current = next;
      }
      await sleep(200);
      current.release();
    })();
    const started = Date.now();
    const got = await withLock(dir.path, () => "mine", {
      patience: { stallMs: 400, totalMs: 10_000 },
    });
    assertEquals(got, "mine");
    assert(Date.now() - started >= 1000, "it waited through every hand-over");
    await handOvers;
  });

  await t.step("a holder that hangs is given up on after the stall time", async () => {
    const hung = await holder(dir.path, true);
    try {
      // Given up on for the stall, not at the end of the whole patience (which would say so).
      const err = await assertRejects(
        () => withLock(dir.path, () => 1, { patience: { stallMs: 300, totalMs: HANG_MS } }),
        LockTimeoutError,
      );
      assert(err.message.includes("one holder kept it for 300 ms"), err.message);
    } finally {
      hung.release();
    }
  });

  await t.step("a queue that moves is waited for at most the whole patience", async () => {
    let current = await holder(dir.path, false);
    let stop = false;
    const handOvers = (async () => {
      while (!stop) {
        await sleep(100);
        const next = await holder(dir.path, false);
        current.release();
        current = next;
      }
      current.release();
    })();
    try {
      const err = await assertRejects(
        () => withLock(dir.path, () => 1, { patience: { stallMs: 250, totalMs: 800 } }),
        LockTimeoutError,
      );
      assert(err.message.includes("in 800 ms"), err.message);
    } finally {
      stop = true;
      await handOvers;
    }
  });

  await t.step("registers that keep overlapping do not keep a holder-alone out", async () => {
    // flock admits a new shared holder while an exclusive request waits: without the gate a
    // burst of registers (each 40 ms, a new one every 20 ms) kept prune or unregister out for
    // its whole patience.
    let stop = false;
    // Set just before the holder-alone asks: its gate closes before the next register asks.
    let writerWaiting = false;
    const cutIn: number[] = [];
    const registers = (async () => {
      const running: Promise<unknown>[] = [];
      for (let n = 0; !stop; n++) {
        const askedWhileWaiting = writerWaiting;
        running.push(withLock(dir.path, () => {
          // A register that asked after the holder-alone must not get the lock before it.
          if (askedWhileWaiting && writerWaiting) cutIn.push(n);
          return sleep(40);
        }, { shared: true }));
        await sleep(20);
      }
      await Promise.all(running);
    })();
    try {
      await sleep(60);
      writerWaiting = true;
      // Patience only a hang outlasts: the order above is what is checked, not the speed.
      await withLock(dir.path, () => {
        writerWaiting = false;
      }, { patience: { stallMs: HANG_MS, totalMs: HANG_MS } });
      assertEquals(cutIn, [], "registers that asked later got the lock first");
    } finally {
      stop = true;
      await registers;
    }
  });

  await t.step("every holder moves the lock file's mark, whatever the clock says", async () => {
    const path = `${dir.path}/.lock`;
    const future = new Date(Date.now() + 3_600_000);
    Deno.utimeSync(path, future, future);
    await withLock(dir.path, () => {});
    const after = Deno.statSync(path).mtime!.getTime();
    assert(after > future.getTime(), `${after} moved past ${future.getTime()}`);
  });
});
