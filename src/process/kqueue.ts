/**
 * Waiting for a process to exit on macOS and FreeBSD: a kqueue with an EVFILT_PROC/NOTE_EXIT
 * filter, through libc by FFI (the kernel tells us; nothing polls). The struct layouts and the
 * reading of kevent's receipt are pure functions, tested on Linux; the FFI itself was never run
 * on a real Mac or FreeBSD machine, so every failure falls back to probing (exit_wait.ts).
 */
import { type ExitWatch, lazyLibrary, threadWatch } from "./notify.ts";
import { ESRCH } from "./types.ts";
import { isPid } from "./pid.ts";

/** EVFILT_PROC and NOTE_EXIT have the same values on macOS and FreeBSD. */
export const EVFILT_PROC = -5;
export const NOTE_EXIT = 0x8000_0000;
export const EV_ADD = 0x0001;
export const EV_ENABLE = 0x0004;
export const EV_ONESHOT = 0x0010;
/** Each change gets an entry back, EV_ERROR set and `data` its errno (0: it took): no errno read. */
export const EV_RECEIPT = 0x0040;
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

const OFF_IDENT = 0;
const OFF_FILTER = 8;
const OFF_FLAGS = 10;
const OFF_FFLAGS = 12;
const OFF_DATA = 16;

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
  view.setBigUint64(OFF_IDENT, BigInt(e.ident), true);
  view.setInt16(OFF_FILTER, e.filter, true);
  view.setUint16(OFF_FLAGS, e.flags, true);
  view.setUint32(OFF_FFLAGS, e.fflags >>> 0, true);
  view.setBigInt64(OFF_DATA, e.data, true);
  return bytes;
}

/** Decodes one kevent; null when the buffer is not exactly one struct of `layout`. */
export function decodeKevent(bytes: Uint8Array, layout: KeventLayout): Kevent | null {
  if (bytes.length !== layout.size) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    ident: Number(view.getBigUint64(OFF_IDENT, true)),
    filter: view.getInt16(OFF_FILTER, true),
    flags: view.getUint16(OFF_FLAGS, true),
    fflags: view.getUint32(OFF_FFLAGS, true),
    data: view.getBigInt64(OFF_DATA, true),
  };
}

/** The change that asks for one note when `pid` exits, with a receipt for the asking. */
export function exitWatchChange(pid: number, layout: KeventLayout): Uint8Array {
  return encodeKevent({
    ident: pid,
    filter: EVFILT_PROC,
    flags: EV_ADD | EV_ENABLE | EV_ONESHOT | EV_RECEIPT,
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

/** Whether kqueue waits work here (macOS or FreeBSD, with FFI). */
export function kqueueAvailable(): boolean {
  return openLib() !== null;
}

/**
 * A kqueue watch on `pid`: `gone` when it has no process, null when the kernel would not
 * watch it (the caller polls instead). `gone` says whether only a zombie is left; `poll` waits
 * by probing, for a queue that fails later.
 */
export function kqueueWatch(
  pid: number,
  gone: () => boolean,
  poll: () => Promise<void>,
): ExitWatch | "gone" | null {
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
}
