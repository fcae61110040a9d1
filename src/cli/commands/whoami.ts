/** `roster whoami`: the registered live session that owns the calling process. */
import { lazyModule } from "../../lazy.ts";
import { envVar } from "../../env.ts";
import { RosterError } from "../../errors.ts";
import { ancestors, hostsSessions } from "../../registry/owner.ts";
import { DECLARED_SESSION_VARS } from "../../registry/session_id.ts";
import type { Row } from "../../registry/row.ts";
import type { LivenessJudge } from "../../identity/liveness.ts";
import { readRecordRow } from "../../registry/store.ts";
import { EXIT } from "../../exit.ts";
import { parseTime } from "../../time.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { describeRow, printable } from "../terminal.ts";

/**
 * The nearest ancestor of the caller (the caller included) that registered itself and is
 * alive with a matching start token. Walks at most MAX_DEPTH levels (registry/owner.ts).
 */
export async function run(ctx: Context, _args: Parsed): Promise<number> {
  const judge = await ctx.judge();
  const backend = judge.cachedBackend();
  // The nearest ancestor's record roster could not read (no access, damaged) and that may be
  // this process's (not written before it started: a torn record of a pid init holds since a
  // reboot is not): "not found" would be a guess, so with no owner found it is a failure.
  let unreadable: Row | null = null;
  for (const info of ancestors(backend, Deno.ppid)) {
    const row = readRecordRow(ctx.home, ctx.host, info.pid, judge) ??
      (hostsSessions(backend, info.pid) ? hostedRow(ctx, judge, info.pid) : null);
    if (row?.malformed) {
      const written = row.registered_at === null ? null : parseTime(row.registered_at);
      if (written === null || info.startedAtMs === null || written >= info.startedAtMs) {
        unreadable ??= row;
      }
    }
    // "running" (or "hosted", its server's): the record has a start token and it matches the
    // process's now; verified: the process registered itself (or a descendant did), not a pid
    // someone else named.
    const own = row?.reason === "running" || row?.reason === "hosted";
    if (row === null || !own || row.pid_verified !== true) continue;
    if (ctx.json) ctx.printJson(row);
    else {
      ctx.out(
        describeRow(row) + (row.session_id ? `, session ${printable(row.session_id)}` : "") +
          (row.cwd ? `, in ${printable(row.cwd)}` : ""),
        true, // each of the record's values escaped on its own
      );
    }
    return 0;
  }
  const declared = await fromDeclaredId(ctx, judge);
  if (declared !== null) {
    const { row, name } = declared;
    if (ctx.json) ctx.printJson({ ...row, verified: false, matched_by: name });
    else {
      ctx.out(
        describeRow(row) + (row.session_id ? `, session ${printable(row.session_id)}` : "") +
          (row.cwd ? `, in ${printable(row.cwd)}` : "") +
          ` (unverified: matched by $${name}; its process is not visible from this pid namespace)`,
        true,
      );
    }
    return 0;
  }
  if (unreadable !== null) {
    throw new RosterError(
      `Cannot tell which session owns this process: the record of pid ${unreadable.session_pid} ` +
        `cannot be read (${unreadable.detail}): ${unreadable.path}`,
    );
  }
  throw new NotFoundError(
    "No registered live session owns this process: none of its ancestors registered itself",
  );
}

/**
 * The caller runs under a shared server (Codex's app-server) that hosts many sessions: its own
 * is the one the harness declares to its tools ($CODEX_THREAD_ID, ...), filed under the server.
 */
function hostedRow(ctx: Context, judge: LivenessJudge, pid: number): Row | null {
  for (const name of DECLARED_SESSION_VARS) {
    const id = envVar(name);
    const row = id ? readRecordRow(ctx.home, ctx.host, pid, judge, id) : null;
    if (row !== null) return row;
  }
  return null;
}

/**
 * Inside a harness's sandbox (a new pid namespace) the owner is not among the ancestors: the
 * session the harness declares to its tools ($CODEX_THREAD_ID, $GEMINI_SESSION_ID,
 * $CLAUDE_CODE_SESSION_ID, $ROSTER_SESSION_ID) is looked up in the registry instead, among
 * records of this machine written from another pid namespace. Null when nothing matches.
 */
async function fromDeclaredId(
  ctx: Context,
  judge: LivenessJudge,
): Promise<{ row: Row; name: string } | null> {
  const here = judge.here;
  if (!here.pidNs) return null;
  const ids = DECLARED_SESSION_VARS.map((name) => ({ name, id: envVar(name) }));
  if (!ids.some(({ id }) => id)) return null;
  // The store's reader is loaded only here: the common whoami (its owner among its ancestors)
  // never reads the whole store (src/lazy.ts).
  const { forEachRow } = await lazyModule<typeof import("../../registry/scan.ts")>(
    "../../registry/scan.ts",
    (s) => import(s),
  )();
  for (const { name, id } of ids) {
    if (!id) continue;
    let found: Row | null = null;
    forEachRow(ctx.home, judge, (row) => {
      if (row.malformed || row.session_id !== id || row.host !== ctx.host) return;
      if (row.pid_ns === here.pidNs) return; // visible from here: the walk would have found it
      if (here.machineId && row.machine_id && row.machine_id !== here.machineId) return;
      // Never an ended one: stamped ended from its own namespace, parked, resumed.
      if (row.liveness === "dead" || row.ended_at != null) return;
      if (found === null || better(row, found)) found = row;
    });
    if (found) return { row: found, name };
  }
  return null;
}

/** Of two records of one declared id: the live one (own-session), else the newer. */
function better(a: Row, b: Row): boolean {
  if ((a.liveness === "alive") !== (b.liveness === "alive")) return a.liveness === "alive";
  const at = (r: Row) => (r.registered_at === null ? null : parseTime(r.registered_at)) ?? 0;
  return at(a) > at(b) || (at(a) === at(b) && a.path > b.path);
}

/** Nothing to answer with: "not found" (3), apart from a runtime failure (1). */
class NotFoundError extends RosterError {
  override readonly exitCode = EXIT.DEAD;
}
