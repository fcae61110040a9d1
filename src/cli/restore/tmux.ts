/**
 * The tmux calls `roster restore` makes: where a session's window goes, opening it so that a
 * harness that dies at once leaves its status and last lines to read, and typing the one
 * continue. The server is the caller's ($TMUX, else tmux's default); every call is bounded.
 */
import { RosterError } from "../../errors.ts";

export interface TmuxResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The one session windows go to when a session's own is gone. */
export const RESTORE_SESSION = "roster-restore";

const CALL_MS = 10_000;

/**
 * `s` as tmux takes it literally where it expands a format (`-c`'s directory, `-s`'s session
 * name): tmux would run a `#(command)` in a directory's name, and read `#S` as the session's
 * name; `##` is its one `#`.
 */
export function formatLiteral(s: string): string {
  return s.replaceAll("#", "##");
}

/** Runs tmux; a tmux that is not installed is a clear error. */
export async function tmux(args: string[]): Promise<TmuxResult> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("tmux", {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new RosterError(
        "Cannot relaunch: tmux is not installed (roster restore opens each session in a tmux " +
          "window); run roster restore --print for the commands",
      );
    }
    throw new RosterError(`Could not run tmux: ${(err as Error).message}`);
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, CALL_MS);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

async function must(args: string[], what: string): Promise<string> {
  const r = await tmux(args);
  if (r.code !== 0) {
    throw new RosterError(`Could not ${what}: ${r.stderr.trim().split("\n")[0] || "tmux failed"}`);
  }
  return r.stdout;
}

/** When the running server started (ms), or null when no server runs. */
export async function serverStartedMs(): Promise<number | null> {
  const r = await tmux(["display-message", "-p", "#{start_time}"]);
  if (r.code !== 0) {
    // Outside a client, display-message needs a target: any session's.
    const s = await tmux(["list-sessions", "-F", "#{start_time}"]);
    if (s.code !== 0) return null;
    const t = Number(s.stdout.split("\n")[0]);
    return Number.isFinite(t) && t > 0 ? t * 1000 : null;
  }
  const t = Number(r.stdout.trim());
  return Number.isFinite(t) && t > 0 ? t * 1000 : null;
}

/** The tmux session a pane is in, or null when the server has no such pane. */
export async function sessionOfPane(pane: string): Promise<string | null> {
  if (!/^%\d+$/.test(pane)) return null;
  const r = await tmux(["display-message", "-p", "-t", pane, "#{session_name}"]);
  const name = r.stdout.trim();
  return r.code === 0 && name !== "" ? name : null;
}

export async function hasSession(name: string): Promise<boolean> {
  return (await tmux(["has-session", "-t", `=${name}`])).code === 0;
}

/**
 * Opens a window in `session` (creating that session, and a server, when there is none) in
 * `cwd`, and returns its pane. The window keeps its pane when the command started in it exits
 * (remain-on-exit) until keepWindow: a relaunch that dies at once leaves its exit status and
 * last lines to read. A placeholder holds the pane until startIn replaces it, so the command
 * cannot exit before the option is set, and the pane exists (and is the identity a continue
 * names) before the command is decided.
 */
export async function openWindow(session: string, name: string, cwd: string): Promise<string> {
  const placeholder = ["sleep", "600"];
  const where = (await hasSession(session))
    ? ["new-window", "-d", "-t", `=${session}:`, "-n", name]
    : ["new-session", "-d", "-s", formatLiteral(session), "-n", name, "-x", "200", "-y", "50"];
  const out = await must(
    [...where, "-c", formatLiteral(cwd), "-P", "-F", "#{pane_id}", ...placeholder],
    `open a tmux window in session ${session}`,
  );
  const pane = out.trim();
  await must(["set-option", "-w", "-t", pane, "remain-on-exit", "on"], "keep the window");
  return pane;
}

/**
 * Runs `argv` in the pane openWindow opened, in `cwd` with `env` set, exec'd without a shell;
 * returns the pid of the pane's first process: the relaunched command.
 */
export async function startIn(
  pane: string,
  cwd: string,
  env: [string, string][],
  argv: string[],
): Promise<number> {
  const envArgs = env.flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  await must(
    ["respawn-pane", "-k", "-t", pane, "-c", formatLiteral(cwd), ...envArgs, ...argv],
    "start the command in its window",
  );
  return Number(
    (await must(["display-message", "-p", "-t", pane, "#{pane_pid}"], "read the pane")).trim(),
  );
}

export interface PaneState {
  dead: boolean;
  /** The exit status of a dead pane's command (null while it runs, or when killed). */
  status: number | null;
  pid: number;
}

/** What the pane's command is doing; null when the pane is gone. */
export async function paneState(pane: string): Promise<PaneState | null> {
  const r = await tmux([
    "display-message",
    "-p",
    "-t",
    pane,
    "#{pane_dead} #{pane_dead_status} #{pane_pid}",
  ]);
  if (r.code !== 0) return null;
  const [dead, status, pid] = r.stdout.trim().split(" ");
  return {
    dead: dead === "1",
    status: status === undefined || status === "" ? null : Number(status),
    pid: Number(pid),
  };
}

/** The pane's last non-blank lines, joined with " | " (for a failure's reason). */
export async function lastLines(pane: string, n = 5): Promise<string> {
  // From the history too: what a command printed before it died may have scrolled into it.
  const r = await tmux(["capture-pane", "-p", "-J", "-S", "-200", "-t", pane]);
  if (r.code !== 0) return "";
  return r.stdout.split("\n").map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "" && !/^Pane is dead \(/.test(l)).slice(-n).join(" | ");
}

/** The relaunch came up: from now on the window closes when its command ends, as any does. */
export async function keepWindow(pane: string): Promise<void> {
  await tmux(["set-option", "-w", "-u", "-t", pane, "remain-on-exit"]);
}

/** A failed relaunch's window goes (its lines were read). */
export async function closeWindow(pane: string): Promise<void> {
  await tmux(["kill-pane", "-t", pane]);
}

/** Enter alone: submits what is typed at the prompt (an empty prompt ignores it). */
export async function pressEnter(pane: string): Promise<void> {
  await must(["send-keys", "-t", pane, "Enter"], "type into the pane");
}

/** Types `text` into the pane literally, then Enter as a key of its own. */
export async function typeInto(pane: string, text: string): Promise<void> {
  await must(["send-keys", "-t", pane, "-l", text], "type into the pane");
  // Some harnesses read an Enter that comes with the text as part of a paste.
  await new Promise((ok) => setTimeout(ok, 500));
  await pressEnter(pane);
}
