/**
 * Helpers for tests that run on Windows (a real one, or the Windows build of Deno under Wine,
 * scripts/wine/test.sh): file-URL paths Windows accepts, `ping.exe` sleepers (never deno.exe:
 * ~130 MB each under Wine), and the roster CLI run as a hook would run it.
 */
import type { CliResult } from "../helpers.ts";

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

export interface WinSleeper extends AsyncDisposable {
  pid: number;
  child: Deno.ChildProcess;
  /** TerminateProcess and wait: afterwards the pid is gone. */
  kill(): Promise<void>;
}

/** `ping.exe -n <seconds> 127.0.0.1` (or a copy of it at `exe`): a process that lives a while. */
export function spawnPing(seconds = 120, exe = "ping.exe"): WinSleeper {
  const child = new Deno.Command(exe, {
    args: ["-n", String(seconds), "127.0.0.1"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let done = false;
  const kill = async () => {
    if (done) return;
    done = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
  };
  return { pid: child.pid, child, kill, [Symbol.asyncDispose]: kill };
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

/** Runs roster (`deno run -A main.ts ...`) to completion. */
export async function rosterWin(
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-check", "--allow-all", MAIN, ...args],
    env: hookEnv(env),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
