/**
 * What ships is what is tested: every command of the CLI runs under the permission set each
 * release binary bakes in (scripts/build.ts PERMISSIONS), through `deno run` with the same flags,
 * as that OS (tests/cli/as_os.ts sets `Deno.build.os`, so the macOS or Windows code paths run),
 * and none may fail for want of a permission (`Requires ... access`). Before this test the
 * Windows set made `doctor` ask for the uid, and `exec` and `continuation-check --tmux` had no
 * run access under the macOS and Windows sets.
 */
import { assert, assertEquals } from "../assert.ts";
import { cleanEnv, DEFAULT_TIMEOUT_MS, ROOT, roster, spawnSleeper, tempDir } from "../helpers.ts";
import { osOf, PERMISSIONS, type TargetOs, TARGETS, V8_FLAGS } from "../../scripts/build.ts";
import { COMMANDS } from "../../src/cli/spec.ts";

const AS_OS = `${ROOT}tests/cli/as_os.ts`;
const DENIED = /Requires \S+ access|NotCapable|run again with the --allow/;

interface Call {
  args: string[];
  env?: Record<string, string>;
}

/** Every command, with arguments that take it past its checks into its work, in an order that builds the state the next needs. */
function calls(home: string, live: number, dead: number, facts: string): Call[] {
  const h = ["--home", home];
  const pane = { TMUX_PANE: "%7", TMUX: `${home}-tmux,1,0` };
  return [
    { args: ["--version"] },
    { args: ["help", "list"] },
    { args: ["schema", "row"] },
    { args: ["completions", "bash"] },
    { args: ["man"] },
    { args: ["register", "--pid", String(live), "--session-id", "L1", ...h] },
    { args: ["register", "--pid", String(dead), "--session-id", "D1", ...h], env: pane },
    { args: ["list", "--all", ...h] },
    { args: ["list", "--discover", "--all", ...h] },
    { args: ["check", String(live), ...h] },
    { args: ["token", String(live), ...h] },
    { args: ["whoami", ...h] },
    { args: ["park", "--pid", String(live), ...h] },
    { args: ["resume", "--pid", String(live), ...h] },
    { args: ["wait", String(live), "--timeout", "1s", ...h] },
    { args: ["metrics", ...h] },
    { args: ["doctor", ...h] },
    { args: ["hooks", "show", "claude", ...h] },
    {
      args: [
        "continuation-plan",
        "--key",
        "k",
        "--session",
        String(dead),
        "--frozen-marker",
        "m1",
        "--spacing",
        "0s",
        ...h,
      ],
    },
    { args: ["continuation-mode", "on", ...h] },
    { args: ["continuation-hold", ...h] },
    { args: ["continuation-release", "--key", "k", ...h] },
    { args: ["continuation-list", ...h] },
    { args: ["continuation-show", "--key", "k", ...h] },
    // --tmux reads the pane itself, with tmux, just before it claims.
    {
      args: ["continuation-check", "--key", "k", "--facts", facts, "--claim", "--tmux", ...h],
      env: pane,
    },
    { args: ["continuation-decline", "--key", "k", ...h] },
    { args: ["continuation-clean", "--dry-run", ...h] },
    // restore relaunches in tmux: the plan only (--dry-run), which still reads the panes.
    { args: ["restore", "--dry-run", ...h], env: pane },
    { args: ["exec", "--session-id", "E1", ...h, "--", "sh", "-c", "exit 0"] },
    // activity rewrites the live session's record under the store's lock (a hook's call).
    { args: ["activity", "idle", "--pid", String(live), ...h] },
    { args: ["unregister", "--pid", String(live), ...h] },
    { args: ["prune", ...h] },
  ];
}

/** Runs `call` as `os`'s binary would: its flags, its code paths. */
async function asBinary(os: TargetOs, call: Call) {
  const args = [
    "run",
    "--quiet",
    ...PERMISSIONS[os].filter((f) => f !== "--no-prompt"),
    "--no-prompt",
    ...V8_FLAGS,
    AS_OS,
    ...call.args,
  ];
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env: { ...cleanEnv(), NO_COLOR: "1", ROSTER_TEST_AS_OS: os, ...call.env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), DEFAULT_TIMEOUT_MS);
  try {
    const out = await child.output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("the calls cover every command of the CLI", () => {
  const named = new Set(calls("/h", 1, 2, "/f").map((c) => c.args[0]));
  assertEquals(COMMANDS.map((c) => c.name).filter((n) => !named.has(n)), []);
});

Deno.test({
  name: "every command runs under each release binary's permissions without a denial",
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    /** One run per distinct set: targets that share an OS share a binary's permissions. */
    const runs = new Map<TargetOs, Promise<string[]>>();
    const denials = (os: TargetOs) => {
      let p = runs.get(os);
      if (p === undefined) {
        p = (async () => {
          await using dir = await tempDir(`roster-perms-${os}-`);
          await using live = spawnSleeper();
          const gone = spawnSleeper();
          const home = `${dir.path}/home`;
          // The dead session was registered while it ran (its record has its token).
          const first = await roster(["register", "--pid", String(gone.pid), "--home", home]);
          assertEquals(first.code, 0, first.stderr);
          await gone.kill();
          const facts = `${dir.path}/facts.json`;
          Deno.writeTextFileSync(
            facts,
            JSON.stringify({
              ack_resumed: true,
              session_id: "D1",
              pane_key: "%7",
              last_entry_id: "m1",
              idle: true,
              pending_messages: 0,
              editor_text: "",
              user_active: false,
              prompt_open: false,
              watchdog_pid: null,
            }),
          );
          const found: string[] = [];
          for (const call of calls(home, live.pid, gone.pid, facts)) {
            const r = await asBinary(os, call);
            const said = `${r.stdout}\n${r.stderr}`;
            if (DENIED.test(said)) {
              found.push(
                `${call.args.join(" ")} (exit ${r.code}): ${r.stderr.trim().split("\n")[0]}`,
              );
            }
          }
          return found;
        })();
        runs.set(os, p);
      }
      return p;
    };
    // Started together: the three sets run side by side.
    for (const os of new Set(TARGETS.map(osOf))) denials(os).catch(() => {});
    for (const target of TARGETS) {
      await t.step(target, async () => {
        const os = osOf(target);
        assert(PERMISSIONS[os].includes("--no-prompt"));
        assertEquals(
          await denials(os),
          [],
          `${target} (${os}'s set: ${PERMISSIONS[os].join(" ")})`,
        );
      });
    }
  },
});
