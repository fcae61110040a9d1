/**
 * Load: 200 registers from 20 parallel workers with distinct pids, interleaved with 50
 * prunes and 50 lists. Afterwards exactly the expected records exist, each whole, no temp
 * file is left, and every list printed valid JSON.
 */
import { assert, assertEquals } from "../assert.ts";
import { hostDir, roster, spawnSleeper, tempDir, writeJson } from "../helpers.ts";
import { assertWhole } from "./store_check.ts";

Deno.test("load: 200 registers, 50 prunes, 50 lists from 20 workers", async () => {
  await using home = await tempDir();
  const sleepers = Array.from({ length: 200 }, () => spawnSleeper());
  try {
    // 20 dead records that prunes (and registers) should clear along the way.
    const seed = await roster([
      "register",
      "--pid",
      String(sleepers[0].pid),
      "--home",
      home.path,
      "--json",
    ]);
    assertEquals(seed.code, 0, seed.stderr);
    const row = JSON.parse(seed.stdout);
    const dead: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = spawnSleeper();
      dead.push(s.pid);
      await s.kill();
    }
    for (const pid of dead) {
      writeJson(`${hostDir(home.path)}/${pid}.json`, {
        ...row,
        session_pid: pid,
        start_token: "1",
      });
    }

    const listOutputs: string[] = [];
    const failures: string[] = [];
    const worker = async (w: number) => {
      const mine = sleepers.slice(w * 10, w * 10 + 10);
      for (let i = 0; i < mine.length; i++) {
        const r = await roster([
          "register",
          "--pid",
          String(mine[i].pid),
          "--home",
          home.path,
          "--quiet",
        ]);
        if (r.code !== 0) failures.push(`register: ${r.stderr}`);
        // 50 prunes and 50 lists spread over the 200 registers.
        if ((w * 10 + i) % 4 === 1) {
          const p = await roster(["prune", "--home", home.path, "--json"]);
          if (p.code !== 0) failures.push(`prune: ${p.stderr}`);
        }
        if ((w * 10 + i) % 4 === 3) {
          const l = await roster(["list", "--home", home.path, "--json"]);
          if (l.code !== 0) failures.push(`list: ${l.stderr}`);
          listOutputs.push(l.stdout);
        }
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, w) => worker(w)));
    assertEquals(failures, []);
    assertEquals(listOutputs.length, 50);
    for (const out of listOutputs) {
      assert(Array.isArray(JSON.parse(out)), "list printed a JSON array");
    }

    const final = await roster(["prune", "--home", home.path, "--json"]);
    assertEquals(final.code, 0, final.stderr);
    assertEquals(assertWhole(home.path), sleepers.map((s) => s.pid).sort((a, b) => a - b));
  } finally {
    await Promise.all(sleepers.map((s) => s.kill()));
  }
});
