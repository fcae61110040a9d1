/**
 * The caller's own session seen from a sandbox (issue 22, item 1): session ids outlive their
 * processes (`claude --resume <id>`, `codex resume <id>`), so of several records of the declared
 * id only the newest, not ended, parked or resumed, reads `alive (own-session)`; the others read
 * `unknown (other-pid-ns)`, and `whoami` never answers with an ended record.
 */
import { assertEquals } from "../assert.ts";
import {
  cleanEnv,
  cliArgs,
  hostDir,
  installed,
  rosterJson,
  run,
  spawnSleeper,
  tempDir,
  writeJson,
} from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { canUnsharePid } from "../pidns.ts";

const SANDBOXES: [name: string, prefix: string[]][] = [
  ["unshare", ["unshare", "--pid", "--fork", "--mount-proc"]],
  ["bubblewrap", ["bwrap", "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc"]],
];

/** Sets fields of the record of `pid` (as a later register or roster command would). */
function edit(home: string, pid: number, fields: Record<string, unknown>) {
  const path = `${hostDir(home)}/${pid}.json`;
  writeJson(path, { ...JSON.parse(Deno.readTextFileSync(path)), ...fields });
}

Deno.test({
  name: "from a sandbox, only the newest live record of the declared id is the caller's own",
  ignore: !canUnsharePid(),
  async fn(t) {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    // S: a crashed session (stamped ended by a register in its namespace), then its resume.
    const dead = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(dead.pid), "--session-id", "S"]);
    await dead.kill();
    edit(home, dead.pid, {
      ended_at: new Date().toISOString(),
      ended_reason: "exited",
      registered_at: new Date(Date.now() - 60_000).toISOString(),
    });
    await using next = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(next.pid), "--session-id", "S"]);
    // E: only an ended record; P: a parked one; O: an older record beside a newer, both unstamped.
    const gone = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(gone.pid), "--session-id", "E"]);
    await gone.kill();
    edit(home, gone.pid, { ended_at: new Date().toISOString(), ended_reason: "exited" });
    await using parked = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(parked.pid), "--session-id", "P"]);
    await rosterJson(home, ["park", "--pid", String(parked.pid)]);
    await using older = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(older.pid), "--session-id", "O"]);
    edit(home, older.pid, { registered_at: new Date(Date.now() - 60_000).toISOString() });
    await using newer = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(newer.pid), "--session-id", "O"]);

    const inSandbox = async (prefix: string[], sid: string, args: string[]) => {
      const env = { ...cleanEnv(), NO_COLOR: "1", ROSTER_SESSION_ID: sid };
      const a = cliArgs([...args, "--json", "--home", home]);
      return await run(prefix[0], [...prefix.slice(1), Deno.execPath(), ...a], env);
    };
    for (const [name, prefix] of SANDBOXES) {
      await t.step(name, async () => {
        assertEquals(installed(prefix[0]), true, `${prefix[0]} is not installed`);
        for (const sid of ["S", "E", "P", "O"]) {
          const r = await inSandbox(prefix, sid, ["list", "--all"]);
          assertEquals(r.code, 0, r.stderr);
          const byPid = Object.fromEntries(
            (JSON.parse(r.stdout) as Row[]).map((
              x,
            ) => [x.session_pid, `${x.liveness} ${x.reason}`]),
          );
          const expected: Record<string, [number, string][]> = {
            S: [[dead.pid, "unknown other-pid-ns"], [next.pid, "alive own-session"]],
            E: [[gone.pid, "unknown other-pid-ns"]],
            P: [[parked.pid, "dead parked"]],
            O: [[older.pid, "unknown other-pid-ns"], [newer.pid, "alive own-session"]],
          };
          for (const [pid, verdict] of expected[sid]) {
            assertEquals(byPid[pid], verdict, `${sid}: pid ${pid}`);
          }
        }
        const me = await inSandbox(prefix, "S", ["whoami"]);
        assertEquals(me.code, 0, me.stderr);
        assertEquals(JSON.parse(me.stdout).session_pid, next.pid, "the live successor");
        const ended = await inSandbox(prefix, "E", ["whoami"]);
        assertEquals(ended.code, 3, `never an ended record: ${ended.stdout}`);
      });
    }
  },
});
