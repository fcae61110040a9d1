/**
 * Looking after the ledger (the reference's reconciler role): the mode and the hold, set
 * wherever the ledger is and explained when off; each key's state; cleaning keys past their
 * deadline and the temp files of killed writers; a hook declining its continuation.
 */
import { RosterError, UsageError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { exists } from "../fs/read.ts";
import { removeQuietly, writeAtomic } from "../fs/write.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { isValidPid } from "../identity/pid.ts";
import { parseTime } from "../time.ts";
import { appendAudit } from "./audit.ts";
import {
  checkLedger,
  claimPath,
  CONFIG_FILE,
  createSkip,
  ensureLedger,
  HOLD_FILE,
  isClaimed,
  json,
  outcomePath,
  planPath,
  readClaim,
  readMode,
  readPlan,
  skipPath,
  syncDir,
  writeOutcome,
} from "./ledger.ts";
import { ADMIN_LOCK_PATIENCE_MS, withDispatchLock } from "./lock.ts";
import type { Mode } from "./rules.ts";
import {
  KeyFiles,
  keyState,
  ledgerKeys,
  type ShownState,
  shownState,
  skipClassReason,
} from "./keys.ts";
import { type Plan, skipEvent, skippedOutcome } from "./schema.ts";

export const MODES: readonly Mode[] = ["on", "off", "dry-run"];
export { readMode as explainMode };

/** Writes `config.json` (0600, atomically, flushed) in a private ledger. */
export function setMode(dir: string, mode: Mode) {
  ensureLedger(dir);
  writeAtomic(join(dir, CONFIG_FILE), json({ mode }));
  syncDir(dir);
}

export function holdIsOn(dir: string): boolean {
  return exists(join(dir, HOLD_FILE));
}

/** Creates or removes `hold`; its presence holds every continuation. */
export function setHold(dir: string, on: boolean) {
  if (on) {
    ensureLedger(dir);
    writeAtomic(join(dir, HOLD_FILE), "");
  } else {
    // A ledger that is not there holds nothing; one another user could rewrite is refused
    // (a link to another directory would lose that directory's hold).
    if (checkLedger(dir, false) === null) return;
    try {
      Deno.removeSync(join(dir, HOLD_FILE));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new RosterError(`Could not remove the hold: ${join(dir, HOLD_FILE)}`);
      }
    }
  }
  syncDir(dir);
}

/** One key as `continuation-list` and `continuation-show` print it. */
export interface KeyStatus {
  key: string;
  state: ShownState;
  /** The plan's own state, null without a readable plan. */
  plan: Plan["state"] | null;
  /** The outcome file's `outcome`, null without one. */
  outcome: string | null;
  session_pid: number | null;
  session_id: string | null;
  deadline: string | null;
  /** Since the oldest of the key's files was written. */
  age_ms: number | null;
  continuation_id: string | null;
  /** The message the claim handed to the agent (null for a claim made before messages were kept). */
  message: string | null;
  /** The skip's (or decline's) class and reason. */
  class: string | null;
  reason: string | null;
}

function mtimeOf(path: string): number | null {
  try {
    return Deno.lstatSync(path).mtime?.getTime() ?? null;
  } catch {
    return null;
  }
}

/** The state of one key, from its files. */
export function keyStatus(dir: string, key: string, now = Date.now()): KeyStatus {
  const files = new KeyFiles(dir, key);
  const state = shownState(keyState(files, now));
  const plan = files.plan?.ok ? files.plan.value : null;
  const claim = files.claimed ? readClaim(dir, key) : null;
  const skip = files.skip === null ? null : skipClassReason(files.skip);
  const times = [planPath, claimPath, skipPath, outcomePath].map((p) => mtimeOf(p(dir, key)))
    .filter((t): t is number => t !== null);
  return {
    key,
    state,
    plan: plan?.state ?? null,
    outcome: files.outcome,
    session_pid: plan?.session.session_pid ?? null,
    session_id: plan?.session.session_id ?? null,
    deadline: plan?.deadline ?? null,
    age_ms: times.length === 0 ? null : Math.max(0, now - Math.min(...times)),
    continuation_id: claim?.continuation_id ?? null,
    message: claim?.message ?? null,
    class: skip?.class ?? null,
    reason: skip?.reason ?? null,
  };
}

/** Every key in the ledger, oldest first. */
export function listKeys(dir: string, now = Date.now()): KeyStatus[] {
  let keys: Set<string> | null;
  try {
    keys = ledgerKeys(dir);
  } catch (err) {
    throw new RosterError(`Could not read the ledger: ${dir}`, { cause: err });
  }
  if (keys === null) return [];
  return [...keys].map((k) => keyStatus(dir, k, now)).sort((a, b) =>
    (b.age_ms ?? 0) - (a.age_ms ?? 0) || (a.key < b.key ? -1 : 1)
  );
}

/** `<target>.<writer pid>.<unique>.tmp`, as the store's writers name their temp files. */
const TEMP = /^.+\.([1-9][0-9]{0,9})\.[0-9a-z]+\.tmp$/;
/** A temp file older than this is abandoned whatever its name says. */
const TEMP_ABANDONED_MS = 3_600_000;

export interface CleanResult {
  keys: string[];
  temp_files: string[];
}

/**
 * Removes, under dispatch.lock, every key whose deadline passed more than `olderThanMs` ago
 * (with all its files), keys whose files are all older than that and that have no plan, and
 * the temp files of writers that are gone (or that are older than an hour).
 */
export async function cleanLedger(
  dir: string,
  judge: LivenessJudge,
  olderThanMs: number,
  dryRun: boolean,
  now = Date.now(),
): Promise<CleanResult> {
  // Refused where another user could rewrite it, as every writer refuses it: a link would
  // have the clean remove another directory's files (--dry-run too, so it says the same).
  if (checkLedger(dir, false) === null) return { keys: [], temp_files: [] };
  const run = () => {
    const keys = listKeys(dir, now).filter((k) => {
      if (k.state === "none" || k.plan === null) {
        return k.age_ms !== null && k.age_ms > olderThanMs;
      }
      const deadline = k.deadline === null ? null : parseTime(k.deadline);
      return deadline !== null && now - deadline > olderThanMs;
    }).map((k) => k.key);
    const temps: string[] = [];
    for (const e of Deno.readDirSync(dir)) {
      if (!e.name.endsWith(".tmp")) continue;
      const path = join(dir, e.name);
      const m = TEMP.exec(e.name);
      const pid = m ? Number(m[1]) : null;
      const writerGone = pid !== null && isValidPid(pid) &&
        judge.probe(pid, true).kind === "gone";
      const mtime = mtimeOf(path);
      if (writerGone || (mtime !== null && now - mtime > TEMP_ABANDONED_MS)) temps.push(path);
    }
    if (!dryRun) {
      for (const key of keys) {
        for (const p of [claimPath, skipPath, outcomePath, planPath]) removeQuietly(p(dir, key));
        appendAudit(dir, { event: "clean", key });
      }
      for (const t of temps) removeQuietly(t);
      syncDir(dir);
    }
    return { keys: keys.sort(), temp_files: temps.sort() };
  };
  if (dryRun) return run();
  const locked = await withDispatchLock(dir, judge, ADMIN_LOCK_PATIENCE_MS, run);
  if ("busy" in locked) {
    throw new RosterError(
      `Could not take the dispatch lock: held by pid ${locked.busy.pid}: ${dir}`,
    );
  }
  return locked.done;
}

/** What `continuation-decline` did. */
export type Declined = { outcome: "declined" | "claimed" | "skipped"; key: string };

/**
 * A hook that will not continue (it gave up waiting, or saw something roster cannot) decides
 * the key: `K.skip` of class `declined`, first writer wins, with its audit line and outcome.
 * With `token`, only for that plan.
 */
export async function declineKey(
  dir: string,
  judge: LivenessJudge,
  key: string,
  reason: string,
  token: string | null,
): Promise<Declined> {
  const read = readPlan(dir, key);
  if (read === null) throw new UsageError(`Invalid --key: no plan for ${key} in ${dir}`);
  const locked = await withDispatchLock(dir, judge, ADMIN_LOCK_PATIENCE_MS, (): Declined => {
    if (isClaimed(dir, key)) return { outcome: "claimed", key };
    const now = readPlan(dir, key);
    const planToken = now?.ok ? now.value.token : null;
    if (token !== null && planToken !== token) {
      throw new UsageError(`Invalid --plan-token: the plan of ${key} has changed`);
    }
    const skip = {
      class: "declined" as const,
      reason,
      token: planToken,
      pid: Deno.pid,
      at: new Date().toISOString(),
    };
    if (!createSkip(dir, key, skip)) return { outcome: "skipped", key };
    appendAudit(dir, skipEvent(key, skip));
    writeOutcome(dir, key, skippedOutcome(key, skip));
    return { outcome: "declined", key };
  });
  if ("busy" in locked) {
    throw new RosterError(
      `Could not take the dispatch lock: held by pid ${locked.busy.pid}: ${dir}`,
    );
  }
  return locked.done;
}
