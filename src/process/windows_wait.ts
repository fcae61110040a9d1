/**
 * Waiting for a process to exit on Windows: a handle opened with SYNCHRONIZE is signalled when
 * the process ends, and WaitForSingleObject, run on a thread by FFI, returns then (nothing
 * polls). The handle also keeps the pid from being reused while it is open. Tested for real
 * under Wine (tests/windows/wait_test.ts).
 */
import { type ExitNotice, lazyLibrary, threadWatch } from "./notify.ts";
import { isPid, MAX_PID } from "./pid.ts";

export const SYNCHRONIZE = 0x0010_0000;
export const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
export const INFINITE = 0xffff_ffff;
export const WAIT_OBJECT_0 = 0;
export const WAIT_TIMEOUT = 0x102;

/** What WaitForSingleObject's return value says: the process ended, or not yet, or no answer. */
export function judgeWait(code: number): "exited" | "running" | "failed" {
  if (code === WAIT_OBJECT_0) return "exited";
  return code === WAIT_TIMEOUT ? "running" : "failed";
}

const SYMBOLS = {
  OpenProcess: { parameters: ["u32", "i32", "u32"], result: "pointer" },
  WaitForSingleObject: { parameters: ["pointer", "u32"], result: "u32", nonblocking: true },
  CloseHandle: { parameters: ["pointer"], result: "i32" },
} as const;

const openLib = lazyLibrary(Deno.build.os === "windows" ? "kernel32.dll" : null, SYMBOLS);

/**
 * Exit notices by process handle: on Windows, with FFI. A handle that cannot be opened (no such
 * process, or no access) is no watch: the caller probes, which tells the two apart. `gone` is
 * read with the handle open, so the pid names this process meanwhile.
 */
export const HANDLE_WAIT: ExitNotice = {
  available: () => openLib() !== null,
  watch(pid, gone, poll) {
    const k = openLib();
    if (k === null || !isPid(pid, MAX_PID, 0)) return null;
    const handle = k.symbols.OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
    if (handle === null) return null;
    const wait = async () => {
      const verdict = judgeWait(await k.symbols.WaitForSingleObject(handle, INFINITE));
      if (verdict !== "exited") await poll();
    };
    return threadWatch(pid, gone(), wait, () => k.symbols.CloseHandle(handle));
  },
};
