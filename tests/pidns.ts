/**
 * Real PID reuse without touching the host: scenarios run inside a private pid namespace
 * (`unshare --pid --fork --mount-proc`), where writing /proc/sys/kernel/ns_last_pid moves only
 * that namespace's counter, so nothing else on the machine is handed a recycled pid.
 */
import { cleanEnv, type CliResult, run } from "./helpers.ts";

/** Set by `inPrivatePidNs` to the launcher's pid namespace; `forceNextPid` refuses to run in it. */
const HOST_NS = "ROSTER_TEST_OUTER_PIDNS";

function ownPidNs(): string {
  return Deno.readLinkSync("/proc/self/ns/pid");
}

let usable: boolean | undefined;

/**
 * Whether this machine gives us a private pid namespace (Linux, root or CAP_SYS_ADMIN). When it
 * does not, says why, for the skipped tests.
 */
export function canUnsharePid(): boolean {
  if (usable !== undefined) return usable;
  if (Deno.build.os !== "linux") {
    console.log("skipped: private pid namespaces are Linux-only");
    return usable = false;
  }
  try {
    const out = new Deno.Command("unshare", {
      args: ["--pid", "--fork", "--mount-proc", "true"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    usable = out.success;
    if (!usable) {
      const why = new TextDecoder().decode(out.stderr).trim();
      console.log(`skipped: unshare --pid --fork --mount-proc failed: ${why}`);
    }
  } catch (e) {
    console.log(`skipped: unshare could not run: ${(e as Error).message}`);
    usable = false;
  }
  return usable;
}

/**
 * Runs `deno run -A <script> ...args` as the first process of a new pid namespace with its own
 * /proc. The script sees only its own descendants, and `forceNextPid` works there.
 */
export function inPrivatePidNs(script: string, args: string[]): Promise<CliResult> {
  return run(
    "unshare",
    ["--pid", "--fork", "--mount-proc", Deno.execPath(), "run", "-A", script, ...args],
    { ...cleanEnv(), NO_COLOR: "1", [HOST_NS]: ownPidNs() },
  );
}

/**
 * Makes the next fork of this pid namespace get `pid`. Throws unless this process runs inside a
 * private namespace started by `inPrivatePidNs`: the host's counter is never written.
 */
export function forceNextPid(pid: number): void {
  const outer = Deno.env.get(HOST_NS);
  if (!outer || outer === ownPidNs()) {
    throw new Error("forceNextPid: not inside a private pid namespace (see tests/pidns.ts)");
  }
  Deno.writeTextFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
}

/**
 * Starts `start()` so that its pid is `pid`. Another fork of the namespace may win the race:
 * then it gives up after a few tries and returns null.
 */
export async function atPid<T extends AsyncDisposable & { pid: number }>(
  pid: number,
  start: () => T,
): Promise<T | null> {
  for (let i = 0; i < 20; i++) {
    forceNextPid(pid);
    const h = start();
    if (h.pid === pid) return h;
    await h[Symbol.asyncDispose]();
  }
  return null;
}
