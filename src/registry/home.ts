/** Where the store lives: `--home`, else `$ROSTER_HOME`, else the platform's state directory. */
import { envVar } from "../env.ts";
import { UsageError } from "../errors.ts";

export interface HomeEnv {
  os: typeof Deno.build.os;
  get(name: string): string | undefined;
}

/** The home directory and what named it (`--home`, `ROSTER_HOME`, or null for the default). */
export interface Home {
  path: string;
  source: string | null;
}

/** Pure: resolves the home directory from the flag and the environment. */
export function resolveHome(flag: string | undefined, env: HomeEnv): Home {
  if (flag !== undefined) {
    if (flag === "") {
      throw new UsageError("Invalid --home: expected a directory path, got an empty string");
    }
    return { path: flag, source: "--home" };
  }
  const fromEnv = env.get("ROSTER_HOME");
  if (fromEnv) return { path: fromEnv, source: "ROSTER_HOME" };
  return { path: defaultHome(env), source: null };
}

/** A relative HOME would put the store under whatever directory roster runs in. */
function absoluteHome(home: string): string {
  if (!home.startsWith("/")) throw new UsageError(`Invalid HOME: not an absolute path: ${home}`);
  return home;
}

function defaultHome(env: HomeEnv): string {
  const home = env.get(env.os === "windows" ? "USERPROFILE" : "HOME");
  switch (env.os) {
    case "windows": {
      const local = env.get("LOCALAPPDATA") ?? (home ? `${home}\\AppData\\Local` : undefined);
      if (local) return `${local}\\roster`;
      break;
    }
    case "darwin":
      if (home) return `${absoluteHome(home)}/Library/Application Support/roster`;
      break;
    default: {
      const xdg = env.get("XDG_STATE_HOME");
      // The XDG spec says relative paths are invalid and must be ignored.
      if (xdg && xdg.startsWith("/")) return `${xdg}/roster`;
      if (home) return `${absoluteHome(home)}/.local/state/roster`;
    }
  }
  throw new UsageError("Cannot find a home for the store: pass --home DIR or set ROSTER_HOME");
}

export function denoEnv(): HomeEnv {
  return { os: Deno.build.os, get: envVar };
}

/**
 * A home that exists must be a directory: a path to a file is the caller's mistake (exit 2,
 * naming where the path came from), caught before any command touches the store.
 */
export function checkHome(home: Home): string {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(home.path);
  } catch {
    return home.path; // missing is fine: mutating commands create it, list reads nothing
  }
  if (!info.isDirectory) {
    throw new UsageError(`Invalid ${home.source ?? "home"}: not a directory: ${home.path}`);
  }
  return home.path;
}
