/**
 * What a process is: its pid and start token, and the host it ran on (name, boot, machine,
 * pid namespace). Records, plans, lock owners and `check` rows all carry this one identity.
 */
import type { ProcessBackend } from "../process/types.ts";

/** A process as recorded: enough to tell, later, whether the pid still holds it. */
export interface ProcessIdentity {
  session_pid: number;
  /** The backend's start token, or null where it could not be read. */
  start_token: string | null;
  host: string;
  /** The boot it ran in (Linux boot_id), or null. */
  boot_id: string | null;
  /** The machine (Linux /etc/machine-id), or null: tells apart hosts that share a name. */
  machine_id?: string | null;
  /** The pid namespace (Linux `pid:[N]`), or null: tells a container from its host. */
  pid_ns?: string | null;
  /**
   * The OS it ran on (`Deno.build.os`), or null: tells Windows from the Linux beside it (WSL2),
   * whose hostnames match and neither of which has a machine id the other can read.
   */
  os?: string | null;
}

/** What this host is, now: compared with a recorded identity's host fields. */
export interface HostIdentity {
  host: string;
  bootId: string | null;
  machineId?: string | null;
  pidNs?: string | null;
  os?: string | null;
  /**
   * The boot ids this machine has run roster in (registry/boots.ts), read when first asked;
   * null when they cannot be read. Absent: the caller keeps no history (a record of another
   * boot is then taken as this machine's past, as before histories).
   */
  pastBoots?: () => ReadonlySet<string> | null;
  /**
   * When this boot started (epoch ms; Linux's btime), read when first asked; null or absent
   * when unknown. Asked only of a record of another boot with a time it was written.
   */
  bootStartedMs?: () => number | null;
}

/**
 * The host key: the `host` of records and the name of this host's store directory. It must
 * not change while sessions run. On macOS `Deno.hostname()` (gethostname) follows the network
 * (DHCP, reverse DNS), so there the key is the hardware UUID the darwin backend reads as the
 * machine id, and the hostname only when that cannot be read. Elsewhere it is the hostname,
 * which does not move on its own.
 */
export function hostKey(
  os: typeof Deno.build.os,
  hostname: string,
  machineId: string | null,
): string {
  return os === "darwin" && machineId ? machineId : hostname;
}

/** This host's identity as `backend` reads it (each value read once). */
export function hostIdentity(backend: ProcessBackend, host: string): HostIdentity {
  return {
    host,
    bootId: backend.bootId(),
    machineId: backend.machineId?.() ?? null,
    pidNs: backend.pidNamespace?.() ?? null,
    os: Deno.build.os,
  };
}

/** Pure: the identity of a process of this host, from its pid and its start token. */
export function identityOf(
  pid: number,
  startToken: string | null,
  here: HostIdentity,
): Required<ProcessIdentity> {
  return {
    session_pid: pid,
    start_token: startToken,
    host: here.host,
    boot_id: here.bootId,
    machine_id: here.machineId ?? null,
    pid_ns: here.pidNs ?? null,
    os: here.os ?? null,
  };
}
