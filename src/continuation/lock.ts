/**
 * `dispatch.lock`: held by whoever decides and claims, or changes a plan, so that no two of
 * them interleave. The file names its owner (pid and start token), so that roster's own
 * liveness can tell a crashed owner's lock from a live one and reclaim it (audited): a crashed
 * dispatcher never blocks the ledger.
 */
import { ioError, RosterError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { LockTimeoutError, withLock } from "../fs/flock.ts";
import { CHANGED, readJson } from "../fs/read.ts";
import { createExclusive } from "../fs/write.ts";
import { identityOf } from "../identity/identity.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { sleep } from "../time.ts";
import { appendAudit } from "./audit.ts";
import { assertPrivateLedger, json } from "./ledger.ts";
import { identityOfOwner, type LockOwner, randomHex, validateLockOwner } from "./schema.ts";

export const LOCK_FILE = "dispatch.lock";
/** How long a check waits for a live lock holder: it runs on a hook's hot path. */
export const CHECK_LOCK_PATIENCE_MS = 500;
/** plan and release are not on a hook's hot path: they wait longer. */
export const ADMIN_LOCK_PATIENCE_MS = 10_000;

interface HeldLock {
  path: string;
  /** Removes the lock, only while it is still this one (same inode). */
  release(): void;
}

type LockAttempt = { held: HeldLock } | { busy: LockOwner };

/** The current lock's owner, null when there is no lock; throws when the lock is damaged. */
export function readLockOwner(dir: string): LockOwner | null {
  const path = join(dir, LOCK_FILE);
  const read = readJson(path);
  // Released and retaken while it was read (readSmallFile reads it again a few times): a lock
  // in use, not a damaged one.
  if (read === null || (!read.ok && read.problem === CHANGED)) return null;
  const owner = read.ok ? validateLockOwner(read.value) : null;
  if (owner === null) {
    const why = !read.ok ? read.problem : "not a lock record";
    throw new RosterError(
      `The dispatch lock is damaged (${why}): remove it once no roster runs: ${path}`,
    );
  }
  return owner;
}

/** This process as a lock owner, with its own start token as the backend reads it. */
function selfOwner(judge: LivenessJudge): LockOwner {
  const probe = judge.probe(Deno.pid, true);
  // The lock file keeps the fields it always had: a ledger is one host's (tmux), never two OSes'.
  const { session_pid, os: _os, ...id } = identityOf(
    Deno.pid,
    probe.kind === "exists" ? probe.info.startToken : null,
    judge.here,
  );
  return { pid: session_pid, ...id, at: new Date().toISOString(), nonce: randomHex(16) };
}

/**
 * One attempt at a lock held by someone else: under the ledger's advisory lock (so two
 * reclaimers never race each other), re-read it and remove it when roster's liveness says
 * its owner is dead, auditing the reclaim. Returns the live owner, or null when it is gone.
 */
async function reclaimIfDead(
  dir: string,
  judge: LivenessJudge,
  patienceMs: number,
): Promise<LockOwner | null> {
  const path = join(dir, LOCK_FILE);
  return await withLock(dir, () => {
    const owner = readLockOwner(dir);
    if (owner === null) return null;
    const verdict = judge.verdict(identityOfOwner(owner), true);
    if (verdict.liveness !== "dead") return owner;
    // Only the owner removes a lock of its own, and that owner is dead; other reclaimers
    // wait for this advisory lock; acquirers only link. So this is still the file judged.
    try {
      Deno.removeSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw ioError("Could not reclaim", path, err);
      return null;
    }
    appendAudit(dir, { event: "lock-reclaim", owner, owner_reason: verdict.reason });
    return null;
  }, { patience: { stallMs: Math.max(patienceMs, 100), totalMs: Math.max(patienceMs, 100) } });
}

/**
 * Takes `dispatch.lock`: a hard link of a fully written temp file holding this process's
 * pid and start token. A lock whose owner is dead is reclaimed (and audited); a live (or
 * unknown) owner is waited for at most `patienceMs`, then reported as busy.
 */
export async function acquireDispatchLock(
  dir: string,
  judge: LivenessJudge,
  patienceMs: number,
): Promise<LockAttempt> {
  const path = join(dir, LOCK_FILE);
  const self = selfOwner(judge);
  const me = json(self);
  const giveUp = Date.now() + patienceMs;
  for (let spins = 0;; spins++) {
    if (spins > 10_000) throw new RosterError(`Could not take the dispatch lock: ${path}`);
    const created = createExclusive(path, me);
    if (created !== null) {
      return {
        held: {
          path,
          release() {
            try {
              const info = Deno.lstatSync(path);
              if (info.ino !== created.ino || info.dev !== created.dev) return;
              if (readLockOwner(dir)?.nonce === self.nonce) Deno.removeSync(path);
            } catch { /* already gone, or no longer ours */ }
          },
        },
      };
    }
    let owner: LockOwner | null;
    try {
      owner = await reclaimIfDead(dir, judge, patienceMs);
    } catch (err) {
      // Another process sits on the ledger's own lock (a reclaimer that hangs, or someone
      // else's flock): that is a busy lock, answered within the caller's patience.
      if (!(err instanceof LockTimeoutError)) throw err;
      owner = readLockOwner(dir);
      if (owner === null) continue;
      return { busy: owner };
    }
    if (owner === null) continue;
    if (Date.now() >= giveUp) return { busy: owner };
    await sleep(15 + Math.floor(Math.random() * 20));
  }
}

/**
 * Runs `fn` holding `dispatch.lock`, released however `fn` ends. When a live owner keeps it
 * longer than `patienceMs`, `fn` does not run and that owner is returned.
 */
export async function withDispatchLock<T>(
  dir: string,
  judge: LivenessJudge,
  patienceMs: number,
  fn: () => T | Promise<T>,
): Promise<{ done: T } | { busy: LockOwner }> {
  // Every write under the lock (a claim, a skip, a decline, a clean) is refused in a ledger
  // another user could rewrite or that is a link: the lock file would be its first write.
  assertPrivateLedger(dir);
  const attempt = await acquireDispatchLock(dir, judge, patienceMs);
  if ("busy" in attempt) return attempt;
  try {
    return { done: await fn() };
  } finally {
    attempt.held.release();
  }
}
