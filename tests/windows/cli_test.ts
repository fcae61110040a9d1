/**
 * The roster CLI end to end on Windows, run as a hook runs it: a record written and read back
 * (Deno reports every writable Windows file as mode 0o666), a ping.exe session alive, killed,
 * dead, pruned; a reused pid read as dead (pid-reused); the continuation ledger's plan, claim
 * and lock. Runs on a real Windows and under Wine (scripts/wine/test.sh).
 */
import { assert, assertEquals } from "../assert.ts";
import {
  IS_WINDOWS,
  rosterWin,
  sleep,
  spawnPing,
  startOrphan,
  takePid,
  UNDER_WINE,
  WINDOWS_ONLY,
} from "./helpers.ts";
import { BOUND_SCALE, waitUntil } from "../helpers.ts";
import { windowsBackend } from "../../src/process/windows.ts";
import { isGone } from "../../src/process/types.ts";

interface Row {
  session_pid: number;
  liveness: string;
  reason: string;
  session_id?: string | null;
}

async function json<T>(home: string, args: string[], env: Record<string, string> = {}) {
  const r = await rosterWin([...args, "--home", home, "--json"], env);
  assertEquals(r.code, 0, `roster ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

const rowOf = (rows: Row[], pid: number) => rows.find((r) => r.session_pid === pid);

Deno.test({
  name: `roster on Windows, end to end (${WINDOWS_ONLY})`,
  ignore: !IS_WINDOWS,
  async fn(t) {
    const home = await Deno.makeTempDir({ prefix: "roster-win-" });
    try {
      await t.step({
        name: "a pid reused by another process reads as dead (pid-reused)",
        // Forced through Wine's id ring (takePid); a real Windows reuses pids in its own order.
        ignore: !UNDER_WINE,
        fn: async () => {
          // Started through cmd's start so that no handle of ours keeps its pid from reuse,
          // and left to exit by itself (a terminated one's pid did not come back under Wine).
          const { pid } = await startOrphan("ping.exe", ["-n", "25", "127.0.0.1"]);
          await json(home, ["register", "--pid", String(pid)]);
          const b = windowsBackend()!;
          await waitUntil(() => isGone(b.probe(pid)), "ping -n 25 ended", { everyMs: 100 });
          await using second = await takePid(pid);
          const row = rowOf(await json<Row[]>(home, ["list", "--all"]), second.pid);
          assertEquals([row?.liveness, row?.reason], ["dead", "pid-reused"]);
          await json(home, ["prune"]);
        },
      });

      await t.step("register, list alive, kill, list dead, prune", async () => {
        await using ping = spawnPing();
        await json(home, ["register", "--pid", String(ping.pid), "--session-id", "W1"]);
        const alive = rowOf(await json<Row[]>(home, ["list"]), ping.pid);
        // Read back: before the fix every record read as unknown (malformed) on Windows.
        assertEquals([alive?.liveness, alive?.reason], ["alive", "running"]);
        assertEquals(alive?.session_id, "W1");
        await ping.kill();
        const dead = rowOf(await json<Row[]>(home, ["list", "--all"]), ping.pid);
        assertEquals(dead?.liveness, "dead");
        // No harness runs it (ping, no agent): no restore could bring it back, so a plain prune
        // removes it (a crashed agent session's row is kept for the retention window).
        const pruned = await json<{ removed: Row[] }>(home, ["prune"]);
        assert(pruned.removed.some((r) => r.session_pid === ping.pid), JSON.stringify(pruned));
        assertEquals(rowOf(await json<Row[]>(home, ["list", "--all"]), ping.pid), undefined);
      });

      await t.step(
        "wait: a process handle says when the session ends; --timeout is 124",
        async () => {
          await using ping = spawnPing();
          const waiting = rosterWin(["wait", String(ping.pid), "--home", home, "--json"]);
          // Long enough for deno.exe to start under Wine and open the handle.
          await sleep(3_000 * BOUND_SCALE);
          await ping.kill();
          const r = await waiting;
          assertEquals(r.code, 0, r.stderr);
          const out = JSON.parse(r.stdout);
          assertEquals([out.outcome, out.mechanism], ["exited", "handle"]);
          assertEquals(out.pids, [{ pid: ping.pid, exited: true }]);
          await using other = spawnPing();
          const late = await rosterWin([
            "wait",
            String(other.pid),
            "--home",
            home,
            "--timeout",
            "1s",
          ]);
          assertEquals(late.code, 124, late.stderr);
        },
      );

      await t.step("doctor: no uid and no POSIX owner or mode check of the home", async () => {
        // Deno reports every writable Windows file as 0o666: a mode check called every home
        // "writable by others" (chmod 700), and Deno.uid() needed sys access the binary lacks.
        const r = await rosterWin(["doctor", "--home", home, "--json"]);
        const report = JSON.parse(r.stdout) as {
          process: { uid: number | null };
          problems: { what: string }[];
        };
        assertEquals(report.process.uid, null);
        assertEquals(report.problems.filter((p) => p.what.startsWith("The home")), [], r.stderr);
      });

      await t.step("check answers for a registered live session", async () => {
        await using ping = spawnPing();
        await json(home, ["register", "--pid", String(ping.pid)]);
        const r = await rosterWin(["check", String(ping.pid), "--home", home]);
        assertEquals(r.code, 0, r.stderr);
        await rosterWin(["unregister", "--pid", String(ping.pid), "--home", home]);
      });

      await t.step("continuation: plan, release, claim once, lock released", async () => {
        const s = spawnPing();
        await json(home, ["register", "--pid", String(s.pid), "--session-id", "S1"], {
          TMUX_PANE: "%7",
        });
        await s.kill();
        const ledger = `${home}\\continuations`;
        await json(home, [
          "continuation-plan",
          "--key",
          "k",
          "--session",
          String(s.pid),
          "--frozen-marker",
          "m1",
          "--spacing",
          "0s",
        ]);
        await Deno.writeTextFile(`${ledger}\\config.json`, JSON.stringify({ mode: "on" }));
        await json(home, ["continuation-release", "--key", "k"]);
        const facts = {
          ack_resumed: true,
          session_id: "S1",
          pane_key: "%7",
          last_entry_id: "m1",
          idle: true,
          pending_messages: 0,
          editor_text: "",
          user_active: false,
          prompt_open: false,
          watchdog_pid: null,
        };
        const factsPath = `${home}\\facts.json`;
        await Deno.writeTextFile(factsPath, JSON.stringify(facts));
        const args = ["continuation-check", "--key", "k", "--facts", factsPath, "--claim"];
        const first = await rosterWin([...args, "--home", home, "--json"]);
        assertEquals(first.code, 0, first.stderr);
        assertEquals(JSON.parse(first.stdout).kind, "dispatch");
        const again = await rosterWin([...args, "--home", home, "--json"]);
        assertEquals([again.code, JSON.parse(again.stdout)], [12, {
          kind: "stop",
          reason: "claimed",
        }]);
        const names = [...Deno.readDirSync(ledger)].map((e) => e.name);
        assert(names.includes("k.claim"), names.join(" "));
        assert(!names.includes("dispatch.lock"), "the lock is released after the check");
      });
    } finally {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
