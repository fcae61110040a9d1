/**
 * What differs between the four harnesses for the suite's shared checks: how to start one, which
 * process of the real tree is the long-lived owner, where the harness itself says which session
 * it is on, and how a person ends it.
 */
import { startClaude, startCodex, startGemini, type StartOptions, startPi } from "./harnesses.ts";
import { descendants, type Pane, proc, type ProcInfo, type Rig, waitFor } from "./rig.ts";

export interface Kit {
  name: string;
  agent: string;
  start(rig: Rig, opts?: StartOptions): Promise<Pane>;
  /** The long-lived harness process under the pane, found from the real process tree. */
  owner(pane: Pane): Promise<ProcInfo>;
  /**
   * The session id from the harness's own files, where its tools get no variable naming it;
   * null when `idVar` reaches the tools.
   */
  sessionId: ((rig: Rig, owner: ProcInfo) => Promise<string>) | null;
  /** The variable the harness exports to its tools naming the session, if any. */
  idVar: string | null;
  /** The command that ends the session the normal way. */
  quit: string;
  /** Whether the start hook fires only at the first prompt (Codex) rather than at launch. */
  startsAtFirstPrompt: boolean;
}

const self = (pane: Pane) => [proc(pane.pid), ...descendants(pane.pid)].filter((p) => p !== null);

function find(what: string, pane: Pane, pred: (p: ProcInfo) => boolean): Promise<ProcInfo> {
  return waitFor(what, () => self(pane).find(pred) ?? null, 60_000);
}

function newestFile(dir: string, re: RegExp): string | null {
  let best: { path: string; mtime: number } | null = null;
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (re.test(e.name)) {
        const m = Deno.statSync(p).mtime?.getTime() ?? 0;
        if (!best || m > best.mtime) best = { path: p, mtime: m };
      }
    }
  };
  walk(dir);
  return (best as { path: string } | null)?.path ?? null;
}

export const CLAUDE: Kit = {
  name: "Claude Code",
  agent: "claude",
  start: startClaude,
  owner: (pane) => find("the claude process", pane, (p) => /claude(\.exe)?$/.test(p.exe ?? "")),
  sessionId: null,
  idVar: "CLAUDE_CODE_SESSION_ID",
  quit: "/exit",
  startsAtFirstPrompt: false,
};

export const CODEX: Kit = {
  name: "Codex",
  agent: "codex",
  start: startCodex,
  // The native TUI (under the node launcher); in server mode the session lives in the daemon.
  owner: (pane) =>
    find(
      "the codex process",
      pane,
      (p) => /\/bin\/codex$/.test(p.exe ?? "") && !p.argv.includes("app-server"),
    ),
  sessionId: null,
  idVar: "CODEX_THREAD_ID",
  quit: "/quit",
  startsAtFirstPrompt: true,
};

export const PI: Kit = {
  name: "pi",
  agent: "pi",
  start: startPi,
  owner: (pane) =>
    find("the pi process", pane, (p) => p.argv.some((a) => a.endsWith("/bin/pi") || a === "pi")),
  sessionId: (rig) =>
    waitFor("pi's session file", () => {
      const f = newestFile(`${rig.home}/.pi/agent/sessions`, /\.jsonl$/);
      if (!f) return null;
      const first = JSON.parse(Deno.readTextFileSync(f).split("\n")[0]);
      return typeof first.id === "string" ? first.id as string : null;
    }),
  idVar: null,
  quit: "/quit",
  startsAtFirstPrompt: false,
};

export const GEMINI: Kit = {
  name: "Gemini CLI",
  agent: "gemini",
  start: startGemini,
  // The launcher relaunches itself as a child with a heap flag: the child runs hooks and tools.
  owner: (pane) =>
    find(
      "the gemini child process",
      pane,
      (p) => p.argv.some((a) => a.startsWith("--max-old-space-size")),
    ),
  // Its hooks get $GEMINI_SESSION_ID, its tools do not: the chat file it writes says.
  sessionId: (rig) =>
    waitFor("Gemini CLI's chat file", () => {
      const f = newestFile(`${rig.home}/.gemini/tmp`, /^session-.*\.jsonl$/);
      if (!f) return null;
      const j = JSON.parse(Deno.readTextFileSync(f).split("\n")[0]);
      return typeof j.sessionId === "string" ? j.sessionId as string : null;
    }),
  idVar: null,
  quit: "/quit",
  startsAtFirstPrompt: false,
};
