/**
 * One side of place_test.ts, run as the first process of a private pid namespace
 * (tests/pidns.ts): `deno run -A place_ns.ts HOME PID SESSION DIR` starts a process at pid PID
 * of this namespace, registers it as SESSION, writes DIR/SESSION.ready, waits for DIR/go, then
 * prints `roster list --all --json` as seen from here and exits.
 */
import { rosterJson, spawnSleeper } from "../helpers.ts";
import { atPid } from "../pidns.ts";

const [home, pidText, session, dir] = Deno.args;
const sleeper = await atPid(Number(pidText), () => spawnSleeper());
if (sleeper === null) throw new Error(`Could not start a process at pid ${pidText}`);
await using _sleeper = sleeper;
await rosterJson(home, ["register", "--pid", pidText, "--session-id", session]);
Deno.writeTextFileSync(`${dir}/${session}.ready`, "");
for (let i = 0; i < 1200; i++) {
  try {
    Deno.statSync(`${dir}/go`);
    break;
  } catch {
    await new Promise((ok) => setTimeout(ok, 100));
  }
}
console.log(JSON.stringify(await rosterJson(home, ["list", "--all"])));
