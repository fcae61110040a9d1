/**
 * Full disk and read-only media: the home on a tiny tmpfs mounted by the test (root only;
 * skipped with a printed reason otherwise). A register that cannot write fails with exit 1
 * and a message naming the problem, and every existing record stays intact.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import { assertWhole, hasStackTrace, snapshot } from "./store_check.ts";

function mount(dir: string, options: string): boolean {
  const out = new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", options, "tmpfs", dir],
    stdout: "null",
    stderr: "null",
  }).outputSync();
  return out.code === 0;
}

function umount(dir: string) {
  new Deno.Command("umount", { args: ["-l", dir], stdout: "null", stderr: "null" }).outputSync();
}

const canMount = (() => {
  try {
    const dir = Deno.makeTempDirSync();
    const ok = mount(dir, "size=64k");
    if (ok) umount(dir);
    Deno.removeSync(dir);
    if (!ok) console.log("skipped: cannot mount a tmpfs here (needs root and mount rights)");
    return ok;
  } catch {
    console.log("skipped: cannot mount a tmpfs here (needs root and mount rights)");
    return false;
  }
})();

Deno.test({
  name: "full disk: register fails with exit 1, existing records intact",
  ignore: !canMount,
  async fn() {
    await using dir = await tempDir();
    assert(mount(dir.path, "size=64k"));
    const sleepers = Array.from({ length: 4 }, () => spawnSleeper());
    try {
      const home = `${dir.path}/home`;
      for (const s of sleepers.slice(0, 3)) {
        await rosterJson(home, ["register", "--pid", String(s.pid)]);
      }
      // Fill every remaining block.
      try {
        using f = Deno.openSync(`${dir.path}/filler`, { write: true, create: true });
        const chunk = new Uint8Array(4096);
        for (;;) f.writeSync(chunk);
      } catch { /* ENOSPC: full */ }
      const before = snapshot(home);

      const fresh = await roster(["register", "--pid", String(sleepers[3].pid), "--home", home]);
      assertEquals(fresh.code, 1, fresh.stderr);
      assertMatch(fresh.stderr, /^roster: Could not write: no space left on device: /);
      assert(!hasStackTrace(fresh.stderr));

      const refresh = await roster([
        "register",
        "--pid",
        String(sleepers[0].pid),
        "--agent",
        "x",
        "--home",
        home,
      ]);
      assertEquals(refresh.code, 1, refresh.stderr);
      assertMatch(refresh.stderr, /no space left on device/);

      assertEquals(snapshot(home), before);
      assertEquals(assertWhole(home).length, 3);
      const list = await roster(["list", "--json", "--home", home]);
      assertEquals(list.code, 0, list.stderr);
      assertEquals(JSON.parse(list.stdout).length, 3);
      // Freeing space is enough: the next register succeeds.
      Deno.removeSync(`${dir.path}/filler`);
      const again = await roster([
        "register",
        "--pid",
        String(sleepers[3].pid),
        "--home",
        home,
        "--quiet",
      ]);
      assertEquals(again.code, 0, again.stderr);
      assertEquals(assertWhole(home).length, 4);
    } finally {
      await Promise.all(sleepers.map((s) => s.kill()));
      umount(dir.path);
    }
  },
});

Deno.test({
  name: "read-only home: register fails with exit 1, list still works",
  ignore: !canMount,
  async fn() {
    await using dir = await tempDir();
    assert(mount(dir.path, "size=1m"));
    await using s = spawnSleeper();
    try {
      const home = `${dir.path}/home`;
      await rosterJson(home, ["register", "--pid", String(s.pid)]);
      const remount = new Deno.Command("mount", {
        args: ["-o", "remount,ro", dir.path],
        stdout: "null",
        stderr: "null",
      }).outputSync();
      assertEquals(remount.code, 0);
      const before = snapshot(home);
      const r = await roster(["register", "--pid", String(s.pid), "--home", home]);
      assertEquals(r.code, 1, r.stderr);
      assertMatch(r.stderr, /^roster: Could not .*: (Read-only file system|permission denied)/i);
      assert(!hasStackTrace(r.stderr));
      assertEquals(snapshot(home), before);
      const list = await roster(["list", "--json", "--home", home]);
      assertEquals(list.code, 0, list.stderr);
      assertEquals(JSON.parse(list.stdout).length, 1);
    } finally {
      umount(dir.path);
    }
  },
});
