/**
 * Why an installed hook would not fire, for `roster doctor`: the `roster` its command runs is not
 * on PATH, a tool the recipe needs (`jq` for Codex and Gemini CLI) is missing, or Codex has not
 * been told to trust the hook (Codex 0.169 runs a hook only once a person trusted it in its
 * TUI, stored in config.toml as `[hooks.state."<file>:<event>:<group>:<hook>"] trusted_hash`;
 * `codex exec` skips an untrusted hook without a word).
 */
import { PATH_DELIMITER } from "../fs/path.ts";
import { type HookReport, readHookFile } from "./install.ts";
import { isRosterCommand } from "./recipes.ts";
import { readSettings } from "./settings.ts";

export interface Problem {
  what: string;
  advice: string;
}

/** The first executable file named `name` on `path` (a PATH value), or null. */
export function onPath(name: string, path: string | undefined): string | null {
  const exts = Deno.build.os === "windows" ? [".exe", ".cmd", ".bat", ""] : [""];
  for (const dir of (path ?? "").split(PATH_DELIMITER)) {
    if (dir === "") continue;
    for (const ext of exts) {
      try {
        const info = Deno.statSync(`${dir}/${name}${ext}`);
        if (info.isFile && (Deno.build.os === "windows" || ((info.mode ?? 0) & 0o111) !== 0)) {
          return `${dir}/${name}${ext}`;
        }
      } catch { /* not here */ }
    }
  }
  return null;
}

/** Codex's event names in its trust keys: SessionStart is session_start. */
const snake = (event: string) => event.replace(/(?<=[a-z])([A-Z])/g, "_$1").toLowerCase();

/**
 * The trust keys of roster's hooks in a Codex hooks file: `<file>:<event>:<group>:<hook>`, the
 * group's and the hook's index in the file as it is now.
 */
export function codexTrustKeys(path: string, text: string): string[] {
  const s = readSettings(text, { comments: false }, path);
  const keys: string[] = [];
  const hooks = (s.value.hooks ?? {}) as Record<string, unknown[]>;
  for (const [event, groups] of Object.entries(hooks)) {
    groups.forEach((g, i) => {
      const list = (g as { hooks?: unknown[] } | null)?.hooks;
      if (!Array.isArray(list)) return;
      list.forEach((h, j) => {
        if (isRosterCommand((h as { command?: unknown } | null)?.command)) {
          keys.push(`${path}:${snake(event)}:${i}:${j}`);
        }
      });
    });
  }
  return keys;
}

/** The keys of config.toml's `[hooks.state."KEY"]` tables that hold a `trusted_hash`. */
export function trustedKeys(toml: string): Set<string> {
  const out = new Set<string>();
  let current: string | null = null;
  for (const line of toml.split(/\r?\n/)) {
    const header = /^\s*\[\s*hooks\.state\.("(?:[^"\\]|\\.)*")\s*\]\s*(?:#.*)?$/.exec(line);
    if (header) {
      current = JSON.parse(header[1]);
      continue;
    }
    if (/^\s*\[/.test(line)) current = null;
    else if (current !== null && /^\s*trusted_hash\s*=\s*"sha256:[0-9a-f]+"/.test(line)) {
      out.add(current);
    }
  }
  return out;
}

/** The problems that keep an installed hook from firing, each with a command to paste. */
export function fireProblems(
  hooks: HookReport[],
  env: { PATH?: string; CODEX_HOME?: string; HOME?: string },
): Problem[] {
  const problems: Problem[] = [];
  const live = hooks.filter((h) => h.state === "installed" || h.state === "outdated");
  if (live.length > 0 && onPath("roster", env.PATH) === null) {
    const self = Deno.execPath();
    const exe = /(^|\/)roster(\.exe)?$/.test(self) ? self : "/path/to/roster";
    problems.push({
      what: `The hooks in ${live.map((h) => h.path).join(", ")} run \`roster\`, which is not on ` +
        "PATH: they fail without a word",
      advice: `mkdir -p ~/.local/bin && ln -sf ${exe} ~/.local/bin/roster ` +
        "(and put ~/.local/bin on the PATH the harness starts with)",
    });
  }
  const codex = live.filter((h) => h.harness === "codex");
  // The recipes that run `jq`, and what each loses without it.
  const needJq = [
    codex.length > 0 &&
    "The Codex hooks read the session id with `jq`, which is not on PATH: every record gets " +
      "no session id",
    live.some((h) => h.harness === "gemini") &&
    "The Gemini CLI BeforeTool hook reads the session id with `jq`, which is not on PATH: " +
      "shell commands in a sandbox cannot tell their session",
  ].filter((what): what is string => what !== false);
  if (needJq.length > 0 && onPath("jq", env.PATH) === null) {
    for (const what of needJq) {
      problems.push({ what, advice: "sudo apt-get install jq (or: brew install jq)" });
    }
  }
  if (codex.length > 0) {
    const home = env.CODEX_HOME || (env.HOME ? `${env.HOME}/.codex` : null);
    let trusted = new Set<string>();
    try {
      const toml = home === null ? null : readHookFile(`${home}/config.toml`);
      if (toml !== null) trusted = trustedKeys(toml);
    } catch { /* unreadable: nothing is trusted */ }
    for (const h of codex) {
      let keys: string[];
      try {
        const text = readHookFile(h.path);
        keys = text === null ? [] : codexTrustKeys(h.path, text);
      } catch {
        continue;
      }
      const untrusted = keys.filter((k) => !trusted.has(k));
      if (untrusted.length === 0) continue;
      problems.push({
        what: `Codex has not trusted roster's hooks in ${h.path} (${untrusted.length} of ` +
          `${keys.length}): codex runs them only once trusted, and codex exec skips them silently`,
        advice: 'Start codex once in a terminal here and choose "Trust all and continue" at ' +
          '"Hooks need review"; for codex exec only (CI): codex exec ' +
          "--dangerously-bypass-hook-trust ...",
      });
    }
  }
  return problems;
}
