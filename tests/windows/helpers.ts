/**
 * Helpers for tests that run on Windows (a real one, or the Windows build of Deno under Wine,
 * scripts/wine/test.sh): file-URL paths Windows accepts, `ping.exe` sleepers (never deno.exe:
 * ~130 MB each under Wine), and the roster CLI run as a hook would run it.
 */
import {
  bounded,
  type CliResult,
  DEFAULT_TIMEOUT_MS,
  type Sleeper,
  spawnKillable,
  waitUntil,
} from "../helpers.ts";
import { assertSchema } from "../schema.ts";
import {
  decodeProcessEntry32W,
  type ProcessEntry,
  PROCESSENTRY32W_SIZE,
  TH32CS_SNAPPROCESS,
} from "../../src/process/windows.ts";

export const IS_WINDOWS = Deno.build.os === "windows";
/** Set by scripts/wine/test.sh: Wine lacks some of Windows (pid 4, access checks, tasklist). */
export const UNDER_WINE = IS_WINDOWS && Deno.env.get("ROSTER_UNDER_WINE") === "1";
export const WINDOWS_ONLY = "Windows only: kernel32 FFI, Windows file modes, ping.exe";

/** A file URL as a path this OS accepts (`C:\...` on Windows, never `/C:/...`). */
export function fromFileUrl(url: URL): string {
  const path = decodeURIComponent(url.pathname);
  return IS_WINDOWS ? path.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\") : path;
}

export const MAIN = fromFileUrl(new URL("../../main.ts", import.meta.url));

export type WinSleeper = Sleeper;

/** `ping.exe -n <seconds> 127.0.0.1` (or a copy of it at `exe`): a process that lives a while. */
export function spawnPing(seconds = 120, exe = "ping.exe"): WinSleeper {
  return spawnKillable(exe, ["-n", String(seconds), "127.0.0.1"]);
}

/** ping.exe's path, for copies of it under other image names (claude.exe, say). */
export function pingPath(): string {
  const root = Deno.env.get("SystemRoot") ?? Deno.env.get("windir") ?? "C:\\windows";
  return `${root}\\system32\\ping.exe`;
}

/** The environment a hook would give roster: this one, less what would change its answers. */
export function hookEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Deno.env.toObject();
  for (const k of Object.keys(env)) {
    if (/^(ROSTER_|CLAUDE_)/.test(k) && k !== "ROSTER_UNDER_WINE") delete env[k];
  }
  return { ...env, NO_COLOR: "1", ...extra };
}

/**
 * Runs roster (`deno run -A main.ts ...`) to completion. Done when the process has exited, not
 * when its pipes close: under Wine a service process (services.exe, explorer.exe, winedevice.exe)
 * that a call happens to start inherits the caller's stdout and keeps it open for as long as
 * the prefix lives, so waiting for end-of-file waited for ever (the hang in "register, list
 * alive, kill, list dead, prune", deno.exe idle with no child). A run that outlasts the hang
 * bound is killed and the call throws, naming the command.
 */
export async function rosterWin(
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-check", "--allow-all", MAIN, ...args],
    env: hookEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  let code: number;
  try {
    code = (await bounded(
      child.status,
      `roster ${args.join(" ")} (pid ${child.pid})`,
      DEFAULT_TIMEOUT_MS,
    )).code;
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* it ended just now */ }
    await Promise.all([stdout.stop(), stderr.stop()]);
    throw err;
  }
  // What it wrote is in the pipe by now: a moment for the reads, then no more waiting.
  const r = { code, stdout: await stdout.stop(2_000), stderr: await stderr.stop(2_000) };
  // Windows output is held to the same schemas (tests/schema.ts).
  if (args.includes("--json") && r.stdout.trim() !== "") assertSchema(args, r.stdout);
  return r;
}

/** Reads `stream` as it comes; `stop(graceMs)` waits that long for its end, then cancels it. */
function collect(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        chunks.push(value);
      }
    } catch { /* cancelled */ }
  })();
  return {
    async stop(graceMs = 0): Promise<string> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([done, new Promise((ok) => timer = setTimeout(ok, graceMs))]);
      clearTimeout(timer);
      await reader.cancel().catch(() => {});
      await done;
      const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      return new TextDecoder().decode(all);
    },
  };
}

export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Every process in a Toolhelp snapshot (kernel32 through FFI, as the backend reads it). */
export function listProcesses(): ProcessEntry[] {
  const lib = Deno.dlopen("kernel32.dll", {
    CreateToolhelp32Snapshot: { parameters: ["u32", "u32"], result: "pointer" },
    Process32FirstW: { parameters: ["pointer", "buffer"], result: "i32" },
    Process32NextW: { parameters: ["pointer", "buffer"], result: "i32" },
    CloseHandle: { parameters: ["pointer"], result: "i32" },
  });
  const k = lib.symbols;
  const snap = k.CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  const buf = new Uint8Array(PROCESSENTRY32W_SIZE);
  const view = new DataView(buf.buffer);
  const out: ProcessEntry[] = [];
  try {
    view.setUint32(0, PROCESSENTRY32W_SIZE, true);
    if (k.Process32FirstW(snap, buf) === 0) return out;
    do {
      const e = decodeProcessEntry32W(buf);
      if (e !== null) out.push(e);
      view.setUint32(0, PROCESSENTRY32W_SIZE, true);
    } while (k.Process32NextW(snap, buf) !== 0);
  } finally {
    k.CloseHandle(snap);
    lib.close();
  }
  return out;
}

/**
 * Starts `program args...` through `cmd /c start /b`: cmd runs start.exe, which starts the
 * program and exits, as does cmd. The program is left with a parent pid that names no process,
 * as when a hook's parent exits first. Returns that parent pid and the program's pid.
 */
export async function startOrphan(
  program: string,
  args: string[],
): Promise<{ parent: number; pid: number }> {
  const image = program.split(/[\\/]/).at(-1)!.toLowerCase();
  const before = new Set(listProcesses().map((p) => p.pid));
  const cmd = new Deno.Command("cmd.exe", {
    args: ["/c", "start", "", "/b", program, ...args],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await bounded(cmd.status, `cmd /c start ${program}`);
  let found: ProcessEntry | undefined;
  await waitUntil(
    () => {
      found = listProcesses().find((p) =>
        !before.has(p.pid) && p.pid !== cmd.pid && p.exeFile.toLowerCase() === image
      );
      return found !== undefined;
    },
    `${program} started through cmd /c start`,
    { everyMs: 100 },
  );
  return { parent: found!.ppid, pid: found!.pid };
}

/**
 * Wine's server hands out process and thread ids from one list: fresh ids until its table is
 * full, then freed ids in the order they were freed (a ring, as long as 256 or more are free).
 * So a freed pid comes back after every id freed before it, which may be thousands: creating
 * processes until one gets it took more than 600 creations in one run of three. Threads are
 * cheap, and each tells its id: one thread at a time, each ended before the next, turns the ring
 * by one id. Turn it until a thread gets `pid` (that thread then frees it to the back, right
 * after the id `before` it), turn on until a thread gets `before`, and the next id handed out is
 * `pid`: create the process then.
 */
class IdRing {
  #lib = Deno.dlopen("kernel32.dll", {
    GetModuleHandleW: { parameters: ["buffer"], result: "pointer" },
    GetProcAddress: { parameters: ["pointer", "buffer"], result: "pointer" },
    CreateThread: {
      parameters: ["pointer", "usize", "pointer", "pointer", "u32", "buffer"],
      result: "pointer",
    },
    WaitForSingleObject: { parameters: ["pointer", "u32"], result: "u32" },
    CloseHandle: { parameters: ["pointer"], result: "i32" },
  });
  // The thread's start routine: kernel32's ExitThread, so the thread ends as it starts.
  #exit: Deno.PointerValue;
  #tid = new Uint32Array(1);

  constructor() {
    const k = this.#lib.symbols;
    const module = k.GetModuleHandleW(wide("kernel32.dll"));
    this.#exit = k.GetProcAddress(module, new TextEncoder().encode("ExitThread\0"));
    if (this.#exit === null) throw new Error("kernel32 has no ExitThread");
  }

  /** Creates a thread that exits at once, waits for it, frees its id; returns that id. */
  turn(): number {
    const k = this.#lib.symbols;
    const h = k.CreateThread(null, 0n, this.#exit, null, 0, new Uint8Array(this.#tid.buffer));
    if (h === null) throw new Error("CreateThread failed");
    k.WaitForSingleObject(h, 10_000);
    k.CloseHandle(h);
    return this.#tid[0];
  }

  /** Turns the ring until a thread gets `id`; returns the id handed out just before it. */
  turnTo(id: number, limit: number): number | null {
    let before = 0;
    for (let i = 0; i < limit; i++) {
      const got = this.turn();
      if (got === id) return before;
      before = got;
    }
    return null;
  }

  close() {
    this.#lib.close();
  }
}

function wide(s: string): Uint8Array {
  const out = new Uint16Array(s.length + 1);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return new Uint8Array(out.buffer);
}

/**
 * Starts ping.exe (or a copy of it at `exe`) as a process that gets `pid`, which must be free:
 * no process, and no handle (Deno keeps its children's handles, so use startOrphan for a
 * process whose pid is to be reused). Wine only (see IdRing); a real Windows reuses pids in an
 * order no test can steer.
 */
export async function takePid(pid: number, exe = "ping.exe", attempts = 3): Promise<WinSleeper> {
  const ring = new IdRing();
  // Other processes (Deno's own worker threads, Wine's services) take ids too, so the ring may
  // move under us: a miss frees the pid again and the next attempt finds it anew.
  const limit = 200_000;
  try {
    for (let i = 0; i < attempts; i++) {
      const before = ring.turnTo(pid, limit);
      if (before === null) break;
      if (before === 0) continue; // the first turn got it: no id known to come before it
      if (ring.turnTo(before, limit) === null) break;
      const s = spawnPing(120, exe);
      if (s.pid === pid) return s;
      await s.kill();
    }
  } finally {
    ring.close();
  }
  throw new Error(`pid ${pid} did not come back in ${attempts} turns of Wine's id ring`);
}
