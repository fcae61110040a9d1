/** dispatch.lock: taken whole, released only by its owner, reclaimed only from a dead one. */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { spawnSleeper, tempDir, writeJson } from "../helpers.ts";
import { iso, put, testJudge as judge } from "./fixtures.ts";
import { readAudit } from "../../src/continuation/audit.ts";
import { ensureLedger } from "../../src/continuation/ledger.ts";
import { acquireDispatchLock, LOCK_FILE, readLockOwner } from "../../src/continuation/lock.ts";
import type { LockOwner } from "../../src/continuation/schema.ts";
import { RosterError } from "../../src/errors.ts";

Deno.test("dispatch.lock", async (t) => {
  await using tmp = await tempDir();
  const dir = ensureLedger(`${tmp.path}/l`);
  const j = await judge();
  const lockPath = `${dir}/${LOCK_FILE}`;

  await t.step("taken: a complete file naming this process and its start token", async () => {
    const a = await acquireDispatchLock(dir, j, 0);
    assert("held" in a);
    const owner = readLockOwner(dir)!;
    const probe = j.probe(Deno.pid, true);
    assertEquals([owner.pid, owner.host], [Deno.pid, Deno.hostname()]);
    assertEquals(owner.start_token, probe.kind === "exists" ? probe.info.startToken : null);
    // A second taker waits for the live owner, then reports it busy.
    const started = Date.now();
    const b = await acquireDispatchLock(dir, j, 150);
    assert("busy" in b);
    assertEquals(b.busy.pid, Deno.pid);
    assert(Date.now() - started >= 140);
    a.held.release();
    assertEquals(readLockOwner(dir), null);
  });

  await t.step("release removes only its own lock (inode check)", async () => {
    const a = await acquireDispatchLock(dir, j, 0);
    assert("held" in a);
    Deno.removeSync(lockPath);
    const b = await acquireDispatchLock(dir, j, 0);
    assert("held" in b);
    a.held.release();
    assert(readLockOwner(dir) !== null, "a's release must not remove b's lock");
    b.held.release();
    assertEquals(readLockOwner(dir), null);
  });

  const plant = (owner: Partial<LockOwner>) =>
    writeJson(lockPath, {
      pid: Deno.pid,
      start_token: null,
      host: Deno.hostname(),
      boot_id: j.here.bootId,
      at: iso(),
      nonce: "n",
      ...owner,
    });

  await t.step("a dead owner's lock is reclaimed and audited", async () => {
    const s = spawnSleeper();
    const p = j.probe(s.pid, true);
    const token = p.kind === "exists" ? p.info.startToken : null;
    await s.kill();
    plant({ pid: s.pid, start_token: token });
    const a = await acquireDispatchLock(dir, j, 0);
    assert("held" in a);
    assertEquals(readLockOwner(dir)?.pid, Deno.pid);
    a.held.release();
    const reclaim = readAudit(dir).filter((l) => l.event === "lock-reclaim");
    assertEquals(reclaim.length, 1);
    assertEquals((reclaim[0].owner as LockOwner).pid, s.pid);
    assertEquals(reclaim[0].owner_reason, "exited");
  });

  await t.step("a reused pid (another start token) counts as dead", async () => {
    await using s = spawnSleeper();
    plant({ pid: s.pid, start_token: "1" });
    const a = await acquireDispatchLock(dir, j, 0);
    assert("held" in a);
    a.held.release();
    assertEquals(readAudit(dir).at(-1)?.owner_reason, "pid-reused");
  });

  await t.step("a live owner's lock and an unknown owner's lock are left alone", async () => {
    await using s = spawnSleeper();
    const p = j.probe(s.pid, true);
    plant({ pid: s.pid, start_token: p.kind === "exists" ? p.info.startToken : null });
    const before = Deno.readTextFileSync(lockPath);
    assert("busy" in await acquireDispatchLock(dir, j, 50));
    assertEquals(Deno.readTextFileSync(lockPath), before);
    plant({ pid: 999_999, host: "another-host" });
    const other = Deno.readTextFileSync(lockPath);
    assert("busy" in await acquireDispatchLock(dir, j, 0));
    assertEquals(Deno.readTextFileSync(lockPath), other);
    Deno.removeSync(lockPath);
  });

  await t.step("a damaged lock is an error naming it, never silently taken", async () => {
    put(lockPath, "{");
    let err: unknown;
    try {
      await acquireDispatchLock(dir, j, 0);
    } catch (e) {
      err = e;
    }
    assert(err instanceof RosterError);
    assertMatch((err as Error).message, /dispatch lock is damaged.*dispatch\.lock/);
    Deno.removeSync(lockPath);
  });
});
