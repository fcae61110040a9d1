/**
 * Waiting for processes that are not our children to exit. On Linux the kernel notifies
 * through a pidfd (pidfd_open + poll, through libc by FFI); elsewhere, or where that is refused,
 * the pids are probed with a backoff from 10 ms to 250 ms.
 */
import { isGone, type ProcessBackend } from "./types.ts";

/** A watch on one process: resolves when it exits. Opened before the caller checks identity. */
export interface ExitWatch {
  pid: number;
  /** True when the pid had no process when the watch was opened. */
  readonly gone: boolean;
  exited(): Promise<void>;
  close(): void;
}

const SYS_PIDFD_OPEN = 434; // the same number on every Linux architecture (unified table)
const POLLIN = 1;
const ESRCH = 3;

type Libc = Deno.DynamicLibrary<{
  syscall: { parameters: ["i64", "i64", "i64"]; result: "i64" };
  poll: { parameters: ["buffer", "u64", "i32"]; result: "i32"; nonblocking: true };
  close: { parameters: ["i32"]; result: "i32" };
  __errno_location: { parameters: []; result: "pointer" };
}>;

let libc: Libc | null | undefined;

function openLibc(): Libc | null {
  if (libc !== undefined) return libc;
  try {
    libc = Deno.dlopen("libc.so.6", {
      syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
      poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
      close: { parameters: ["i32"], result: "i32" },
      __errno_location: { parameters: [], result: "pointer" },
    }) as Libc;
  } catch {
    libc = null; // no FFI permission, musl without libc.so.6, not Linux: fall back to polling
  }
  return libc;
}

function errno(lib: Libc): number {
  const p = lib.symbols.__errno_location();
  return p === null ? 0 : new Deno.UnsafePointerView(p).getInt32();
}

/** How waits are done here: `pidfd` (the kernel notifies) or `poll` (probing with backoff). */
export function waitMechanism(): "pidfd" | "poll" {
  return Deno.build.os === "linux" && openLibc() !== null ? "pidfd" : "poll";
}

/**
 * Opens a watch on `pid`. With a pidfd the watch names this very process from now on, so a
 * caller that opens the watch and then checks the process's start token has no race with reuse.
 */
export function watchExit(pid: number, backend: ProcessBackend): ExitWatch {
  const lib = Deno.build.os === "linux" ? openLibc() : null;
  if (lib !== null) {
    const fd = Number(lib.symbols.syscall(BigInt(SYS_PIDFD_OPEN), BigInt(pid), 0n));
    if (fd >= 0) return pidfdWatch(lib, pid, fd, backend);
    if (errno(lib) === ESRCH) return goneWatch(pid);
    // EPERM/ENOSYS (old kernel, seccomp): probe instead.
  }
  return probeWatch(pid, backend);
}

function goneWatch(pid: number): ExitWatch {
  return { pid, gone: true, exited: () => Promise.resolve(), close() {} };
}

function pidfdWatch(lib: Libc, pid: number, fd: number, backend: ProcessBackend): ExitWatch {
  let open = true;
  // A pidfd polls readable once the process has exited (a zombie counts as exited).
  const pollfd = new Uint8Array(8);
  const view = new DataView(pollfd.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, POLLIN, true);
  const zombie = isGone(backend.probe(pid));
  let done: Promise<void> | undefined;
  return {
    pid,
    gone: zombie,
    exited() {
      done ??= (async () => {
        while (open) {
          view.setInt16(6, 0, true);
          const n = await lib.symbols.poll(pollfd, 1n, -1);
          if (n > 0 || (n < 0 && errno(lib) !== 4 /* EINTR */)) return;
        }
      })();
      return done;
    },
    close() {
      if (!open) return;
      open = false;
      lib.symbols.close(fd);
    },
  };
}

function probeWatch(pid: number, backend: ProcessBackend): ExitWatch {
  const gone = isGone(backend.probe(pid));
  return {
    pid,
    gone,
    async exited() {
      let delay = 10;
      while (!isGone(backend.probe(pid))) {
        await new Promise((ok) => setTimeout(ok, delay));
        delay = Math.min(delay * 2, 250);
      }
    },
    close() {},
  };
}
