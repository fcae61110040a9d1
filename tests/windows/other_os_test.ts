/**
 * Two OSes, one home, one hostname, from the Windows side (issue 22 item 7): Linux records (a
 * WSL2 beside this Windows) are another host's, `unknown (other-host)`, and prune keeps them;
 * this roster's own records carry `os: "windows"` and go to `places/<host>~windows/`, never to
 * the host directory Linux reads as its older layout. Runs on a real Windows and under Wine.
 */
import { assertEquals } from "../assert.ts";
import { IS_WINDOWS, rosterWin, spawnPing, WINDOWS_ONLY } from "./helpers.ts";
import { hostDirName } from "../../src/registry/layout.ts";

interface Row {
  session_pid: number;
  liveness: string;
  reason: string;
  os: string | null;
  host: string;
  path: string;
}

async function json<T>(home: string, args: string[]) {
  const r = await rosterWin([...args, "--home", home, "--json"]);
  assertEquals(r.code, 0, `roster ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** No process of this Windows holds it: a pid probed here is gone. */
const LINUX_PID = 4_200_000;

Deno.test({
  name: `Linux records beside Windows ones under one hostname: other-host, kept (${WINDOWS_ONLY})`,
  ignore: !IS_WINDOWS,
  async fn(t) {
    const home = await Deno.makeTempDir({ prefix: "roster-win-os-" });
    try {
      await using ping = spawnPing();
      const own = await json<Row>(home, ["register", "--pid", String(ping.pid)]);
      await t.step("register writes os windows, under places/<host>~windows", () => {
        assertEquals(own.os, "windows");
        const sep = own.path.includes("\\") ? "\\" : "/";
        assertEquals(
          own.path.split(sep).slice(-3),
          ["places", `${hostDirName(own.host)}~windows`, `${ping.pid}.json`],
        );
      });
      // As a Linux roster writes them: boot, machine and pid namespace, a clock-tick token.
      const linux = (pid: number) => ({
        ...JSON.parse(Deno.readTextFileSync(own.path)),
        session_pid: pid,
        start_token: "151278",
        boot_id: "7e27cf72-b5d0-4af9-a874-e8c3afc9eb12",
        machine_id: "3d1219c7c4c5404aaa1f6d2a48adfda4",
        pid_ns: "pid:[4026531836]",
        cwd: "/home/u",
        os: "linux",
      });
      const plant = (dir: string, record: Record<string, unknown>) => {
        Deno.mkdirSync(dir, { recursive: true });
        Deno.writeTextFileSync(`${dir}\\${record.session_pid}.json`, JSON.stringify(record));
      };
      plant(
        `${home}\\places\\${hostDirName(own.host)}~3d1219c7c4c5404a.4026531836`,
        linux(LINUX_PID),
      );
      // The pid of this Windows session, on the Linux side too.
      plant(
        `${home}\\places\\${hostDirName(own.host)}~3d1219c7c4c5404a.4026531836`,
        linux(ping.pid),
      );
      // And one as a Linux roster of the first layout wrote it: no os field, sessions/<host>/.
      const { os: _os, ...older } = linux(LINUX_PID + 1);
      plant(`${home}\\sessions\\${hostDirName(own.host)}`, older);

      const judged = async () =>
        (await json<Row[]>(home, ["list", "--all"]))
          .map((r) => [r.session_pid, r.os, r.liveness, r.reason].join(" "))
          .sort();
      const expected = [
        `${LINUX_PID} linux unknown other-host`,
        `${LINUX_PID + 1}  unknown other-host`,
        `${ping.pid} linux unknown other-host`,
        `${ping.pid} windows alive running`,
      ].sort();
      await t.step("each Linux record is other-host, the Windows one running", async () => {
        assertEquals(await judged(), expected);
      });
      await t.step("prune, and prune --older-than 7d, keep them all", async () => {
        await json(home, ["prune"]);
        await json(home, ["prune", "--older-than", "7d"]);
        assertEquals(await judged(), expected);
      });
    } finally {
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
