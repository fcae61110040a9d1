/**
 * continuation-plan and continuation-release: a plan made from the interrupted session's
 * registry row, written and released under dispatch.lock so that a plan never changes in the
 * middle of a claim's decide-again-and-write.
 */
import { RosterError, UsageError } from "../errors.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { hostDirName, readRows, type Row } from "../registry/mod.ts";
import { ensureLedger, isClaimed, readPlan, readSkip, writePlan } from "./ledger.ts";
import { ADMIN_LOCK_PATIENCE_MS, withDispatchLock } from "./lock.ts";
import { type Cause, type Plan, randomHex } from "./schema.ts";

/** What continuation-plan's flags ask for, validated. */
export interface PlanRequest {
  key: string;
  pid: number;
  deadlineMs: number;
  notBeforeMs: number | null;
  spacingMs: number;
  frozenMarker: string | null;
  cause: Cause | null;
  /** Plan it released at once. */
  release: boolean;
}

/** Where a plan is written and whose registry names its session. */
interface PlanPlace {
  dir: string;
  home: string;
  host: string;
  judge: LivenessJudge;
}

/** Pure: the plan `req` asks for, of the session `row` shows, made at `now` under `token`. */
export function buildPlan(req: PlanRequest, row: Row, now: number, token: string): Plan {
  const iso = (ms: number) => new Date(now + ms).toISOString();
  return {
    schema: 1,
    key: req.key,
    token,
    state: req.release ? "released" : "planned",
    session: {
      session_pid: req.pid,
      start_token: row.start_token,
      boot_id: row.boot_id,
      machine_id: row.machine_id,
      pid_ns: row.pid_ns,
      host: row.host!,
      session_id: row.session_id,
      agent: row.agent,
      runtime: row.runtime,
      cwd: row.cwd,
      tmux_pane: row.tmux_pane,
    },
    frozen_marker: req.frozenMarker,
    // Roster sees the interruption only as a dead owner: at or before now.
    interrupted_at: row.liveness === "dead" ? new Date(now).toISOString() : null,
    cause: req.cause,
    tool_calls: [],
    not_before: req.notBeforeMs === null ? null : iso(req.notBeforeMs),
    deadline: iso(req.deadlineMs),
    spacing_ms: req.spacingMs,
  };
}

/** The registry row of `pid`: this host's when several hosts have one. */
function findRow(home: string, host: string, judge: LivenessJudge, pid: number): Row {
  const rows = readRows(home, judge).filter((r) => r.session_pid === pid);
  const here = rows.filter((r) => r.host === host || r.host === hostDirName(host));
  const pick = here.length === 1 ? here : rows;
  if (pick.length === 0) {
    throw new UsageError(
      `Invalid --session: no record for pid ${pid} in ${home} (see roster list --all)`,
    );
  }
  if (pick.length > 1) {
    throw new UsageError(`Invalid --session: pid ${pid} has records on several hosts`);
  }
  const row = pick[0];
  if (row.malformed) {
    throw new UsageError(
      `Invalid --session: the record of pid ${pid} is malformed (${row.detail}): ${row.path}`,
    );
  }
  return row;
}

/** Runs `fn` holding dispatch.lock, so plan changes never interleave with a claim. */
async function underLock<T>(dir: string, judge: LivenessJudge, fn: () => T): Promise<T> {
  const locked = await withDispatchLock(dir, judge, ADMIN_LOCK_PATIENCE_MS, fn);
  if ("busy" in locked) {
    throw new RosterError(
      `Could not take the dispatch lock in ${
        ADMIN_LOCK_PATIENCE_MS / 1000
      } s: held by pid ${locked.busy.pid}: ${dir}`,
    );
  }
  return locked.done;
}

/** A key claimed or skipped stays decided forever: a new plan needs a new key. */
function refuseDecided(dir: string, key: string) {
  if (isClaimed(dir, key)) {
    throw new UsageError(`Invalid --key: ${key} is already claimed; plan under a new key`);
  }
  if (readSkip(dir, key) !== null) {
    throw new UsageError(`Invalid --key: ${key} is already skipped; plan under a new key`);
  }
}

/** Writes the plan `req` asks for (a new token each time), and returns it. */
export async function createPlan(place: PlanPlace, req: PlanRequest): Promise<Plan> {
  const { dir, judge } = place;
  const row = findRow(place.home, place.host, judge, req.pid);
  const plan = buildPlan(req, row, Date.now(), randomHex(16));
  ensureLedger(dir, place.home);
  await underLock(dir, judge, () => {
    refuseDecided(dir, req.key);
    writePlan(dir, plan);
  });
  return plan;
}

const noPlan = (dir: string, key: string) =>
  new UsageError(`Invalid --key: no plan for ${key} in ${dir}`);

/** Flips `key`'s plan to released, keeping its token; a released plan is left as it is. */
export async function releasePlan(dir: string, judge: LivenessJudge, key: string): Promise<Plan> {
  // Looked for before anything is created, so that a key without a plan leaves no ledger.
  if (readPlan(dir, key) === null) throw noPlan(dir, key);
  ensureLedger(dir);
  return await underLock(dir, judge, () => {
    const read = readPlan(dir, key);
    if (read === null) throw noPlan(dir, key);
    if (!read.ok) {
      throw new RosterError(`Could not release: the plan is damaged (${read.problem}): ${key}`);
    }
    const next: Plan = { ...read.plan, state: "released" };
    if (read.plan.state !== "released") writePlan(dir, next);
    return next;
  });
}
