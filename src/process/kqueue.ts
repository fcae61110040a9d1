/**
 * Waiting for a process to exit on macOS and FreeBSD: a kqueue with an EVFILT_PROC/NOTE_EXIT
 * filter, through libc by FFI (the kernel tells us; nothing polls). The struct layouts and the
 * reading of kevent's receipt are pure functions, tested on Linux; the FFI itself was never run
 * on a real Mac or FreeBSD machine, so every failure falls back to probing (exit_wait.ts).
 */
import { type ExitNotice, lazyLibrary, threadWatch } from "./notify.ts";
import { ESRCH } from "./types.ts";
import { isPid } from "./pid.ts";

/** EVFILT_PROC and NOTE_EXIT have the same values on macOS and FreeBSD. */
export const EVFILT_PROC = -5;
export const NOTE_EXIT = 0x8000_0000;
/**
 * A watch's flags, EV_ADD (0x1) | EV_ENABLE (0x4) | EV_ONESHOT (0x10) | EV_RECEIPT (0x40): with
 * EV_RECEIPT each change gets an entry back, EV_ERROR set and `data` its errno (0: it took), so
 * no errno is read.
 */
const WATCH_FLAGS = 0x0001 | 0x0004 | 0x0010 | 0x0040;
export const EV_ERROR = 0x4000;

/**
 * `struct kevent` on 64-bit: ident (uintptr_t), filter (int16), flags (uint16), fflags
 * (uint32), data (intptr_t / int64), udata (pointer); FreeBSD 12 and later add `ext[4]`
 * (uint64 each), which makes it 64 bytes where macOS has 32. Both are little-endian.
 */
export interface KeventLayout {
  os: "darwin" | "freebsd";
  size: number;
}
export const DARWIN_KEVENT: KeventLayout = { os: "darwin", size: 32 };
export const FREEBSD_KEVENT: KeventLayout = { os: "freebsd", size: 64 };

/** The fields' byte offsets, the same in both layouts. */
const OFF = { ident: 0, filter: 8, flags: 10, fflags: 12, data: 16 } as const;

export interface Kevent {
  ident: number;
  filter: number;
  flags: number;
  fflags: number;
  data: bigint;
}

/** Encodes one kevent (udata and ext zero). */
export function encodeKevent(e: Kevent, layout: KeventLayout): Uint8Array {
  const bytes = new Uint8Array(layout.size);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(OFF.ident, BigInt(e.ident), true);
  view.setInt16(OFF.filter, e.filter, true);
  view.setUint16(OFF.flags, e.flags, true);
  view.setUint32(OFF.fflags, e.fflags >>> 0, true);
  view.setBigInt64(OFF.data, e.data, true);
  return bytes;
}

/** Decodes one kevent; null when the buffer is not exactly one struct of `layout`. */
export function decodeKevent(bytes: Uint8Array, layout: KeventLayout): Kevent | null {
  if (bytes.length !== layout.size) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    ident: Number(view.getBigUint64(OFF.ident, true)),
    filter: view.getInt16(OFF.filter, true),
    flags: view.getUint16(OFF.flags, true),
    fflags: view.getUint32(OFF.fflags, true),
    data: view.getBigInt64(OFF.data, true),
  };
}

/** The change that asks for one note when `pid` exits, with a receipt for the asking. */
export function exitWatchChange(pid: number, layout: KeventLayout): Uint8Array {
  return encodeKevent({
    ident: pid,
    filter: EVFILT_PROC,
    flags: WATCH_FLAGS,
    fflags: NOTE_EXIT,
    data: 0n,
  }, layout);
}

/**
 * What kevent's answer to the change means: `watching` (the filter took), `gone` (ESRCH: no
 * such process, or it is already exiting), `failed` (anything else: poll instead).
 */
export function judgeReceipt(
  returned: number,
  receipt: Uint8Array,
  pid: number,
  layout: KeventLayout,
): "watching" | "gone" | "failed" {
  if (returned !== 1) return "failed";
  const e = decodeKevent(receipt, layout);
  if (e === null || e.ident !== pid || e.filter !== EVFILT_PROC) return "failed";
  if ((e.flags & EV_ERROR) === 0) return "failed";
  if (e.data === 0n) return "watching";
  return e.data === BigInt(ESRCH) ? "gone" : "failed";
}

/** Whether an event read back from the queue is `pid`'s exit. */
export function isExitEvent(e: Kevent | null, pid: number): boolean {
  return e !== null && e.ident === pid && e.filter === EVFILT_PROC &&
    (e.fflags & NOTE_EXIT) !== 0;
}

const SYMBOLS = {
  kqueue: { parameters: [], result: "i32" },
  // int kevent(int kq, const struct kevent *changes, int nchanges, struct kevent *events,
  //            int nevents, const struct timespec *timeout)
  kevent: {
    parameters: ["i32", "buffer", "i32", "buffer", "i32", "pointer"],
    result: "i32",
  },
  // The same call, run on a thread: blocking until the exit does not block the event loop.
  kevent_wait: {
    name: "kevent",
    parameters: ["i32", "buffer", "i32", "buffer", "i32", "pointer"],
    result: "i32",
    nonblocking: true,
  },
  close: { parameters: ["i32"], result: "i32" },
} as const;

function kqueueOs(): { path: string; layout: KeventLayout } | null {
  switch (Deno.build.os) {
    case "darwin":
      return { path: "/usr/lib/libSystem.B.dylib", layout: DARWIN_KEVENT };
    case "freebsd":
      return { path: "libc.so.7", layout: FREEBSD_KEVENT };
    default:
      return null;
  }
}

const openLib = lazyLibrary(kqueueOs()?.path ?? null, SYMBOLS);

/** Exit notices by kqueue: on macOS or FreeBSD, with FFI. */
export const KQUEUE: ExitNotice = {
  available: () => openLib() !== null,
  watch(pid, gone, poll) {
    const os = kqueueOs();
    const k = openLib();
    if (os === null || k === null || !isPid(pid, Number.MAX_SAFE_INTEGER)) return null;
    const kq = k.symbols.kqueue();
    if (kq < 0) return null;
    const receipt = new Uint8Array(os.layout.size);
    const n = k.symbols.kevent(kq, exitWatchChange(pid, os.layout), 1, receipt, 1, null);
    const verdict = judgeReceipt(n, receipt, pid, os.layout);
    if (verdict !== "watching") {
      k.symbols.close(kq);
      return verdict === "gone" ? "gone" : null;
    }
    const wait = async () => {
      const event = new Uint8Array(os.layout.size);
      for (let failures = 0;;) {
        const got = await k.symbols.kevent_wait(kq, new Uint8Array(0), 0, event, 1, null);
        if (got > 0 && isExitEvent(decodeKevent(event, os.layout), pid)) return;
        // EINTR, once in a while, asks again; a queue that keeps failing would spin.
        if (got < 0 && ++failures >= 3) return await poll();
      }
    };
    return threadWatch(pid, gone(), wait, () => k.symbols.close(kq));
  },
};
