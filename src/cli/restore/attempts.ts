/**
 * What `roster restore` remembers between runs: per interruption (its key), the relaunches that
 * failed and why, in `<ledger>/restore/<key>.json`; and the lock that makes two restores take
 * turns (`<ledger>/restore/.lock`, an flock that dies with its holder).
 */
import { cutText } from "../../chars.ts";
import { RosterError } from "../../errors.ts";
import { privateChild } from "../../fs/dir.ts";
import { withLock } from "../../fs/flock.ts";
import { readJson } from "../../fs/read.ts";
import { removeQuietly, writeAtomic } from "../../fs/write.ts";
import { join } from "../../fs/path.ts";
import { ensureLedger } from "../../continuation/ledger.ts";
import type { Attempts } from "./select.ts";

/** How long a restore waits for another to finish before it gives up. */
const TURN_MS = 15 * 60_000;

/** The restore's directory in the ledger (created private), or null when it does not exist. */
export function restoreDir(ledger: string, home: string, create: boolean): string | null {
  if (create) ensureLedger(ledger, home);
  try {
    return privateChild(ledger, "restore", create, "Restore");
  } catch (err) {
    if (!create && err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

const fileOf = (dir: string, key: string) => join(dir, `${key}.json`);

/** The attempts file of one key: the failures so far; null when none (or unreadable). */
export function readAttempts(dir: string | null, key: string): Attempts | null {
  if (dir === null) return null;
  const read = readJson(fileOf(dir, key));
  if (read === null || !read.ok) return null;
  const v = read.value as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null || !Number.isSafeInteger(v.failures)) return null;
  return {
    failures: Math.max(0, v.failures as number),
    last_reason: typeof v.last_reason === "string" ? v.last_reason : null,
    gave_up_at: typeof v.gave_up_at === "string" ? v.gave_up_at : null,
  };
}

/** One more failed relaunch of `key`; marked given up once `max` are reached. */
export function recordFailure(
  dir: string,
  key: string,
  reason: string,
  max: number,
  now = Date.now(),
): Attempts {
  const failures = (readAttempts(dir, key)?.failures ?? 0) + 1;
  const at = new Date(now).toISOString();
  const next = {
    schema: 1,
    key,
    failures,
    last_failure_at: at,
    last_reason: cutText(reason, 2000),
    gave_up_at: failures >= max ? at : null,
  };
  writeAtomic(fileOf(dir, key), JSON.stringify(next, null, 2) + "\n");
  return { failures, last_reason: next.last_reason, gave_up_at: next.gave_up_at };
}

/** A relaunch that came up: its failures are forgotten. */
export function clearAttempts(dir: string, key: string) {
  removeQuietly(fileOf(dir, key));
}

/** Runs `fn` while no other restore runs (waiting its turn, at most TURN_MS). */
export async function oneAtATime<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await withLock(dir, fn, { patience: { stallMs: TURN_MS, totalMs: TURN_MS } });
  } catch (err) {
    if (err instanceof RosterError && /store lock/.test(err.message)) {
      throw new RosterError(`Another roster restore kept running for too long: ${dir}`);
    }
    throw err;
  }
}
