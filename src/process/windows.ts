/**
 * Windows process identity through kernel32. The start token is the creation FILETIME from
 * GetProcessTimes (fixed at creation, not moved by later clock changes: exact comparison).
 * Nothing here ever sends a signal: on Windows a "signal" terminates the target.
 * GetLastError cannot be read reliably from Deno, so a failed OpenProcess is settled by a
 * Toolhelp snapshot instead of by its error code, and the whole decision is the pure
 * `judgeWindowsProbe`. Toolhelp parent ids are not updated when a parent exits and its pid
 * is reused: a probe reports a parent only if it was created no later than the child (as
 * psutil `parent()` does), so a walk up the parents never steps onto a stranger. Layouts are x64 and were checked only against
 * fixtures, never on a real Windows machine. There is no boot id.
 */
import {
  exactTokens,
  type Probe,
  type ProcessBackend,
  type ProcessCommand,
  type ProcessInfo,
} from "./types.ts";
import { isPid, MAX_PID } from "./pid.ts";

/** 1970-01-01T00:00:00Z as a FILETIME (100 ns units since 1601-01-01). */
export const FILETIME_UNIX_EPOCH = 116444736000000000n;
/** GetExitCodeProcess value for a process that is still running. */
export const STILL_ACTIVE = 259;
/** sizeof(PROCESSENTRY32W) on x64. */
export const PROCESSENTRY32W_SIZE = 568;

export const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
export const TH32CS_SNAPPROCESS = 2;
const INVALID_HANDLE_VALUE = 0xffff_ffff_ffff_ffffn;
const OFF_PID = 8;
const OFF_PPID = 32;
const OFF_EXE = 44;
const EXE_CHARS = 260;

/** Epoch milliseconds of a FILETIME given as its two 32-bit halves, rounded down. */
export function filetimeToUnixMs(lo: number, hi: number): number {
  return filetimeRawToUnixMs((BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
}

function filetimeRawToUnixMs(raw: bigint): number {
  const delta = raw - FILETIME_UNIX_EPOCH;
  // BigInt division truncates toward zero; dates before 1970 must still round down.
  let ms = delta / 10_000n;
  if (delta < 0n && ms * 10_000n !== delta) ms -= 1n;
  return Number(ms);
}

/** Reads a little-endian FILETIME at `offset`: the raw 100 ns count and epoch milliseconds. */
export function decodeFiletime(bytes: Uint8Array, offset = 0): { raw: bigint; unixMs: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lo = view.getUint32(offset, true);
  const hi = view.getUint32(offset + 4, true);
  return { raw: (BigInt(hi) << 32n) | BigInt(lo), unixMs: filetimeToUnixMs(lo, hi) };
}

/** `windows:<raw FILETIME in decimal>`. */
export function windowsToken(raw: bigint): string {
  return `windows:${raw}`;
}

export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Image name only (for example `node.exe`), not a path. */
  exeFile: string;
}

/** Decodes one x64 PROCESSENTRY32W; null unless the buffer and its dwSize are both 568. */
export function decodeProcessEntry32W(bytes: Uint8Array): ProcessEntry | null {
  if (bytes.length !== PROCESSENTRY32W_SIZE) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== PROCESSENTRY32W_SIZE) return null;
  let chars = 0;
  while (chars < EXE_CHARS && view.getUint16(OFF_EXE + chars * 2, true) !== 0) chars++;
  return {
    pid: view.getUint32(OFF_PID, true),
    ppid: view.getUint32(OFF_PPID, true),
    exeFile: new TextDecoder("utf-16le").decode(bytes.subarray(OFF_EXE, OFF_EXE + chars * 2)),
  };
}

/** What the I/O layer saw for one pid, handed to `judgeWindowsProbe`. */
interface WindowsObservation {
  /** OpenProcess returned a handle. */
  opened: boolean;
  /** The creation FILETIME (8 bytes) when GetProcessTimes succeeded, else null. */
  creation: Uint8Array | null;
  /** GetExitCodeProcess's answer when it succeeded, else null. */
  exitCode: number | null;
  /** The snapshot entry for the pid; null when not listed; undefined when no snapshot. */
  entry: ProcessEntry | null | undefined;
  /**
   * The creation FILETIME (8 bytes) of the process now holding `entry.ppid`, when it could be
   * read; absent or null when not (gone, access denied, or not asked).
   */
  parentCreation?: Uint8Array | null;
}

/**
 * Toolhelp keeps a child's parent pid after the parent exits, and Windows hands that pid to
 * new processes: a parent created after the child is a stranger holding a reused pid, so the
 * child's parent is unknown (null), never that process. Equal times are accepted (a FILETIME
 * tick is 100 ns; psutil `parent()` uses the same <= rule).
 */
export function verifiedParent(
  ppid: number | null,
  childCreation: bigint | null,
  parentCreation: bigint | null,
): number | null {
  if (ppid === null || childCreation === null || parentCreation === null) return ppid;
  return parentCreation <= childCreation ? ppid : null;
}

/** Turns what kernel32 said about one pid into a Probe. */
export function judgeWindowsProbe(pid: number, obs: WindowsObservation): Probe {
  const entry = obs.entry;
  if (!obs.opened) {
    // Without a handle, the process list is the only evidence left.
    if (entry === undefined) return { kind: "unsupported" };
    if (entry === null) return { kind: "gone" };
    return {
      kind: "exists",
      info: {
        pid,
        ppid: entry.ppid,
        startToken: null,
        startedAtMs: null,
        zombie: false,
        name: entry.exeFile,
      },
    };
  }
  const created = obs.creation !== null && obs.creation.length >= 8
    ? decodeFiletime(obs.creation)
    : null;
  // Any code but STILL_ACTIVE proves the process exited; our handle (or another) only keeps
  // its object alive. Reporting it as a zombie rather than gone keeps the start token, so the
  // caller still judges it dead while knowing it was the recorded process, as on Linux. A
  // process that exited with code 259 looks running: if the snapshot, taken while our handle
  // pinned the pid, does not list it, it has exited (a running process is always listed).
  // Whether Toolhelp still lists an exited process whose object is held open is unverified;
  // if it does, that rare case reads as running.
  const exited = (obs.exitCode !== null && obs.exitCode !== STILL_ACTIVE) || entry === null;
  const parentCreated = obs.parentCreation != null && obs.parentCreation.length >= 8
    ? decodeFiletime(obs.parentCreation).raw
    : null;
  const info: ProcessInfo = {
    pid,
    ppid: verifiedParent(entry ? entry.ppid : null, created?.raw ?? null, parentCreated),
    startToken: created ? windowsToken(created.raw) : null,
    startedAtMs: created ? created.unixMs : null,
    zombie: exited,
    name: entry ? entry.exeFile : null,
  };
  return { kind: "exists", info };
}

/** Null when FFI is not granted (asking would prompt inside a hook) or kernel32 is missing. */
export function windowsBackend(): ProcessBackend | null {
  let lib;
  try {
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    // Kept open for the life of the process: the CLI is short-lived.
    lib = Deno.dlopen("kernel32.dll", {
      OpenProcess: { parameters: ["u32", "i32", "u32"], result: "pointer" },
      GetProcessTimes: {
        parameters: ["pointer", "buffer", "buffer", "buffer", "buffer"],
        result: "i32",
      },
      GetExitCodeProcess: { parameters: ["pointer", "buffer"], result: "i32" },
      CloseHandle: { parameters: ["pointer"], result: "i32" },
      CreateToolhelp32Snapshot: { parameters: ["u32", "u32"], result: "pointer" },
      Process32FirstW: { parameters: ["pointer", "buffer"], result: "i32" },
      Process32NextW: { parameters: ["pointer", "buffer"], result: "i32" },
    });
  } catch {
    return null;
  }
  const k32 = lib.symbols;

  /**
   * The snapshot entry for pid: null when not listed, undefined when no snapshot could be
   * walked. Process32NextW failing is read as the end of the list: its only other failure is
   * a wrong dwSize, which is set before every call.
   */
  function findEntry(pid: number): ProcessEntry | null | undefined {
    const snap = k32.CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    if (snap === null || Deno.UnsafePointer.value(snap) === INVALID_HANDLE_VALUE) {
      return undefined;
    }
    try {
      const buf = new Uint8Array(PROCESSENTRY32W_SIZE);
      const view = new DataView(buf.buffer);
      view.setUint32(0, PROCESSENTRY32W_SIZE, true);
      // The list always holds at least the idle and system processes.
      if (k32.Process32FirstW(snap, buf) === 0) return undefined;
      do {
        const entry = decodeProcessEntry32W(buf);
        if (entry === null) return undefined;
        if (entry.pid === pid) return entry;
        view.setUint32(0, PROCESSENTRY32W_SIZE, true);
      } while (k32.Process32NextW(snap, buf) !== 0);
      return null;
    } finally {
      k32.CloseHandle(snap);
    }
  }

  function validPid(pid: number): boolean {
    return isPid(pid, MAX_PID, 0);
  }

  function probe(pid: number): Probe {
    if (!validPid(pid)) return { kind: "gone" };
    const handle = k32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
    if (handle === null) {
      return judgeWindowsProbe(pid, {
        opened: false,
        creation: null,
        exitCode: null,
        entry: findEntry(pid),
      });
    }
    try {
      const creation = new Uint8Array(8);
      const exit = new Uint8Array(8);
      const kernel = new Uint8Array(8);
      const user = new Uint8Array(8);
      const timesOk = k32.GetProcessTimes(handle, creation, exit, kernel, user) !== 0;
      const code = new Uint32Array(1);
      const codeOk = k32.GetExitCodeProcess(handle, code) !== 0;
      // Taken while the handle is open, so the pid cannot have been reused in between.
      const entry = findEntry(pid);
      return judgeWindowsProbe(pid, {
        opened: true,
        creation: timesOk ? creation : null,
        exitCode: codeOk ? code[0] : null,
        entry,
        parentCreation: entry ? creationOf(entry.ppid) : null,
      });
    } finally {
      // An open handle keeps the pid from being reused: never leak one.
      k32.CloseHandle(handle);
    }
  }

  /** The creation FILETIME of whatever process holds `pid` now, or null. */
  function creationOf(pid: number): Uint8Array | null {
    if (!validPid(pid) || pid === 0) return null;
    const handle = k32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
    if (handle === null) return null;
    try {
      const creation = new Uint8Array(8);
      const rest = [new Uint8Array(8), new Uint8Array(8), new Uint8Array(8)] as const;
      return k32.GetProcessTimes(handle, creation, ...rest) !== 0 ? creation : null;
    } finally {
      k32.CloseHandle(handle);
    }
  }

  function command(pid: number): ProcessCommand {
    // Reading another process's command line needs its PEB; the image name is what is cheap.
    const entry = validPid(pid) ? findEntry(pid) : null;
    return { exe: entry ? entry.exeFile : null, argv: null };
  }

  return {
    name: "windows",
    probe,
    bootId: () => null,
    command,
    compareTokens: exactTokens,
  } satisfies ProcessBackend;
}
