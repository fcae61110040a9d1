/**
 * What the OS exit notices (kqueue.ts, windows_wait.ts) share: the watch they hand to
 * exit_wait.ts, a library opened once where FFI is already granted (libc.ts opens libc by the
 * same rule), and a watch whose wait blocks on one of Deno's FFI threads.
 */

/** A watch on one process: resolves when it exits. Opened before the caller checks identity. */
export interface ExitWatch {
  pid: number;
  /** True when the pid had no running process when the watch was opened. */
  readonly gone: boolean;
  exited(): Promise<void>;
  close(): void;
}

/**
 * An OS's own exit notice (kqueue.ts, windows_wait.ts): whether it works here, and a watch on
 * `pid`, opened before the caller checks identity. A watch is `"gone"` when no process holds the
 * pid, null when the OS would not watch it (the caller probes instead); `gone()` says whether
 * only a zombie is left, and `poll` waits by probing, for a wait that fails later.
 */
export interface ExitNotice {
  available(): boolean;
  watch(pid: number, gone: () => boolean, poll: () => Promise<void>): ExitWatch | "gone" | null;
}

/**
 * `path` dlopen'ed on first use and kept; null where it cannot be (another OS: `path` null;
 * no library). Only where FFI is granted already: asking would prompt inside a hook.
 */
export function lazyLibrary<S extends Deno.ForeignLibraryInterface>(
  path: string | null,
  symbols: S,
): () => Deno.DynamicLibrary<S> | null {
  let lib: Deno.DynamicLibrary<S> | null | undefined;
  return () => {
    if (lib !== undefined) return lib;
    try {
      lib = path !== null && Deno.permissions.querySync({ name: "ffi" }).state === "granted"
        ? Deno.dlopen(path, symbols)
        : null;
    } catch {
      lib = null; // no such library: the caller polls instead
    }
    return lib;
  };
}

/**
 * A watch whose `wait` blocks on an FFI thread until the process exits. `release` frees the
 * OS object (queue, handle) once: at close, or, when a wait is still pending then, after it
 * returns (freeing what a pending wait uses is undefined behaviour on some OSes).
 */
export function threadWatch(
  pid: number,
  gone: boolean,
  wait: () => Promise<void>,
  release: () => void,
): ExitWatch {
  let open = true;
  let pending = false;
  let done: Promise<void> | undefined;
  return {
    pid,
    gone,
    exited() {
      done ??= (async () => {
        pending = true;
        try {
          await wait();
        } finally {
          pending = false;
          if (!open) release();
        }
      })();
      return done;
    },
    close() {
      if (!open) return;
      open = false;
      if (!pending) release();
    },
  };
}
