/**
 * Liveness, judged at read time and never stored. `judge` is pure: the record, what this
 * machine is, and what the process backend answered go in; a verdict comes out. Where
 * roster cannot tell, the verdict is `unknown`, never `dead`.
 */
import type { Probe, ProcessBackend, TokenMatch } from "../process/types.ts";
import type { Liveness, Reason, SessionRecord } from "./record.ts";

export interface Verdict {
  liveness: Liveness;
  reason: Reason;
}

export interface Here {
  host: string;
  bootId: string | null;
  machineId?: string | null;
  pidNs?: string | null;
}

type Judged =
  & Pick<SessionRecord, "host" | "boot_id" | "start_token" | "session_pid">
  & Partial<Pick<SessionRecord, "machine_id" | "pid_ns">>;

/** Both known and different: only then is it another machine or namespace. */
const differ = (a: string | null | undefined, b: string | null | undefined) =>
  a != null && b != null && a !== b;

const UNSUPPORTED: Verdict = { liveness: "unknown", reason: "unsupported" };

/**
 * What a probe alone says of a pid: exited, unsupported or zombie; null when a live process
 * holds it (then only a start token can say whether it is the recorded one).
 */
export function probeVerdict(p: Probe): Verdict | null {
  if (p.kind === "gone") return { liveness: "dead", reason: "exited" };
  if (p.kind === "unsupported") return UNSUPPORTED;
  if (p.info.zombie) return { liveness: "dead", reason: "zombie" };
  return null;
}

export function judge(
  record: Judged,
  here: Here,
  probe: () => Probe,
  compareTokens: (recorded: string, current: string) => TokenMatch,
): Verdict {
  // Another host: by name, or the same name on another machine or in another pid namespace
  // (a container sharing the home): its pids mean nothing here.
  if (
    record.host !== here.host || differ(record.machine_id, here.machineId) ||
    differ(record.pid_ns, here.pidNs)
  ) {
    return { liveness: "unknown", reason: "other-host" };
  }
  if (differ(record.boot_id, here.bootId)) return { liveness: "dead", reason: "rebooted" };
  const p = probe();
  if (p.kind !== "exists" || p.info.zombie) return probeVerdict(p)!;
  if (record.start_token === null) {
    // With no token the pid is all there is: a thread id holding it is not the process.
    return p.info.isThread
      ? { liveness: "dead", reason: "exited" }
      : { liveness: "alive", reason: "pid-only" };
  }
  if (p.info.startToken === null) return { liveness: "unknown", reason: "unverifiable" };
  switch (compareTokens(record.start_token, p.info.startToken)) {
    case "same":
      return { liveness: "alive", reason: "running" };
    case "different":
      return { liveness: "dead", reason: "pid-reused" };
    default:
      return { liveness: "unknown", reason: "unverifiable" };
  }
}

/** Judges many records against one backend, probing each pid at most once per call. */
export class Judge {
  readonly #probes = new Map<number, Probe>();
  constructor(readonly backend: ProcessBackend, readonly here: Here) {}

  judge(record: Judged, fresh = false): Verdict {
    return judge(
      record,
      this.here,
      () => this.probe(record.session_pid, fresh),
      (a, b) => this.backend.compareTokens(a, b),
    );
  }

  /** The backend, with probes going through this judge's cache (one read per pid a call). */
  cachedBackend(): ProcessBackend {
    return { ...this.backend, probe: (pid) => this.probe(pid) };
  }

  probe(pid: number, fresh = false): Probe {
    let p = fresh ? undefined : this.#probes.get(pid);
    if (p === undefined) {
      p = this.backend.probe(pid);
      this.#probes.set(pid, p);
    }
    return p;
  }
}
