/** Fixtures and small helpers the continuation tests share. */
import { assert } from "../assert.ts";
import { type CliResult, roster, rosterJson, spawnSleeper } from "../helpers.ts";
import type { Facts } from "../../src/continuation/rules.ts";
import { LivenessJudge } from "../../src/identity/liveness.ts";
import type { Plan } from "../../src/continuation/schema.ts";
import { processBackend } from "../../src/process/mod.ts";

/** A judge for this host, as a command gets one. */
export async function testJudge(): Promise<LivenessJudge> {
  const b = await processBackend();
  return new LivenessJudge(b, { host: Deno.hostname(), bootId: b.bootId() });
}

export function mkfifo(path: string) {
  const r = new Deno.Command("mkfifo", { args: [path] }).outputSync();
  assert(r.success, "mkfifo");
}

/** Writes `text` to `path` with `mode`, as a hand-edited or hostile file would be. */
export const put = (path: string, text: string, mode = 0o600) => {
  Deno.writeTextFileSync(path, text);
  Deno.chmodSync(path, mode);
};

export function iso() {
  return new Date().toISOString();
}

/** A released plan, valid as it stands. */
export const PLAN: Plan = {
  schema: 1,
  key: "k1",
  token: "t1",
  state: "released",
  session: {
    session_pid: 4242,
    start_token: "99",
    boot_id: null,
    machine_id: null,
    pid_ns: null,
    host: "h",
    session_id: "S1",
    agent: "claude",
    runtime: null,
    cwd: "/w",
    tmux_pane: null,
  },
  frozen_marker: null,
  interrupted_at: null,
  cause: null,
  tool_calls: [],
  not_before: null,
  deadline: null,
  spacing_ms: 0,
};

export const PANE = "%7";
/** What a resumed harness reports when nothing stands in the way. */
export const FACTS = {
  ack_resumed: true,
  session_id: "S1",
  pane_key: PANE,
  last_entry_id: "m1",
  idle: true,
  pending_messages: 0,
  editor_text: "",
  user_active: false,
  prompt_open: false,
  watchdog_pid: null,
} satisfies Facts;

export type Json = Record<string, unknown>;

/** A session registered (with a session id and a pane) whose process then died. */
export async function deadSession(
  home: string,
  sid: string | null = "S1",
  pane: string | null = PANE,
) {
  const s = spawnSleeper();
  const args = ["register", "--pid", String(s.pid), "--agent", "claude"];
  if (sid !== null) args.push("--session-id", sid);
  await rosterJson(home, args, { env: pane === null ? {} : { TMUX_PANE: pane } });
  await s.kill();
  return s.pid;
}

export const ledgerOf = (home: string) => `${home}/continuations`;

/** `continuation-plan` for `pid` (frozen marker m1, no spacing); `extra`: more flags. */
export async function plan(home: string, key: string, pid: number, extra: string[] = []) {
  return await rosterJson<Plan>(home, [
    "continuation-plan",
    "--key",
    key,
    "--session",
    String(pid),
    "--frozen-marker",
    "m1",
    "--spacing",
    "0s",
    ...extra,
  ]);
}

/** `continuation-check` of `key` with `facts` on stdin; `v`: its JSON output, if any. */
export async function check(
  home: string,
  key: string,
  extra: string[] = ["--claim", "--json"],
  facts: Json = FACTS,
  env: Record<string, string> = {},
): Promise<CliResult & { v: Json }> {
  const r = await roster(
    ["continuation-check", "--key", key, "--facts", "-", "--home", home, ...extra],
    { stdin: JSON.stringify(facts), env },
  );
  let v: Json = {};
  try {
    v = JSON.parse(r.stdout);
  } catch { /* text output, or asserted by the caller */ }
  return { ...r, v };
}
