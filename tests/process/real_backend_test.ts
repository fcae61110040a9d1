/**
 * The backend this OS selects (src/process/mod.ts), against real processes: a child probed,
 * its token stable, killed and gone, a zombie on Unix, a pid no process holds. It runs on
 * every OS in CI (macOS and Windows jobs included), so the FFI wiring runs where it ships.
 */
import { assert, assertEquals } from "../assert.ts";
import { processBackend } from "../../src/process/mod.ts";
import { isGone } from "../../src/process/types.ts";
import { spawnKillable, spawnSleeper, spawnZombie } from "../helpers.ts";

const IS_WINDOWS = Deno.build.os === "windows";

/** A child that lives until killed: `sleep` on Unix, `ping.exe` on Windows. */
const spawnChild = () =>
  IS_WINDOWS ? spawnKillable("ping.exe", ["-n", "300", "127.0.0.1"]) : spawnSleeper();

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

Deno.test("the selected process backend with real processes", async (t) => {
  const b = await processBackend();
  const expected: Record<string, string> = {
    linux: "linux",
    darwin: "darwin",
    freebsd: "freebsd",
    windows: "windows",
  };
  await t.step("the native backend is chosen (FFI granted), not a fallback", () => {
    assertEquals(b.name, expected[Deno.build.os] ?? "ps");
  });

  await t.step("a child: exists, our child, token stable; killed: gone", async () => {
    const child = spawnChild();
    try {
      const first = b.probe(child.pid);
      assert(first.kind === "exists", JSON.stringify(first));
      assertEquals(first.info.ppid, Deno.pid);
      assertEquals(first.info.zombie, false);
      assert(first.info.startToken !== null);
      await sleep(1100);
      const again = b.probe(child.pid);
      assert(again.kind === "exists");
      assertEquals(b.compareTokens(first.info.startToken, again.info.startToken!), "same");
    } finally {
      await child.kill();
    }
    assert(isGone(b.probe(child.pid)), "a killed child is gone (or an unreaped exit)");
  });

  await t.step({
    name: "a zombie reads as one (Unix: an exited child its parent never reaps)",
    ignore: IS_WINDOWS, // Windows has no zombies; an exited process held open is tested there.
    fn: async () => {
      const isZombie = (pid: number) => {
        const p = b.probe(pid);
        return p.kind === "exists" && p.info.zombie;
      };
      await using zombie = await spawnZombie(isZombie);
      const p = b.probe(zombie.pid);
      assert(p.kind === "exists" && p.info.zombie, JSON.stringify(p));
      assertEquals(p.info.ppid, zombie.parent);
      assert(isGone(p));
    },
  });

  await t.step("a pid no process holds is gone", () => {
    // Above every OS's pid range (Linux 2^22, macOS 99998, FreeBSD 99999); odd on Windows.
    assertEquals(b.probe(4_200_001).kind, "gone");
  });
});
