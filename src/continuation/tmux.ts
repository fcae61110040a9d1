/**
 * `continuation-check --tmux`: what roster reads of the tmux pane it runs in, itself, under
 * the dispatch lock, just before it claims: facts a hook gathered earlier may be a second old.
 * The reading is pure (paneFacts); the two tmux calls are the thin I/O around it.
 */
import { RosterError, UsageError } from "../errors.ts";
import type { Facts } from "./rules.ts";

/** A key from an attached client within this long is a person at the pane. */
export const ACTIVE_WINDOW_MS = 60_000;

const PANE_FORMAT = "#{pane_id}\t#{pane_dead}\t#{pane_in_mode}\t#{session_id}\t#{window_id}";
/**
 * Each client's last key, the pane its keys go to (its current window's active pane), that
 * window, and whether the window sends keys to all its panes (synchronize-panes).
 */
const CLIENT_FORMAT = "#{client_activity}\t#{pane_id}\t#{window_id}\t#{pane_synchronized}";

/**
 * Pure: the last key a person pressed into `pane` of `window`, in ms (0: none), from what
 * `list-clients` printed. tmux keeps one activity time per client, not per pane; a client's
 * keys go to the active pane of its current window, so its last key counts for the pane it is
 * on now, and for every pane of that window while it has synchronize-panes on. A key in another
 * pane or window of the same tmux session is that pane's, not this one's.
 */
function lastKeyInPane(pane: string, window: string | undefined, clients: string): number {
  let lastKeyMs = 0;
  for (const line of clients.split("\n")) {
    const [activity, on, onWindow, synchronized] = line.split("\t");
    const seconds = Number(activity);
    const into = on === pane ||
      (synchronized === "1" && window !== undefined && onWindow === window);
    if (into && activity !== "" && Number.isSafeInteger(seconds)) {
      lastKeyMs = Math.max(lastKeyMs, seconds * 1000);
    }
  }
  return lastKeyMs;
}

/**
 * Pure: the facts tmux's answers give. `pane` is what `display-message` printed for the pane
 * (null: tmux has no such pane), `clients` what `list-clients` printed.
 * - pane_key: the pane's id, or null when it is gone (the identity rule then vetoes);
 * - user_active: the pane is in a mode (copy mode: keys sent would go to tmux, and a person is
 *   reading it), or a key went into it (lastKeyInPane) within ACTIVE_WINDOW_MS, or since
 *   `keysSinceMs` (a pane restore opened: any key a person pressed into it since).
 * A dead pane (its program exited, kept by remain-on-exit) is neither idle nor anyone's.
 */
export function paneFacts(
  pane: string | null,
  clients: string,
  nowMs: number,
  keysSinceMs = Infinity,
): Facts {
  if (pane === null) return { pane_key: null };
  const [id, dead, inMode, session, window] = pane.trim().split("\t");
  if (!/^%\d+$/.test(id ?? "") || session === undefined) {
    throw new RosterError(`Cannot read the tmux pane: unexpected answer: ${pane.slice(0, 80)}`);
  }
  const lastKeyMs = lastKeyInPane(id, window, clients);
  const facts: Facts = {
    pane_key: id,
    user_active: inMode === "1" || nowMs - lastKeyMs < ACTIVE_WINDOW_MS ||
      lastKeyMs >= keysSinceMs,
  };
  if (dead === "1") facts.idle = false;
  return facts;
}

/** Runs one tmux command; null when tmux says the target does not exist. */
function tmux(args: string[]): string | null {
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("tmux", { args, stdin: "null", stdout: "piped", stderr: "piped" })
      .outputSync();
  } catch (err) {
    const why = err instanceof Deno.errors.NotFound ? "tmux is not installed" : String(err);
    throw new RosterError(`Cannot read the tmux pane: ${why}`);
  }
  const stderr = new TextDecoder().decode(out.stderr).trim();
  if (out.success) return new TextDecoder().decode(out.stdout);
  if (/can't find (pane|window|session)/i.test(stderr)) return null;
  // No server, a socket refused: the environment failed, not the session. Nothing is written,
  // so the key stays open for the next check.
  throw new RosterError(`Cannot read the tmux pane: ${stderr.split("\n")[0] || "tmux failed"}`);
}

/**
 * The pane roster runs in, from $TMUX_PANE. The hook's own pane is the one whose identity the
 * plan names: roster never reads the plan's pane on the hook's behalf.
 */
export function ownPane(paneEnv: string | undefined): string {
  if (paneEnv === undefined || !/^%\d+$/.test(paneEnv)) {
    throw new UsageError(
      "Invalid --tmux: TMUX_PANE is not set to a pane id: run the check inside the session's " +
        "tmux pane",
    );
  }
  return paneEnv;
}

/** The facts of `pane` (from ownPane), read now; `keysSinceMs` as paneFacts. */
export function readPaneFacts(pane: string, nowMs = Date.now(), keysSinceMs = Infinity): Facts {
  const display = tmux(["display-message", "-p", "-t", pane, PANE_FORMAT]);
  const clients = display === null ? "" : tmux(["list-clients", "-F", CLIENT_FORMAT]) ?? "";
  return paneFacts(display, clients, nowMs, keysSinceMs);
}

/**
 * The hook's facts with roster's own reading laid over them. roster's reading can only add a
 * reason to hold back: a person the hook did not see still counts, one the hook saw still counts.
 */
export function withPaneFacts(hook: Facts, read: Facts): Facts {
  const out: Facts = { ...hook, pane_key: read.pane_key };
  if (read.user_active !== undefined) {
    out.user_active = read.user_active || hook.user_active === true;
  }
  if (read.idle === false) out.idle = false;
  return out;
}
