/**
 * continuation-plan and continuation-release: a plan made from the interrupted session's
 * registry row, written and released under dispatch.lock so that a plan never changes in the
 * middle of a claim's decide-again-and-write.
 */
import { RosterError, UsageError } from "../errors.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { forEachRow, holdSession, hostDirName, type Row, sortRows } from "../registry/mod.ts";
import { parseTime } from "../time.ts";
import { appendAudit } from "./audit.ts";
import {
  ensureLedger,
  isClaimed,
  readClaim,
  readPlan,
  readSkip,
  removeSkip,
  writePlan,
} from "./ledger.ts";
import { keyOfFile } from "./keys.ts";
import { ADMIN_LOCK_PATIENCE_MS, withDispatchLock } from "./lock.ts";
import {
  type Cause,
  DEFAULT_CHAIN_LIMIT,
  MAX_TOOL_CALLS,
  type Plan,
  randomHex,
  type ToolCall,
} from "./schema.ts";

/** How far back the claims of one session count towards its chain. */
const CHAIN_WINDOW_MS = 24 * 3_600_000;

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
  /** `--chain-limit`; null: the default. */
  chainLimit?: number | null;
  /** The tool calls the session's hooks recorded as open when it died. */
  toolCalls?: ToolCall[];
}

/** Where a plan is written and whose registry names its session. */
interface PlanPlace {
  dir: string;
  home: string;
  host: string;
  judge: LivenessJudge;
}

/** Pure: the plan `req` asks for, of the session `row` shows, made at `now` under `token`. */
export function buildPlan(
  req: PlanRequest,
  row: Row,
  now: number,
  token: string,
  chain = 1,
): Plan {
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
    tool_calls: (req.toolCalls ?? []).slice(0, MAX_TOOL_CALLS),
    not_before: req.notBeforeMs === null ? null : iso(req.notBeforeMs),
    deadline: iso(req.deadlineMs),
    spacing_ms: req.spacingMs,
    chain,
    chain_limit: req.chainLimit ?? DEFAULT_CHAIN_LIMIT,
  };
}

/** The registry row of `pid`: this host's when several hosts have one. */
function findRow(home: string, host: string, judge: LivenessJudge, pid: number): Row {
  // Streamed, and only this pid's rows kept: memory follows its records, not the store's.
  const rows: Row[] = [];
  forEachRow(home, judge, (r) => {
    if (r.session_pid === pid) rows.push(r);
  });
  sortRows(rows);
  let here = rows.filter((r) => r.host === host || r.host === hostDirName(host));
  // The pid's current record and ended ones moved aside: the one a restore looks for is
  // the newest ended row that is neither parked nor resumed (rows come newest first).
  if (here.length > 1) {
    const ended = here.filter((r) => r.liveness === "dead" && !isSetAside(r));
    here = ended.length > 0 ? ended.slice(0, 1) : here.slice(0, 1);
  }
  const pick = here.length === 1 ? here : rows;
  if (pick.length === 0) {
    throw new UsageError(
      `Invalid --session: no record for pid ${pid} in ${home} (see roster list --all)`,
    );
  }
  if (pick.length > 1) {
    throw new UsageError(`Invalid --session: pid ${pid} has records on several hosts`);
  }
  return plannable(pick[0]);
}

/** The row, when a plan may be made for it: valid, not set aside, naming an identity. */
function plannable(row: Row): Row {
  const pid = row.session_pid;
  if (row.malformed) {
    throw new UsageError(
      `Invalid --session: the record of pid ${pid} is malformed (${row.detail}): ${row.path}`,
    );
  }
  if (isSetAside(row)) {
    throw new UsageError(
      `Invalid --session: pid ${pid}'s session is ${row.reason}: it is not continued automatically`,
    );
  }
  // A plan with neither names no identity: any hook that reports nulls would match it.
  if (row.session_id === null && row.tmux_pane === null) {
    throw new UsageError(
      `Invalid --session: pid ${pid}'s record has no session id and no tmux pane, so no hook ` +
        "could prove it is that session (register it with --session-id)",
    );
  }
  return row;
}

/** Parked (set aside on purpose) or resumed (it lives on in its successor). */
const isSetAside = (row: Row) => row.reason === "parked" || row.reason === "resumed";

/**
 * Pure enough: one more than the continuations claimed in this ledger for the same session
 * (host and session id) within the last 24 hours. Read at plan time only (it reads every
 * claimed key's plan), never on a hook's path.
 */
function chainOf(dir: string, row: Row, now: number): number {
  if (row.session_id === null) return 1;
  let chain = 1;
  let keys: string[];
  try {
    keys = [...Deno.readDirSync(dir)].map((e) => keyOfFile(e.name))
      .filter((f) => f?.file === "claim").map((f) => f!.key);
  } catch {
    return 1;
  }
  for (const key of keys) {
    const claim = readClaim(dir, key);
    const at = claim === null ? null : parseTime(claim.at);
    if (at === null || now - at > CHAIN_WINDOW_MS) continue;
    const plan = readPlan(dir, key);
    if (!plan?.ok) continue;
    const s = plan.value.session;
    if (s.session_id === row.session_id && hostDirName(s.host) === hostDirName(row.host ?? "")) {
      chain++;
    }
  }
  return chain;
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

/**
 * A key claimed, skipped or declined stays decided: a new plan needs a new key. A skip that
 * says only that continuations were off (written by versions before they stopped writing
 * one) decided nothing: it is removed, and the key planned again.
 */
function refuseDecided(dir: string, key: string) {
  if (isClaimed(dir, key)) {
    throw new UsageError(`Invalid --key: ${key} is already claimed; plan under a new key`);
  }
  const skip = readSkip(dir, key);
  if (skip === null) return;
  if ("reason" in skip && skip.reason === "disabled" && skip.class === "veto") {
    removeSkip(dir, key);
    appendAudit(dir, { event: "unskip", key, reason: "disabled" });
    return;
  }
  throw new UsageError(`Invalid --key: ${key} is already decided (skipped); plan under a new key`);
}

/**
 * Writes the plan `req` asks for (a new token each time), and returns it. `given`: the row
 * the caller already chose (a restore plans for the exact record it relaunches; a pid alone
 * can name several, as a shared server's sessions do), checked as findRow checks its own.
 */
export async function createPlan(place: PlanPlace, req: PlanRequest, given?: Row): Promise<Plan> {
  const { dir, judge } = place;
  const row = given === undefined
    ? findRow(place.home, place.host, judge, req.pid)
    : plannable(given);
  ensureLedger(dir, place.home);
  const plan = await underLock(dir, judge, () => {
    refuseDecided(dir, req.key);
    const now = Date.now();
    const plan = buildPlan(req, row, now, randomHex(16), chainOf(dir, row, now));
    writePlan(dir, plan);
    return plan;
  });
  // The session's row is kept until this key is finished (docs/continuation.md).
  await holdSession(place.home, place.host, row, { key: req.key, ledger: absolute(dir) });
  return plan;
}

const noPlan = (dir: string, key: string) =>
  new UsageError(`Invalid --key: no plan for ${key} in ${dir}`);

/** The ledger as an absolute path: the registry keeps it to find the key again. */
function absolute(dir: string): string {
  try {
    return Deno.realPathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * Flips `key`'s plan to released, keeping its token; with `pane`, the pane the session was
 * relaunched in becomes its identity. A released plan with that pane is left as it is.
 */
export async function releasePlan(
  dir: string,
  judge: LivenessJudge,
  key: string,
  pane: string | null = null,
): Promise<Plan> {
  // Looked for before anything is created, so that a key without a plan leaves no ledger.
  if (readPlan(dir, key) === null) throw noPlan(dir, key);
  ensureLedger(dir);
  return await underLock(dir, judge, () => {
    const read = readPlan(dir, key);
    if (read === null) throw noPlan(dir, key);
    if (!read.ok) {
      throw new RosterError(`Could not release: the plan is damaged (${read.problem}): ${key}`);
    }
    const session = pane === null ? read.value.session : { ...read.value.session, tmux_pane: pane };
    const next: Plan = { ...read.value, state: "released", session };
    if (read.value.state !== "released" || session !== read.value.session) writePlan(dir, next);
    return next;
  });
}
