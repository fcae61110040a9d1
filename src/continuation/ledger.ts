/**
 * The continuation ledger: one directory (`<home>/continuations/`, 0700) holding, per key K,
 * `K.plan.json`, `K.claim`, `K.skip` and `K.outcome`, and globally `dispatch.lock` (lock.ts),
 * `.last-dispatch`, `config.json`, `hold` and `audit.ndjson` (audit.ts). Reads go through
 * fs/read.ts (no symlinks, FIFOs or devices; size-capped; ours only), and what they read is
 * validated by schema.ts. Plans, outcomes and `.last-dispatch` are replaced
 * atomically; claims and skips are created exclusively from fully written temp files, so no
 * reader ever sees a torn one.
 */
import { RosterError } from "../errors.ts";
import { privateChild, trustedDir } from "../fs/dir.ts";
import { baseName, join, parentOf } from "../fs/path.ts";
import { exists, readJson } from "../fs/read.ts";
import { createExclusive, writeAtomic } from "../fs/write.ts";
import { parseTime } from "../time.ts";
import type { Mode } from "./rules.ts";
import { isObject, type Result } from "../format/result.ts";
import {
  type ClaimRecord,
  lastDispatchOf,
  modeOf,
  type Outcome,
  outcomeIdOf,
  type Plan,
  type SkipRecord,
  validateClaim,
  validatePlan,
  validateSkip,
} from "./schema.ts";
import { untrustedFile } from "../fs/private.ts";

/** Every ledger file roster writes: indented JSON, one trailing newline. */
export const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

const LAST_DISPATCH_FILE = ".last-dispatch";
export const CONFIG_FILE = "config.json";
export const HOLD_FILE = "hold";

export const defaultLedger = (home: string) => join(home, "continuations");
export const planPath = (dir: string, key: string) => join(dir, `${key}.plan.json`);
export const claimPath = (dir: string, key: string) => join(dir, `${key}.claim`);
export const skipPath = (dir: string, key: string) => join(dir, `${key}.skip`);
export const outcomePath = (dir: string, key: string) => join(dir, `${key}.outcome`);

// ---------------------------------------------------------------------------------------
// Reading

export type PlanRead = Result<Plan> | null;

/** The plan of `key`: valid, damaged (with why), or null when there is none. */
export function readPlan(dir: string, key: string): PlanRead {
  const read = readJson(planPath(dir, key));
  if (read === null) return null;
  return read.ok ? validatePlan(read.value, key) : { ok: false, problem: read.problem };
}

/** Whether `key` is claimed: anything at all at `K.claim` counts, readable or not. */
export function isClaimed(dir: string, key: string): boolean {
  return exists(claimPath(dir, key));
}

export type SkipRead = SkipRecord | { damaged: string } | null;

/** The skip record of `key`; an unreadable or damaged one is `{damaged}` (a veto). */
export function readSkip(dir: string, key: string): SkipRead {
  const path = skipPath(dir, key);
  const read = readJson(path);
  if (read === null) return exists(path) ? { damaged: "cannot be read" } : null;
  const checked = read.ok ? validateSkip(read.value) : read;
  return checked.ok ? checked.value : { damaged: checked.problem };
}

/**
 * When the last dispatch happened. A damaged file falls back to its mtime (it was written
 * then), and to now when even that is unknown: spacing fails closed.
 */
export function readLastDispatch(dir: string, now = Date.now()): number | null {
  const path = join(dir, LAST_DISPATCH_FILE);
  const read = readJson(path);
  if (read === null) return exists(path) ? now : null;
  return (read.ok ? lastDispatchOf(read.value) : null) ?? read.mtimeMs ?? now;
}

/** The mode and, when it is not on, why: which file, and what is wrong with it. */
export interface ModeRead {
  mode: Mode;
  path: string;
  /** Why continuations are off; null when the mode is on or dry-run. */
  detail: string | null;
}

/** Reads `config.json`, saying what is wrong when it does not turn continuations on. */
export function readMode(dir: string): ModeRead {
  const path = join(dir, CONFIG_FILE);
  const off = (detail: string): ModeRead => ({ mode: "off", path, detail });
  const read = readJson(path);
  if (read === null) {
    const near = caseVariant(dir, CONFIG_FILE);
    return off(
      near === null
        ? `no config.json: continuations are off until \`roster continuation-mode on\`: ${path}`
        : `no config.json, but ${near} (the name must be config.json, in lower case): ${path}`,
    );
  }
  if (!read.ok) return off(`config.json is ignored: ${read.problem}: ${path}`);
  const mode = modeOf(read.value);
  if (mode !== "off") return { mode, path, detail: null };
  const v = read.value;
  if (!isObject(v) || !("mode" in v)) return off(`config.json has no "mode": ${path}`);
  if (v.mode === "off") return off(`mode is "off" in config.json: ${path}`);
  const got = JSON.stringify(v.mode)?.slice(0, 40);
  return off(`config.json's mode must be "on", "off" or "dry-run", got ${got}: ${path}`);
}

/** Another spelling of `name` in `dir` (Config.json for config.json), or null. */
function caseVariant(dir: string, name: string): string | null {
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name !== name && e.name.toLowerCase() === name) return e.name;
    }
  } catch { /* no ledger yet */ }
  return null;
}

interface LedgerState {
  plan: PlanRead;
  claimed: boolean;
  skip: SkipRead;
  lastDispatchMs: number | null;
  mode: ModeRead;
  hold: boolean;
}

/** Everything the rules need from the ledger for one key, read once. */
export function readState(dir: string, key: string, now = Date.now()): LedgerState {
  return {
    plan: readPlan(dir, key),
    claimed: isClaimed(dir, key),
    skip: readSkip(dir, key),
    lastDispatchMs: readLastDispatch(dir, now),
    mode: readMode(dir),
    hold: exists(join(dir, HOLD_FILE)),
  };
}

/**
 * Whether `key`'s continuation is still open: a valid plan, neither claimed nor skipped (or
 * declined), and not past its deadline. An open key keeps its session's registry row.
 */
export function isKeyOpen(dir: string, key: string, now = Date.now()): boolean {
  if (isClaimed(dir, key) || exists(skipPath(dir, key))) return false;
  const read = readPlan(dir, key);
  if (read === null || !read.ok) return false;
  const deadline = read.value.deadline === null ? null : parseTime(read.value.deadline);
  return deadline === null || now <= deadline;
}

/** The claim of `key`; null when there is none or it cannot be read as one. */
export function readClaim(dir: string, key: string): ClaimRecord | null {
  const read = readJson(claimPath(dir, key));
  return read?.ok ? validateClaim(read.value, key) : null;
}

/** The continuation id `K.outcome` names; undefined when there is no readable outcome. */
export function readOutcomeId(dir: string, key: string): string | null | undefined {
  const read = readJson(outcomePath(dir, key));
  return read?.ok ? outcomeIdOf(read.value) : undefined;
}

// ---------------------------------------------------------------------------------------
// Writing

/**
 * The ledger directory `dir`, checked as fs/dir.ts says: no other user can rewrite any
 * directory from `/` down to it, and it is the caller's own real directory (never a link),
 * 0700. A claim is only as permanent as the directories holding it: where another user could
 * move the ledger aside, a key could be dispatched twice. The home of the default ledger
 * (`home` given, `dir` its continuations/) is tightened when loose, as the store does; any
 * other parent that others may write to is refused. Returns null when it does not exist and
 * `create` is not set.
 */
export function checkLedger(dir: string, create: boolean, home?: string): string | null {
  const own = home !== undefined && dir === defaultLedger(home);
  const parent = trustedDir(parentOf(dir), own ? "the store" : "the ledger", {
    create,
    tighten: own,
  });
  if (parent === null) return null;
  const ledger = privateChild(parent, baseName(dir), create, "Ledger");
  // Its owner was checked above; the mode rule is fs/private.ts's (none on Windows).
  if (ledger !== null && !create && untrustedFile(Deno.lstatSync(ledger), Deno.build.os, null)) {
    throw new RosterError(
      `The ledger is not private (another user may write to it), so a claim there could be undone: ${dir}`,
    );
  }
  return ledger;
}

export function ensureLedger(dir: string, home?: string): string {
  return checkLedger(dir, true, home)!;
}

/** Refuses a ledger that another user could rewrite, before anything is claimed in it. */
export function assertPrivateLedger(dir: string) {
  checkLedger(dir, false);
}

/**
 * Flushes the ledger directory itself: a file's data is on disk once it is flushed, but its
 * name (a rename, a link) only once the directory is. Every create and rename a decision
 * depends on is followed by this, so a power loss cannot take back a claim, skip or plan.
 */
export function syncDir(dir: string) {
  if (Deno.build.os === "windows") return; // directories cannot be opened for a flush there
  try {
    using d = Deno.openSync(dir, { read: true });
    d.syncSync();
  } catch (err) {
    throw new RosterError(`Could not flush the ledger directory: ${dir}`, { cause: err });
  }
}

export function writePlan(dir: string, plan: Plan) {
  writeAtomic(planPath(dir, plan.key), json(plan));
  syncDir(dir);
}

/** Creates `K.claim`; false when it already exists (someone else claimed first). */
export function createClaim(dir: string, claim: ClaimRecord): boolean {
  const created = createExclusive(claimPath(dir, claim.key), json(claim)) !== null;
  if (created) syncDir(dir);
  return created;
}

/** Creates `K.skip`, first writer wins; false when one exists. */
export function createSkip(dir: string, key: string, skip: SkipRecord): boolean {
  const created = createExclusive(skipPath(dir, key), json(skip)) !== null;
  if (created) syncDir(dir);
  return created;
}

/** Removes `K.skip` (and its outcome): only for a skip that decided nothing (see plan.ts). */
export function removeSkip(dir: string, key: string) {
  for (const path of [skipPath(dir, key), outcomePath(dir, key)]) {
    try {
      Deno.removeSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new RosterError(`Could not remove: ${path}`, { cause: err });
      }
    }
  }
  syncDir(dir);
}

export function writeOutcome(
  dir: string,
  key: string,
  outcome: Pick<Outcome, "outcome" | "continuation_id" | "at"> & Record<string, unknown>,
) {
  writeAtomic(outcomePath(dir, key), json(outcome));
  syncDir(dir);
}

export function writeLastDispatch(dir: string, atMs: number) {
  writeAtomic(join(dir, LAST_DISPATCH_FILE), json({ at: new Date(atMs).toISOString() }));
  syncDir(dir);
}
