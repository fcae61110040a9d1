/**
 * Windows keeps a process's parent pid after the parent exits and gives that pid to new
 * processes. A later, unrelated `claude.exe` holding it must never be read as the parent, nor
 * become the session roster registers. Runs on Windows and under Wine (scripts/wine/test.sh),
 * where pid reuse can be forced by creating processes until the pid comes back.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { windowsBackend } from "../../src/process/windows.ts";
import { isGone } from "../../src/process/types.ts";
import {
  IS_WINDOWS,
  MAIN,
  pingPath,
  sleep,
  startOrphan,
  takePid,
  UNDER_WINE,
  WINDOWS_ONLY,
  type WinSleeper,
} from "./helpers.ts";

Deno.test({
  name: `a stale parent pid held by a later claude.exe (${WINDOWS_ONLY})`,
  ignore: !IS_WINDOWS,
  async fn(t) {
    const b = windowsBackend();
    assert(b !== null);
    const dir = await Deno.makeTempDir({ prefix: "roster-stale-" });
    const claude = `${dir}\\claude.exe`;
    await Deno.copyFile(pingPath(), claude);
    const home = `${dir}\\home`;
    // The hook: a batch file that waits for a go file, then runs roster register with no pid,
    // so roster must find its session by walking up from its parent (this cmd.exe).
    const bat = `${dir}\\hook.bat`;
    await Deno.writeTextFile(
      bat,
      [
        "@echo off",
        ":wait",
        `if exist "${dir}\\go" goto run`,
        "ping -n 2 127.0.0.1 >nul",
        "goto wait",
        ":run",
        `"${Deno.execPath()}" run --quiet --no-check --allow-all "${MAIN}" register --home "${home}" --json > "${dir}\\out.txt" 2> "${dir}\\err.txt"`,
        `echo %ERRORLEVEL% > "${dir}\\code.txt"`,
        "",
      ].join("\r\n"),
    );
    const { parent, pid: hook } = await startOrphan("cmd.exe", ["/c", bat]);
    let stranger: WinSleeper | undefined;
    try {
      await t.step("the hook's parent exited: its parent pid names no process", () => {
        assert(isGone(b.probe(parent)));
        const p = b.probe(hook);
        assert(p.kind === "exists" && !p.info.zombie, JSON.stringify(p));
        assertEquals(p.info.ppid, parent);
      });

      // Forcing a pid's reuse takes a few hundred process creations under Wine; on a real
      // Windows it may take many thousands, so there the steps below are left to Wine.
      const reuse = { ignore: !UNDER_WINE };
      if (UNDER_WINE) stranger = await takePid(parent, claude);
      await t.step({
        ...reuse,
        name: "a later claude.exe took the pid: the hook's parent is unknown",
        fn() {
          const s = b.probe(stranger!.pid);
          assert(s.kind === "exists" && s.info.name?.toLowerCase() === "claude.exe");
          const p = b.probe(hook);
          assert(p.kind === "exists");
          assertEquals(p.info.ppid, null, "a parent created after its child is a stranger");
        },
      });

      await t.step({
        ...reuse,
        name: "roster register from the hook does not take it as its session",
        fn: async () => {
          await Deno.writeTextFile(`${dir}\\go`, "");
          let code: string | null = null;
          for (let i = 0; i < 600 && code === null; i++) {
            code = await Deno.readTextFile(`${dir}\\code.txt`).catch(() => null);
            if (code === null) await sleep(100);
          }
          assert(code !== null, "the hook did not run roster within 60 s");
          const stdout = await Deno.readTextFile(`${dir}\\out.txt`);
          const stderr = await Deno.readTextFile(`${dir}\\err.txt`);
          assertEquals(code.trim(), "2", `stdout: ${stdout}\nstderr: ${stderr}`);
          assertMatch(stderr, /Cannot tell which session this is/);
          assertEquals(stdout, "");
        },
      });
    } finally {
      await stranger?.kill();
      try {
        Deno.kill(hook, "SIGKILL");
      } catch { /* it finished */ }
      await sleep(200);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
