/** Where the store lives: `--home`, else `$ROSTER_HOME`, else the platform's state directory. */
import { UsageError } from "../errors.ts";

export interface HomeEnv {
  os: typeof Deno.build.os;
  get(name: string): string | undefined;
}

/** Pure: resolves the home directory from the flag and the environment. */
export function resolveHome(flag: string | undefined, env: HomeEnv): string {
  if (flag !== undefined) {
    if (flag === "") {
      throw new UsageError("Invalid --home: expected a directory path, got an empty string");
    }
    return flag;
  }
  const fromEnv = env.get("ROSTER_HOME");
  if (fromEnv) return fromEnv;
  const home = env.get(env.os === "windows" ? "USERPROFILE" : "HOME");
  switch (env.os) {
    case "windows": {
      const local = env.get("LOCALAPPDATA") ?? (home ? `${home}\\AppData\\Local` : undefined);
      if (local) return `${local}\\roster`;
      break;
    }
    case "darwin":
      if (home) return `${home}/Library/Application Support/roster`;
      break;
    default: {
      const xdg = env.get("XDG_STATE_HOME");
      // The XDG spec says relative paths are invalid and must be ignored.
      if (xdg && xdg.startsWith("/")) return `${xdg}/roster`;
      if (home) return `${home}/.local/state/roster`;
    }
  }
  throw new UsageError(
    "Cannot find a home for the store: pass --home DIR or set ROSTER_HOME",
  );
}

export function denoEnv(): HomeEnv {
  return { os: Deno.build.os, get: (name) => Deno.env.get(name) };
}
