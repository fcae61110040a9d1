/**
 * `roster list` from inside a sandbox: a new pid namespace of the same machine (bubblewrap, as
 * Codex's and Claude Code's sandboxes use it, and plain `unshare`). No record's pid can be
 * judged from there: they read `unknown (other-pid-ns)`, not `other-host`, and the caller's own
 * session, which its harness declares ($CODEX_THREAD_ID, ...), reads `alive (own-session)`.
 */
import { assertEquals } from "../assert.ts";
import {
  cleanEnv,
  cliArgs,
  installed,
  recordOf,
  rosterJson,
  run,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { canUnsharePid } from "../pidns.ts";
import { recordName } from "../../src/registry/layout.ts";

/** How each sandbox runs a command in a new pid namespace with its own /proc. */
const SANDBOXES: [name: string, prefix: string[]][] = [
  ["unshare", ["unshare", "--pid", "--fork", "--mount-proc"]],
  ["bubblewrap", ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc"]],
];

Deno.test({
  name: "list from a sandbox: other-pid-ns rows, and the caller's own session recognised",
  ignore: !canUnsharePid(),
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    await using own = spawnSleeper();
    await using other = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(own.pid), "--session-id", "s-own"]);
    await rosterJson(home, ["register", "--pid", String(other.pid), "--session-id", "s-other"]);
    // A session a shared server hosts (Codex's app-server), filed as register files one.
    await using server = spawnSleeper();
    const row = await rosterJson<Row>(home, [
      "register",
      "--pid",
      String(server.pid),
      "--session-id",
      "s-hosted",
    ]);
    const { path } = row;
    const hosted = `${path.slice(0, path.lastIndexOf("/"))}/${recordName(server.pid, "s-hosted")}`;
    writeJson(hosted, { ...recordOf(row), hosted: true });
    Deno.removeSync(path);

    for (const [name, prefix] of SANDBOXES) {
      await t.step(name, async () => {
        // bubblewrap is installed by .ci/setup.d/20-harnesses.sh: missing, this fails.
        assertEquals(installed(prefix[0]), true, `${prefix[0]} is not installed`);
        const env = {
          ...cleanEnv(),
          NO_COLOR: "1",
          CLAUDE_CODE_SESSION_ID: "s-own",
          CODEX_THREAD_ID: "s-hosted",
        };
        const args = cliArgs(["list", "--all", "--json", "--home", home]);
        const r = await run(prefix[0], [...prefix.slice(1), Deno.execPath(), ...args], env);
        assertEquals(r.code, 0, r.stderr);
        const rows = (JSON.parse(r.stdout) as Row[])
          .map((x) => [x.session_id, x.liveness, x.reason])
          .sort();
        assertEquals(rows, [
          ["s-hosted", "alive", "own-session"],
          ["s-other", "unknown", "other-pid-ns"],
          ["s-own", "alive", "own-session"],
        ]);
      });
    }

    await t.step("outside the sandbox both are judged by their processes", async () => {
      const rows = await rosterJson<Row[]>(home, ["list"], { env: { CODEX_THREAD_ID: "s-own" } });
      assertEquals(rows.map((x) => x.reason).sort(), ["hosted", "running", "running"]);
    });
  },
});
