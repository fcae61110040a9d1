/**
 * `roster doctor`: what roster sees on this machine, and what is wrong with it: the home and
 * what chose it, this host's identity, the process backend and its limits, the store's counts,
 * the continuation mode and why, and each harness's hooks against the current recipe. Every
 * problem comes with one line of advice; any problem makes the exit code 1.
 */
import { EXIT } from "../../exit.ts";
import { readJson } from "../../fs/read.ts";
import { readRegularText } from "../../open_file.ts";
import { hookFiles, type HookReport, inspectHooks } from "../../hooks/install.ts";
import { fireProblems } from "../../hooks/fire.ts";
import { HOOK_HARNESSES } from "../../hooks/recipes.ts";
import { CONFIG_FILE, defaultLedger } from "../../continuation/ledger.ts";
import { modeOf } from "../../continuation/schema.ts";
import { waitMechanism } from "../../process/exit_wait.ts";
import { bootHistoryPath, bootHistoryProblem } from "../../registry/boots.ts";
import { denoEnv, resolveHome } from "../../registry/home.ts";
import { placeDirName } from "../../registry/layout.ts";
import { forEachRow } from "../../registry/scan.ts";
import { VERSION } from "../../version.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { psQuote, shQuote } from "../quote.ts";
import { printable } from "../terminal.ts";

/** How many malformed files doctor's advice names, each by its path. */
const MALFORMED_NAMED = 5;

/** A shell word: single-quoted, as this OS's shell reads it. */
const quoted = Deno.build.os === "windows" ? psQuote : shQuote;

/**
 * The advice for malformed files: remove exactly those, each by its path. Never a prune: its
 * --older-than also removes other hosts' unknown rows and the sessions a shared server hosts.
 */
function removeAdvice(paths: string[], total: number): string {
  const windows = Deno.build.os === "windows";
  // A directory where a record belongs is removed with what it holds (a plain rm fails on
  // it); a link is removed itself, never what it points at (lstat, and rm never follows one).
  const rm = (p: string) =>
    isDirectory(p)
      ? (windows ? "Remove-Item -Recurse -LiteralPath" : "rm -r --")
      : (windows ? "Remove-Item -LiteralPath" : "rm --");
  const more = total - paths.length;
  return `Remove ${total === 1 ? "it" : "each"} with: ` +
    paths.map((p) => `${rm(p)} ${quoted(p)}`).join("; ") +
    (more > 0 ? `; and ${more} more (roster list --state unknown --json shows each path)` : "");
}

function isDirectory(path: string): boolean {
  try {
    return Deno.lstatSync(path).isDirectory;
  } catch {
    return false;
  }
}

interface Problem {
  what: string;
  advice: string;
}

function homeSource(source: string | null): string {
  if (source !== null) return source;
  const xdg = Deno.env.get("XDG_STATE_HOME");
  return Deno.build.os !== "windows" && Deno.build.os !== "darwin" && xdg?.startsWith("/")
    ? "XDG_STATE_HOME"
    : "default";
}

function readLink(path: string): string | null {
  try {
    return Deno.readLinkSync(path);
  } catch {
    return null;
  }
}

/** The hidepid= option of /proc, or null when /proc is not mounted with one (or not Linux). */
function hidepid(): number | null {
  if (Deno.build.os !== "linux") return null;
  try {
    // Never blocking: a FIFO bound over it is no mount table (src/open_file.ts).
    for (const line of (readRegularText("/proc/self/mounts", 16 << 20) ?? "").split("\n")) {
      const [, where, type, options] = line.split(" ");
      if (where !== "/proc" || type !== "proc") continue;
      const m = /(?:^|,)hidepid=(\w+)/.exec(options ?? "");
      if (!m) return 0;
      const named: Record<string, number> = { off: 0, noaccess: 1, invisible: 2, ptraceable: 4 };
      return /^\d+$/.test(m[1]) ? Number(m[1]) : named[m[1]] ?? null;
    }
  } catch { /* no /proc/self/mounts */ }
  return null;
}

/** The problems of one hook file, each with the command (or edit) that mends it. */
function hookProblems(h: HookReport): Problem[] {
  const local = h.scope === "project" && h.path.endsWith(".local.json");
  const install = `roster hooks install ${h.scope === "project" ? "--project " : ""}${h.harness}` +
    (h.scope === "project" ? " (in the project's directory)" : "");
  if (h.state === "outdated") {
    return [{
      what: `The ${h.harness} hooks in ${h.path} are outdated: they differ from the current recipe`,
      // roster never writes the local file: its old hooks are taken out by hand.
      advice: local
        ? `Remove roster's hooks from ${h.path}; ${install} puts the current ones beside it`
        : install,
    }];
  }
  if (h.state === "invalid") {
    return [{
      what: `The ${h.harness} settings ${h.path} cannot be read: ${h.detail}`,
      advice: `Fix the file (it must be a JSON object), then: ${install}`,
    }];
  }
  return [];
}

export async function run(ctx: Context, _args: Parsed): Promise<number> {
  const problems: Problem[] = [];
  const resolved = resolveHome(ctx.args.get("home"), denoEnv());
  const source = homeSource(resolved.source);
  let exists = false;
  let homeProblem: string | null = null;
  // Windows has no uid (and its binary no sys access for one), and Deno reports every writable
  // Windows file as mode 0o666: owners and POSIX modes say nothing there.
  const posix = Deno.build.os !== "windows";
  const me = posix ? Deno.uid() : null;
  try {
    const info = Deno.statSync(resolved.path);
    exists = true;
    if (!info.isDirectory) homeProblem = "not a directory";
    else if (posix && info.uid !== null && me !== null && info.uid !== me) {
      homeProblem = `owned by uid ${info.uid}, not by you (uid ${me})`;
    } else if (posix && ((info.mode ?? 0) & 0o022) !== 0) homeProblem = "writable by others";
  } catch { /* not created yet: the first register creates it */ }
  if (homeProblem !== null) {
    problems.push({
      what: `The home ${resolved.path} is ${homeProblem}`,
      advice: homeProblem === "writable by others"
        ? `chmod 700 ${resolved.path}`
        : "Pass --home DIR (or set ROSTER_HOME) to a directory of your own",
    });
  }

  const judge = await ctx.judge();
  const backend = judge.backend;
  const here = judge.here;
  const timeNs = Deno.build.os === "linux" ? readLink("/proc/self/ns/time") : null;
  const pid1 = backend.probe(1);
  const canReadOthers = pid1.kind === "unsupported"
    ? null
    : pid1.kind === "exists" && pid1.info.startToken !== null;
  const hide = hidepid();
  if (backend.name === "none") {
    problems.push({
      what: "No process backend works here: every row is unknown (unsupported)",
      advice: "Run roster with the permissions of its build (docs/decisions.md)",
    });
  } else if (canReadOthers === false || (hide !== null && hide > 0)) {
    problems.push({
      what: `Other users' processes cannot be read${hide ? ` (/proc hidepid=${hide})` : ""}: ` +
        "their sessions show as unknown",
      advice: "Expected for other users' sessions; your own are judged as usual",
    });
  }

  const store = { alive: 0, dead: 0, unknown: 0, malformed: 0 };
  // Boots of records that share this host's name and machine id but that this machine never
  // ran (identity/liveness.ts bootVerdict): a clone of its image sharing the home.
  const cloneBoots = new Set<string>();
  const malformed: string[] = [];
  // The reader is careful with every file (a hostile one is a malformed row), so a home with
  // a problem is still counted.
  if (exists && homeProblem !== "not a directory") {
    try {
      forEachRow(resolved.path, judge, (row) => {
        store[row.liveness]++;
        if (row.malformed && ++store.malformed <= MALFORMED_NAMED) malformed.push(row.path);
        if (
          row.reason === "other-host" && here.machineId && row.machine_id === here.machineId &&
          row.host === here.host && row.os === here.os && row.boot_id !== null &&
          row.boot_id !== here.bootId
        ) cloneBoots.add(row.boot_id);
      });
    } catch (err) {
      // The rest of the report still helps: the store's problem is one of its lines.
      problems.push({
        what: `The store cannot be read: ${(err as Error).message}`,
        advice: homeProblem === null
          ? `ls -ld ${resolved.path} ${resolved.path}/places (it must be yours, mode 700), ` +
            `or pass --home DIR (or set ROSTER_HOME) to a directory of your own`
          : "Pass --home DIR (or set ROSTER_HOME) to a directory of your own",
      });
    }
  }
  // Without a usable history every earlier boot of this machine reads other-host: that is the
  // problem to name, not a clone.
  const history = bootHistoryProblem();
  if (history !== null) {
    const lost = "sessions of earlier boots read unknown (other-host), never dead (rebooted)";
    problems.push(
      "relative" in history
        ? {
          what: `ROSTER_BOOT_HISTORY is not an absolute path: ${history.relative}; ` +
            `no boot history is kept, so ${lost}`,
          advice: "Set ROSTER_BOOT_HISTORY to an absolute path on this machine's own disk, " +
            "or unset it",
        }
        : {
          what: `The boot history cannot be used: ${history.path}: ${history.problem}; ${lost}`,
          advice: `${removeAdvice([history.path], 1)} (as root if another user owns it; ` +
            "it is written again from this boot on)",
        },
    );
  } else if (cloneBoots.size > 0) {
    problems.push({
      what: `Another machine shares this machine id (${here.machineId}) and host name: ` +
        `records of ${cloneBoots.size} boot(s) this machine never ran (${
          [...cloneBoots].sort().join(", ")
        }); they read unknown (other-host), never dead`,
      advice: "Give each clone of a machine image its own machine id " +
        "(sudo rm /etc/machine-id && sudo systemd-machine-id-setup, then reboot); " +
        `if this machine's boot history (${bootHistoryPath()}) was removed, ignore this`,
    });
  }
  if (store.malformed > 0) {
    problems.push({
      what:
        `${store.malformed} malformed record(s) in the store (roster list shows each with its detail)`,
      advice: removeAdvice(malformed, store.malformed),
    });
  }

  const ledger = defaultLedger(resolved.path);
  const config = `${ledger}/${CONFIG_FILE}`;
  let mode: "on" | "off" | "dry-run" = "off";
  let why: string;
  const read = exists ? readJson(config) : null;
  if (read === null) why = `no ${config}: continuations are off until it sets a mode`;
  else if (!read.ok) {
    why = `${config} cannot be used (${read.problem}): off`;
    problems.push({
      what: `The continuation config ${config} is ${read.problem}`,
      advice: `Rewrite it as {"mode": "off"}, "on" or "dry-run"`,
    });
  } else {
    mode = modeOf(read.value);
    const given = (read.value as { mode?: unknown } | null)?.mode;
    if (given !== mode) {
      why = `${config} has no valid mode (${JSON.stringify(given) ?? "none"}): off`;
      problems.push({
        what: `The continuation config ${config} has an invalid mode: ${
          JSON.stringify(given) ?? "none"
        }`,
        advice: `Set "mode" in it to "on", "off" or "dry-run"`,
      });
    } else why = `${config} says ${mode}`;
  }

  // The user's hooks, and those of the project in the current directory, as each harness
  // reads them: a project's outdated hook runs there whatever the user's file says.
  const user = Deno.env.get(Deno.build.os === "windows" ? "USERPROFILE" : "HOME") || null;
  const hooks = HOOK_HARNESSES.flatMap((h) => hookFiles(h, user, Deno.cwd())).map(inspectHooks);
  for (const h of hooks) problems.push(...hookProblems(h));
  problems.push(...fireProblems(hooks, {
    PATH: Deno.env.get("PATH"),
    CODEX_HOME: Deno.env.get("CODEX_HOME"),
    HOME: user ?? undefined,
  }));

  const report = {
    ok: problems.length === 0,
    version: VERSION,
    home: { path: resolved.path, source, exists, problem: homeProblem },
    host: {
      hostname: here.host,
      store_dir: placeDirName(here),
      boot_id: here.bootId,
      machine_id: here.machineId,
      pid_ns: here.pidNs,
      time_ns: timeNs,
    },
    process: {
      backend: backend.name,
      wait: waitMechanism(),
      hidepid: hide,
      can_read_others: canReadOthers,
      uid: me,
    },
    store,
    continuation: { mode, why },
    hooks,
    problems,
  };
  if (ctx.json) ctx.printJson(report);
  else {
    const p = printable;
    const lines = [
      `roster ${VERSION}`,
      `home        ${p(resolved.path)} (from ${source})${exists ? "" : ", not created yet"}`,
      `host        ${p(here.host)} (store directory ${p(placeDirName(here))})`,
      `boot        ${p(here.bootId ?? "-")}`,
      `machine     ${p(here.machineId ?? "-")}`,
      `namespaces  ${p(here.pidNs ?? "-")}, ${p(timeNs ?? "-")}`,
      `processes   ${backend.name} backend, waits by ${waitMechanism()}` +
      (hide ? `, /proc hidepid=${hide}` : "") +
      (canReadOthers === false ? ", other users' processes unreadable" : ""),
      `store       ${store.alive} alive, ${store.dead} dead, ${store.unknown} unknown ` +
      `(${store.malformed} malformed)`,
      `continue    ${mode}: ${p(why)}`,
      ...hooks.map((h) => `hooks       ${h.harness} (${h.scope}): ${h.state} (${p(h.path)})`),
      "",
      ...(problems.length === 0
        ? ["No problems found."]
        : problems.flatMap((x) => [`problem: ${p(x.what)}`, `advice: ${p(x.advice)}`])),
    ];
    // Each value from outside escaped above, once: the line breaks are the report's own.
    ctx.out(lines.join("\n"), true);
  }
  return problems.length === 0 ? EXIT.OK : EXIT.FAILURE;
}
