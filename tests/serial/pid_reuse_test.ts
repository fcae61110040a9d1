/**
 * Real PID reuse: each scenario (pid_reuse_scenarios.ts) runs inside a private pid namespace
 * (`unshare --pid --fork --mount-proc`, through tests/pidns.ts), where it rewinds that namespace's pid counter (ns_last_pid) so a new process gets a pid that
 * was just freed. The host's counter is never written: other processes on the machine are not
 * handed recycled pids.
 */
import { assertEquals } from "../assert.ts";
import { canUnsharePid, forceNextPid, inPrivatePidNs } from "../pidns.ts";

const SCRIPT = new URL("./pid_reuse_scenarios.ts", import.meta.url).pathname;

async function scenario(name: string): Promise<void> {
  const r = await inPrivatePidNs(SCRIPT, [name]);
  assertEquals(r.code, 0, `scenario ${name} failed:\n${r.stdout}\n${r.stderr}`);
  assertEquals(r.stdout.trim().split("\n").at(-1), `scenario ${name}: ok`);
}

Deno.test({
  name: "real PID reuse (private pid namespace) is dead/pid-reused",
  ignore: !canUnsharePid(),
  fn: () => scenario("reusedPid"),
});

Deno.test({
  name:
    "recipe: Claude Code after a crash-restart on the same pid (real PID reuse, private pid namespace)",
  ignore: !canUnsharePid(),
  fn: () => scenario("claudeRestart"),
});

Deno.test({
  name: "forceNextPid refuses to write the host's pid counter",
  fn() {
    let threw = false;
    try {
      forceNextPid(12345);
    } catch {
      threw = true;
    }
    assertEquals(threw, true);
  },
});
