import { assert, assertEquals } from "../assert.ts";
import {
  comparePsTokens,
  parsePsArgs,
  parsePsLine,
  PS_ENV,
  psArgs,
  psBackend,
  psProcessInfo,
  psToken,
} from "../../src/process/ps.ts";
import { linuxBackend } from "../../src/process/linux.ts";
import { spawnSleeper, spawnZombie } from "../helpers.ts";

const KNOWN_SEC = Date.parse("2026-11-29T18:41:32Z") / 1000;

Deno.test("parsePsLine", async (t) => {
  await t.step("a padded procps line", () => {
    assertEquals(parsePsLine("  1873  1872 Ss   Sun Nov 29 18:41:32 2026 bash"), {
      pid: 1873,
      ppid: 1872,
      stat: "Ss",
      startSec: KNOWN_SEC,
      comm: "bash",
    });
  });
  await t.step("a space-padded single-digit day (strftime %e)", () => {
    assertEquals(
      parsePsLine("42 1 S Mon Nov  2 03:04:05 2026 sh")?.startSec,
      Date.parse("2026-11-02T03:04:05Z") / 1000,
    );
  });
  await t.step("comm with spaces is the rest of the line", () => {
    assertEquals(
      parsePsLine("9 1 R+ Sun Nov 29 18:41:32 2026 Google Chrome Helper (GPU)")?.comm,
      "Google Chrome Helper (GPU)",
    );
  });
  await t.step("comm that looks like a date is still just the name", () => {
    const p = parsePsLine("9 1 S Sun Nov 29 18:41:32 2026 Mon Jan 1 00:00:00 1999");
    assertEquals(p?.startSec, KNOWN_SEC);
    assertEquals(p?.comm, "Mon Jan 1 00:00:00 1999");
  });
  await t.step("a trailing newline is not part of comm", () => {
    assertEquals(parsePsLine("9 1 S Sun Nov 29 18:41:32 2026 claude\n")?.comm, "claude");
  });
  await t.step("an empty comm is allowed", () => {
    assertEquals(parsePsLine("9 1 S Sun Nov 29 18:41:32 2026")?.comm, "");
  });
  await t.step("zombie stat", () => {
    const p = parsePsLine("77 1 Z+ Sun Nov 29 18:41:32 2026 sleep");
    assert(p !== null);
    assertEquals(psProcessInfo(p).zombie, true);
  });
  await t.step("other shapes are null", () => {
    assertEquals(parsePsLine(""), null);
    assertEquals(parsePsLine("PID PPID STAT STARTED COMMAND"), null);
    assertEquals(parsePsLine("9 1 S Sun Foo 29 18:41:32 2026 x"), null);
    assertEquals(parsePsLine("9 1 S Sun Feb 31 18:41:32 2026 x"), null);
    assertEquals(parsePsLine("9 1 S Sun Nov 29 25:41:32 2026 x"), null);
    assertEquals(parsePsLine("9 1 S dim. nov. 29 18:41:32 2026 x"), null);
    assertEquals(parsePsLine("9 S Sun Nov 29 18:41:32 2026 x"), null);
  });
});

Deno.test("ps process info and tokens", async (t) => {
  await t.step("a live line", () => {
    const p = parsePsLine("1873 1872 Ss Sun Nov 29 18:41:32 2026 bash");
    assert(p !== null);
    assertEquals(psProcessInfo(p), {
      pid: 1873,
      ppid: 1872,
      startToken: `ps:${KNOWN_SEC}`,
      startedAtMs: KNOWN_SEC * 1000,
      zombie: false,
      name: "bash",
    });
  });
  await t.step("within 2 seconds is the same, beyond is uncertain, never different", () => {
    const base = psToken(KNOWN_SEC);
    assertEquals(comparePsTokens(base, base), "same");
    assertEquals(comparePsTokens(base, psToken(KNOWN_SEC + 2)), "same");
    assertEquals(comparePsTokens(base, psToken(KNOWN_SEC - 2)), "same");
    assertEquals(comparePsTokens(base, psToken(KNOWN_SEC + 3)), "uncertain");
    assertEquals(comparePsTokens(base, psToken(KNOWN_SEC - 3600)), "uncertain");
    assertEquals(comparePsTokens(base, "linux:123"), "uncertain");
  });
  await t.step("args are split on whitespace", () => {
    assertEquals(parsePsArgs("node /opt/claude/cli.js --resume\n"), [
      "node",
      "/opt/claude/cli.js",
      "--resume",
    ]);
    assertEquals(parsePsArgs("\n"), null);
  });
});

function runPs(pid: number): { code: number; stdout: string } {
  const out = new Deno.Command("ps", {
    args: psArgs(pid),
    stdout: "piped",
    stderr: "null",
    env: { ...PS_ENV },
    clearEnv: true,
  }).outputSync();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test({
  name: "ps on this machine",
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    const linux = linuxBackend().probe(Deno.pid);
    assert(linux.kind === "exists" && linux.info.startedAtMs !== null);
    const linuxMs = linux.info.startedAtMs;

    await t.step("real output for this process parses with the right pids and start", () => {
      const out = runPs(Deno.pid);
      assertEquals(out.code, 0);
      const p = parsePsLine(out.stdout.trimEnd());
      assert(p !== null, `unparsed: ${JSON.stringify(out.stdout)}`);
      assertEquals(p.pid, Deno.pid);
      assertEquals(p.ppid, Deno.ppid);
      assert(Math.abs(p.startSec * 1000 - linuxMs) < 1000, `${p.startSec} vs ${linuxMs}`);
    });

    const b = psBackend();
    await t.step("the backend agrees with the Linux backend to the second", () => {
      const r = b.probe(Deno.pid);
      assert(r.kind === "exists");
      assertEquals(r.info.ppid, Deno.ppid);
      assertEquals(r.info.zombie, false);
      assertEquals(r.info.name, linux.info.name);
      assert(r.info.startedAtMs !== null && Math.abs(r.info.startedAtMs - linuxMs) < 1000);
      const again = b.probe(Deno.pid);
      assert(again.kind === "exists" && again.info.startToken !== null);
      assertEquals(b.compareTokens(r.info.startToken!, again.info.startToken), "same");
    });
    await t.step("a killed and reaped child is gone", async () => {
      const s = spawnSleeper();
      assertEquals(b.probe(s.pid).kind, "exists");
      await s.kill();
      assertEquals(b.probe(s.pid).kind, "gone");
    });
    await t.step("a real zombie is reported as one", async () => {
      await using zombie = await spawnZombie();
      const r = b.probe(zombie.pid);
      assert(r.kind === "exists" && r.info.zombie, JSON.stringify(r));
      assertEquals(r.info.ppid, zombie.parent);
    });
    await t.step("command splits args", () => {
      const c = b.command(Deno.pid);
      assertEquals(c.exe, null);
      assert(c.argv !== null && c.argv[0].endsWith("deno"), JSON.stringify(c.argv));
    });
    await t.step("non-positive pids are gone without asking ps", () => {
      assertEquals(b.probe(0).kind, "gone");
      assertEquals(b.probe(-1).kind, "gone");
    });
  },
});

/**
 * How BSD and macOS ps read one `-o` argument (FreeBSD bin/ps/keyword.c parsefmt): keywords
 * are split at commas, but the first `=` makes everything after it the header of that column.
 */
function bsdColumns(args: string[]): { keyword: string; header: string }[] {
  const columns: { keyword: string; header: string }[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== "-o") continue;
    let rest = args[++i];
    while (rest !== "") {
      const eq = rest.indexOf("=");
      const comma = rest.indexOf(",");
      if (eq !== -1 && (comma === -1 || eq < comma)) {
        columns.push({ keyword: rest.slice(0, eq), header: rest.slice(eq + 1) });
        break;
      }
      const end = comma === -1 ? rest.length : comma;
      columns.push({ keyword: rest.slice(0, end), header: rest.slice(0, end).toUpperCase() });
      rest = comma === -1 ? "" : rest.slice(comma + 1);
    }
  }
  return columns;
}

const fixture = (name: string) =>
  Deno.readTextFileSync(new URL(`../fixtures/ps/${name}`, import.meta.url)).trimEnd();

Deno.test("ps arguments and output on BSD and macOS (fixtures: tests/fixtures/ps)", async (t) => {
  await t.step("every column gets its own -o and an empty header, as BSD ps needs", () => {
    assertEquals(bsdColumns(psArgs(42)), [
      { keyword: "pid", header: "" },
      { keyword: "ppid", header: "" },
      { keyword: "state", header: "" },
      { keyword: "lstart", header: "" },
      { keyword: "comm", header: "" },
    ]);
    assertEquals(psArgs(42).slice(-2), ["-p", "42"]);
  });
  await t.step("the model reads the old single -o as one column, as FreeBSD did", () => {
    assertEquals(bsdColumns(["-o", "pid=,ppid=,stat=,lstart=,comm="]), [
      { keyword: "pid", header: ",ppid=,stat=,lstart=,comm=" },
    ]);
    for (const line of fixture("freebsd-combined.txt").split("\n")) {
      assertEquals(parsePsLine(line), null);
    }
  });
  await t.step("FreeBSD lines", () => {
    assertEquals(parsePsLine(fixture("freebsd-init.txt")), {
      pid: 1,
      ppid: 0,
      stat: "ILs",
      startSec: Date.parse("2026-11-30T09:12:01Z") / 1000,
      comm: "init",
    });
    const claude = parsePsLine(fixture("freebsd-claude.txt"));
    assert(claude !== null);
    assertEquals(psProcessInfo(claude), {
      pid: 71234,
      ppid: 71200,
      startToken: `ps:${Date.parse("2026-11-02T03:04:05Z") / 1000}`,
      startedAtMs: Date.parse("2026-11-02T03:04:05Z"),
      zombie: false,
      name: "claude",
    });
    const zombie = parsePsLine(fixture("freebsd-zombie.txt"));
    assert(zombie !== null && psProcessInfo(zombie).zombie);
  });
  await t.step("macOS lines: comm is a path, the name is its last part", () => {
    const launchd = parsePsLine(fixture("macos-launchd.txt"));
    assert(launchd !== null);
    assertEquals([launchd.pid, launchd.ppid, launchd.comm], [1, 0, "/sbin/launchd"]);
    assertEquals(psProcessInfo(launchd).name, "launchd");
    const claude = parsePsLine(fixture("macos-claude.txt"));
    assert(claude !== null);
    assertEquals(psProcessInfo(claude).name, "claude");
    assertEquals(claude.startSec, Date.parse("2026-11-02T03:04:05Z") / 1000);
    const spaced = parsePsLine(fixture("macos-spaces.txt"));
    assertEquals(spaced && psProcessInfo(spaced).name, "Activity Monitor");
    const zombie = parsePsLine(fixture("macos-zombie.txt"));
    assert(zombie !== null && psProcessInfo(zombie).zombie);
    assertEquals(psProcessInfo(zombie).name, "(sleep)");
  });
});

Deno.test({
  name: "with only --allow-run=ps, inherited LD_*/DYLD_* variables and a missing pid",
  ignore: Deno.build.os === "windows", // no ps on Windows
  async fn() {
    const dead = spawnSleeper();
    await dead.kill();
    const child = new URL("./ps_permissions_child.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-run=ps", child, String(Deno.pid), String(dead.pid)],
      env: { LD_LIBRARY_PATH: "/nonexistent", LD_PRELOAD: "", DYLD_INSERT_LIBRARIES: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assertEquals(out.code, 0, dec.decode(out.stderr));
    // ps runs despite the variables (Deno refuses to pass them on under --allow-run=ps), and
    // FreeBSD's check for a pid sysctl cannot see asks ps, not Deno.kill (which needs all run).
    assertEquals(JSON.parse(dec.decode(out.stdout)), {
      [`ps ${Deno.pid}`]: "exists",
      [`confirm ${Deno.pid}`]: "exists",
      [`ps ${dead.pid}`]: "gone",
      [`confirm ${dead.pid}`]: "gone",
    });
  },
});
