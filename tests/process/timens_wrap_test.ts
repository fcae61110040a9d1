/**
 * A time namespace whose boottime offset is more negative than a process's start: the kernel
 * shows that process's starttime as (start + offset) in u64, wrapped to about 1.8e12 ticks, so
 * no offset taken off gives back its token. Such a process must not read as "pid-reused" (dead):
 * roster cannot tell, so it is unknown.
 */
import { assert, assertEquals } from "../assert.ts";
import { parseStat } from "../../src/process/linux_proc.ts";
import { canUnshareTime, spawnSleeper } from "../helpers.ts";

const PROBE = `
import { linuxBackend } from "${new URL("../../src/process/linux.ts", import.meta.url).href}";
import { LivenessJudge } from "${new URL("../../src/identity/liveness.ts", import.meta.url).href}";
const [pid, token] = [Number(Deno.args[0]), Deno.args[1]];
const b = linuxBackend();
const p = b.probe(pid);
const judge = new LivenessJudge(b, { host: "h", machineId: null, bootId: null, pidNs: null });
const v = judge.verdict({ host: "h", session_pid: pid, start_token: token, boot_id: null,
  machine_id: null, pid_ns: null });
console.log(JSON.stringify({ kind: p.kind, startToken: p.kind === "exists" ? p.info.startToken : null, v }));
`;

Deno.test({
  name: "a live process started before a negative time namespace's zero is never called dead",
  ignore: !canUnshareTime(-1),
}, async (t) => {
  await using s = spawnSleeper();
  const token = parseStat(Deno.readTextFileSync(`/proc/${s.pid}/stat`))!.starttime;
  // An offset one second more negative than the sleeper's start: wait until the host's uptime
  // allows it (a namespace's clock may not start below zero).
  const offset = Math.floor(Number(token) / 100) + 1;
  for (;;) {
    const uptime = Number(Deno.readTextFileSync("/proc/uptime").split(".")[0]);
    if (uptime > offset + 1) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const out = await new Deno.Command("unshare", {
    args: [
      "--time",
      "--boottime",
      `-${offset}`,
      Deno.execPath(),
      "eval",
      "--ext=ts",
      PROBE,
      String(s.pid),
      token,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  const seen = JSON.parse(new TextDecoder().decode(out.stdout));
  await t.step("the process exists", () => assertEquals(seen.kind, "exists"));
  await t.step("its wrapped start time is no token", () => assertEquals(seen.startToken, null));
  await t.step("its session is not called dead", () => {
    assert(seen.v.liveness !== "dead", JSON.stringify(seen.v));
  });
});
