/**
 * Liveness, judged at read time and never stored. judgeLiveness is pure: an identity, what
 * this host is, and what the process backend answered go in; a verdict comes out. Where
 * roster cannot tell, the verdict is `unknown`, never `dead`.
 */
import { type Probe, type ProcessBackend, type TokenMatch, tokenScheme } from "../process/types.ts";
import type { HostIdentity, ProcessIdentity } from "./identity.ts";
import { RosterError } from "../errors.ts";
import { parseTime } from "../time.ts";

export type Liveness = "alive" | "dead" | "unknown";
export type Reason =
  | "running"
  | "pid-only"
  | "exited"
  | "zombie"
  | "pid-reused"
  | "rebooted"
  /** The registry's lifecycle: set aside on purpose (`park`), or continued by a successor. */
  | "parked"
  | "resumed"
  /** The pid is a shared server hosting the session: it runs, whether the session does or not. */
  | "hosted"
  /**
   * Seen from another pid namespace of the same machine (a sandbox, a container): the caller's
   * own session, which it declares (registry/owner.ts DECLARED_SESSION_VARS), so it runs.
   */
  | "own-session"
  | "other-host"
  /** The same machine, another pid namespace: its pids mean nothing from here. */
  | "other-pid-ns"
  /**
   * The /proc in view is another pid namespace's (process/types.ts procForeign): the record's
   * pid is this namespace's, and nothing here can probe it.
   */
  | "foreign-proc"
  | "unverifiable"
  | "unsupported"
  | "malformed";

export interface Verdict {
  liveness: Liveness;
  reason: Reason;
}

/** Both known and different: only then is it another machine or namespace. */
const differ = (a: string | null | undefined, b: string | null | undefined) =>
  a != null && b != null && a !== b;

/**
 * The verdicts that depend on nothing but the probe, one frozen object each: `list` judges a
 * store of thousands of exited pids, and none needs its own.
 */
const verdict = (liveness: Liveness, reason: Reason): Verdict =>
  Object.freeze({ liveness, reason });
const UNSUPPORTED = verdict("unknown", "unsupported");
const EXITED = verdict("dead", "exited");
const ZOMBIE = verdict("dead", "zombie");
const RUNNING = verdict("alive", "running");
const PID_ONLY = verdict("alive", "pid-only");
const PID_REUSED = verdict("dead", "pid-reused");
const UNVERIFIABLE = verdict("unknown", "unverifiable");
const FOREIGN_PROC = verdict("unknown", "foreign-proc");
const REBOOTED = verdict("dead", "rebooted");
const OTHER_HOST = verdict("unknown", "other-host");

/**
 * What a probe alone says of a pid: exited, unsupported or zombie; null when a live process
 * holds it (then only a start token can say whether it is the recorded one).
 */
export function probeVerdict(p: Probe): Verdict | null {
  if (p.kind === "gone") return EXITED;
  if (p.kind === "unsupported") return UNSUPPORTED;
  if (p.info.zombie) return ZOMBIE;
  return null;
}

/** The verdict on a pid that has no record: whether a process holds it, nothing more. */
export function bareVerdict(probe: Probe): Verdict {
  return probeVerdict(probe) ?? RUNNING;
}

/**
 * What a judgement asks of the process table: a probe of a pid, a comparison of start tokens,
 * and, where a listing of the table proves a pid gone, that proof (process/types.ts
 * exitedBefore).
 */
export interface ProcessLook {
  probe(pid: number): Probe;
  compareTokens(recorded: string, current: string): TokenMatch;
  exitedBefore?(pid: number, startToken: string): boolean;
  /** The process table in view is another pid namespace's (ProcessBackend.procForeign). */
  procForeign?(): boolean;
}

const NO_SESSIONS: ReadonlySet<string> = new Set();

/**
 * Pure: whether the process `identity` names still holds its pid on this host, the one
 * decision (LivenessJudge.verdict is this with its cache; the liveness matrix tests it). A pid
 * the listing proves gone is not probed: dead is for good. `declared`: the session ids the
 * caller's harness declares (ownSessionVerdict).
 */
export function judgeLiveness(
  identity: ProcessIdentity & Written & { session_id?: string | null },
  here: HostIdentity,
  look: ProcessLook,
  declared: ReadonlySet<string> = NO_SESSIONS,
): Verdict {
  const token = identity.start_token;
  const judged = placeVerdict(identity, here) ??
    (look.procForeign?.() === true
      ? FOREIGN_PROC
      : token !== null && look.exitedBefore?.(identity.session_pid, token) === true
      ? EXITED
      : processVerdict(identity, look.probe(identity.session_pid), look.compareTokens));
  return ownSessionVerdict(judged, identity.session_id, declared);
}

/**
 * Pure, judgeLiveness's first half: the verdict where `identity` is not of this host, pid
 * namespace or boot; null where a probe of its pid must say.
 */
export function placeVerdict(
  identity: ProcessIdentity & Written,
  here: HostIdentity,
): Verdict | null {
  // Another host: by name, or the same name on another machine or OS (Windows and the WSL2
  // beside it share a hostname): its pids mean nothing here, and neither do those of another
  // pid namespace (a container sharing the home, a sandbox).
  if (
    identity.host !== here.host || differ(identity.machine_id, here.machineId) ||
    differ(identity.os ?? tokenOs(identity.start_token), here.os)
  ) {
    return { liveness: "unknown", reason: "other-host" };
  }
  if (differ(identity.pid_ns, here.pidNs)) return { liveness: "unknown", reason: "other-pid-ns" };
  if (differ(identity.boot_id, here.bootId)) return bootVerdict(identity, here);
  // A boot id this process cannot read (a /proc mounted subset=pid, a FIFO planted at it) cannot
  // say the record is of this boot: a clone's live session must not be probed here and pruned.
  if (identity.boot_id != null && here.bootId == null) return UNVERIFIABLE;
  return null;
}

/** When a record was last written: its registration (a refresh renews it) and its activity. */
export interface Written {
  registered_at?: string | null;
  activity_at?: string | null;
}

/**
 * Pure: the verdict on a record of another boot of this host and machine id. It is this
 * machine's past, so it rebooted, only where this machine's boot history holds the record's
 * boot: clones of one image share a hostname and machine id, and one's boot is never in the
 * other's history (issue 24 item 7). A record last written after this boot started is never
 * this machine's past, whatever its history holds: a disk copied from a running machine carries
 * that machine's live boot in its history, and its sessions, still writing there, must not be
 * called rebooted. A record from before histories (no `os`: an older roster wrote it, perhaps a
 * clone's still running one) is this machine's past also where it was last written before this
 * boot started: a crash before an upgrade is restored. A caller that keeps no history, and an
 * identity that is not a record, are judged as before.
 */
export function bootVerdict(
  identity: ProcessIdentity & Written,
  here: HostIdentity,
): Verdict {
  if (here.pastBoots === undefined) return REBOOTED;
  // Not a record (a dispatch lock's owner, a plan's session: os-less by design, a ledger being
  // one host's): judged as before.
  if (identity.os == null && identity.registered_at === undefined) return REBOOTED;
  const written = lastWrittenMs(identity);
  const booted = written === null ? null : here.bootStartedMs?.() ?? null;
  const since = written !== null && booted !== null ? written >= booted : null;
  if (since === true) return OTHER_HOST;
  const seen = here.pastBoots();
  if (seen !== null && identity.boot_id != null && seen.has(identity.boot_id)) return REBOOTED;
  if (identity.os == null && since === false) return REBOOTED;
  return OTHER_HOST;
}

/**
 * Pure: the newest of a record's registration and activity times, epoch ms; null if neither:
 * the last sign of its session (prune's age of an unknown row counts from it too).
 */
export function lastWrittenMs(w: Written): number | null {
  let newest: number | null = null;
  for (const at of [w.registered_at, w.activity_at]) {
    const ms = at == null ? null : parseTime(at);
    if (ms !== null && (newest === null || ms > newest)) newest = ms;
  }
  return newest;
}

/**
 * Pure: the OS a start token was read on, by its scheme (process/types.ts: `windows:`,
 * `darwin:`, `freebsd:`, Linux's bare clock ticks), or null (`ps:`, none): the OS of a record
 * written before records said it.
 */
export function tokenOs(token: string | null): string | null {
  if (!token) return null;
  const scheme = tokenScheme(token);
  switch (scheme) {
    case "":
      return "linux";
    case "windows":
    case "darwin":
    case "freebsd":
      return scheme;
    default:
      return null;
  }
}

/** Pure, judgeLiveness's second half: what the probe of a pid of this host says of `identity`. */
export function processVerdict(
  identity: ProcessIdentity,
  p: Probe,
  compareTokens: (recorded: string, current: string) => TokenMatch,
): Verdict {
  if (p.kind !== "exists" || p.info.zombie) return probeVerdict(p)!;
  if (identity.start_token === null) {
    // With no token the pid is all there is: a thread id holding it is not the process.
    return p.info.isThread ? EXITED : PID_ONLY;
  }
  if (p.info.startToken === null) return UNVERIFIABLE;
  switch (compareTokens(identity.start_token, p.info.startToken)) {
    case "same":
      return RUNNING;
    case "different":
      return PID_REUSED;
    default:
      return UNVERIFIABLE;
  }
}

/**
 * Pure: a session seen from another pid namespace of its machine is the caller's own when the
 * caller declares its id (a harness's tools in its sandbox): the caller runs inside it.
 */
export function ownSessionVerdict(
  verdict: Verdict,
  sessionId: string | null | undefined,
  declared: ReadonlySet<string>,
): Verdict {
  return verdict.reason === "other-pid-ns" && sessionId != null && declared.has(sessionId)
    ? { liveness: "alive", reason: "own-session" }
    : verdict;
}

/** Live processes one judge remembers: far more than a call's ancestry walk or discovery needs. */
const PROBE_CACHE_LIMIT = 4096;

/** Judges many identities against one backend, probing each pid at most once per call. */
export class LivenessJudge {
  readonly #probes = new Map<number, Probe>();
  /** The process table as judgeLiveness looks at it: through this judge's cache, or afresh. */
  readonly #cached = this.#look(false);
  readonly #fresh = this.#look(true);
  /**
   * `declared`: the session ids the caller's harness declares to it (its own session and the
   * ones it runs inside), for ownSessionVerdict.
   */
  constructor(
    readonly backend: ProcessBackend,
    readonly here: HostIdentity,
    readonly declared: ReadonlySet<string> = new Set(),
  ) {}

  /** The verdict on `identity`; `fresh` probes again rather than reuse this call's answer. */
  verdict(
    identity: ProcessIdentity & Written & { session_id?: string | null },
    fresh = false,
  ): Verdict {
    // Never `own-session` here: only the registry knows whether a record of a declared id
    // has ended or is the newest of its id (registry/lifecycle.ts ownSessionOf).
    return judgeLiveness(identity, this.here, fresh ? this.#fresh : this.#cached);
  }

  #look(fresh: boolean): ProcessLook {
    return {
      probe: (pid) => this.probe(pid, fresh),
      compareTokens: (a, b) => this.backend.compareTokens(a, b),
      exitedBefore: (pid, token) => this.backend.exitedBefore?.(pid, token) === true,
      procForeign: () => this.backend.procForeign?.() === true,
    };
  }

  /** The backend, with probes going through this judge's cache (one read per pid a call). */
  cachedBackend(): ProcessBackend {
    return { ...this.backend, probe: (pid) => this.probe(pid) };
  }

  /**
   * What holds `pid`, probed at most once per call while a process holds it. Only a process
   * that exists is remembered: a gone pid is asked again (one failed open, and the answer can
   * only be a newer process), so `list` over a store of dead pids keeps nothing per record.
   */
  probe(pid: number, fresh = false): Probe {
    let p = fresh ? undefined : this.#probes.get(pid);
    if (p === undefined) {
      p = this.backend.probe(pid);
      if (p.kind !== "exists") this.#probes.delete(pid);
      else {
        // Bounded: `list` streams a store of any size through one judge, and its memory must
        // not grow with the store. A pid probed again after the cut is probed afresh.
        if (this.#probes.size >= PROBE_CACHE_LIMIT) this.#probes.clear();
        this.#probes.set(pid, p);
      }
    }
    return p;
  }
}

/**
 * Throws (exit 1) where the /proc in view is another pid namespace's (ProcessBackend.procForeign):
 * `what` writes down which process holds a pid of the caller's namespace, and nothing in view can
 * say (no probe answers, no start token is read), so a write would put a token-less guess in the
 * place of a record that proves its process. A pid a person took from that /proc (`ps`) is
 * another namespace's number as well.
 */
export function requireOwnProc(look: Pick<ProcessLook, "procForeign">, what: string): void {
  if (look.procForeign?.() !== true) return;
  throw new RosterError(
    `Could not ${what}: the /proc in view is another pid namespace's (nsenter -p without -m, ` +
      "unshare -p without --mount-proc), so it cannot show which process holds a pid here; " +
      "run roster where /proc is this namespace's own",
  );
}
