/**
 * Waiting for processes that are not our children to exit, the OS's own way where it has one:
 * Linux a pidfd (pidfd_open + poll, through libc by FFI), macOS and FreeBSD a kqueue
 * (kqueue.ts), Windows a process handle (windows_wait.ts). Where that is missing or refused,
 * the pids are probed with a backoff from 10 ms to 250 ms.
 */
import { KQUEUE } from "./kqueue.ts";
import { errno, type LibcSymbols, libcSymbols } from "./libc.ts";
import { type ExitWatch, threadWatch } from "./notify.ts";
import { EINTR, ESRCH, isGone, type ProcessBackend } from "./types.ts";
import { HANDLE_WAIT } from "./windows_wait.ts";

export type { ExitWatch };

const SYS_PIDFD_OPEN = 434; // the same number on every Linux architecture (unified table)
const POLLIN = 1;

/** How a wait learns of an exit: the kernel tells it (`pidfd`, `kqueue`, a process `handle`), or `poll`. */
export type WaitMechanism = "pidfd" | "kqueue" | "handle" | "poll";

/** How waits are done here, the one place the mechanism is chosen by OS. */
export function waitMechanism(): WaitMechanism {
  switch (Deno.build.os) {
    case "linux":
      // Null without FFI, on musl without libc.so.6: then probes.
      return libcSymbols() !== null ? "pidfd" : "poll";
    case "darwin":
    case "freebsd":
      return KQUEUE.available() ? "kqueue" : "poll";
    case "windows":
      return HANDLE_WAIT.available() ? "handle" : "poll";
    default:
      return "poll";
  }
}

/**
 * Opens a watch on `pid`. A pidfd or a process handle names this very process from then on
 * (a kqueue filter too, while the process lives), so a caller that opens the watch and then
 * checks the process's start token has no race with reuse.
 */
export function watchExit(pid: number, backend: ProcessBackend): ExitWatch {
  const gone = () => isGone(backend.probe(pid));
  const poll = () => probeUntilGone(pid, backend);
  const mechanism = waitMechanism();
  switch (mechanism) {
    case "pidfd": {
      const lib = libcSymbols()!;
      const fd = Number(lib.syscall(BigInt(SYS_PIDFD_OPEN), BigInt(pid), 0n));
      if (fd >= 0) return pidfdWatch(lib, pid, fd, gone(), poll);
      if (errno(lib) === ESRCH) return goneWatch(pid);
      break; // EPERM/ENOSYS (old kernel, seccomp): probe instead.
    }
    case "kqueue":
    case "handle": {
      const w = (mechanism === "kqueue" ? KQUEUE : HANDLE_WAIT).watch(pid, gone, poll);
      if (w === "gone") return goneWatch(pid);
      if (w !== null) return w;
      break;
    }
  }
  return probeWatch(pid, backend);
}

function goneWatch(pid: number): ExitWatch {
  return { pid, gone: true, exited: () => Promise.resolve(), close() {} };
}

function pidfdWatch(
  lib: LibcSymbols,
  pid: number,
  fd: number,
  gone: boolean,
  poll: () => Promise<void>,
): ExitWatch {
  // A pidfd polls readable once the process has exited (a zombie counts as exited).
  const pollfd = new Uint8Array(8);
  const view = new DataView(pollfd.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, POLLIN, true);
  const wait = async () => {
    for (;;) {
      view.setInt16(6, 0, true);
      const n = await lib.poll(pollfd, 1n, -1);
      if (n > 0) return;
      // EINTR asks again; any other failure says nothing of the process: probe it instead.
      if (n < 0 && errno(lib) !== EINTR) return await poll();
    }
  };
  return threadWatch(pid, gone, wait, () => lib.close(fd));
}

/** Probes `pid` with a backoff from 10 ms to 250 ms until no running process holds it. */
async function probeUntilGone(pid: number, backend: ProcessBackend): Promise<void> {
  let delay = 10;
  while (!isGone(backend.probe(pid))) {
    await new Promise((ok) => setTimeout(ok, delay));
    delay = Math.min(delay * 2, 250);
  }
}

function probeWatch(pid: number, backend: ProcessBackend): ExitWatch {
  return {
    pid,
    gone: isGone(backend.probe(pid)),
    exited: () => probeUntilGone(pid, backend),
    close() {},
  };
}
