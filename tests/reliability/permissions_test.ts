/**
 * Permissions: directories created world-writable are tightened to 0700, record files are
 * 0600, and a record that is not the user's own or is writable by others is shown as
 * unknown/malformed rather than trusted.
 */
import { assert, assertEquals } from "../assert.ts";
import { hostDir, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

const mode = (path: string) => Deno.statSync(path).mode! & 0o7777;

Deno.test("permissions of the store", async (t) => {
  await using s = spawnSleeper();
  await t.step("a world-writable home and places directory are tightened to 0700", async () => {
    await using dir = await tempDir();
    const home = `${dir.path}/home`;
    Deno.mkdirSync(`${home}/places`, { recursive: true });
    Deno.chmodSync(home, 0o777);
    Deno.chmodSync(`${home}/places`, 0o777);
    const row = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)]);
    assertEquals(mode(home), 0o700);
    assertEquals(mode(`${home}/places`), 0o700);
    assertEquals(mode(hostDir(home)), 0o700);
    assertEquals(mode(row.path), 0o600);
    assertEquals(mode(`${hostDir(home)}/.lock`), 0o600);
  });
  await t.step("a loosened host directory is tightened on the next register", async () => {
    await using home = await tempDir();
    await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
    Deno.chmodSync(hostDir(home.path), 0o777);
    await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
    assertEquals(mode(hostDir(home.path)), 0o700);
  });
  await t.step("list and check read a loose home as it is: they never write", async () => {
    await using home = await tempDir();
    await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
    Deno.chmodSync(home.path, 0o755);
    for (const args of [["list"], ["check", String(s.pid)], ["whoami"]]) {
      await roster([...args, "--home", home.path]);
      assertEquals(mode(home.path), 0o755, args[0]);
    }
    await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
    assertEquals(mode(home.path), 0o700, "register, a writer, tightens it");
  });
  await t.step(
    "a home others may write to is tightened by every command, readers too",
    async () => {
      await using home = await tempDir();
      await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
      const commands = [
        ["list"],
        ["check", String(s.pid)],
        ["activity", "idle", "--pid", String(s.pid)],
        ["park", "--pid", String(s.pid)],
        ["park", "--undo", "--pid", String(s.pid)],
      ];
      for (const args of commands) {
        Deno.chmodSync(home.path, 0o777);
        await roster([...args, "--home", home.path]);
        assertEquals(mode(home.path), 0o700, args.join(" "));
      }
    },
  );
  await t.step("a shared sticky directory given as home is never tightened", async () => {
    await using dir = await tempDir();
    Deno.chmodSync(dir.path, 0o1777);
    await rosterJson(dir.path, ["register", "--pid", String(s.pid)]);
    assertEquals(mode(dir.path), 0o1777);
    assertEquals(mode(`${dir.path}/places`), 0o700);
  });
  await t.step("records not ours or writable by others are unknown/malformed", async () => {
    await using home = await tempDir();
    const row = await rosterJson<Row>(home.path, ["register", "--pid", String(s.pid)]);
    const list = async () => (await rosterJson<Row[]>(home.path, ["list"]))[0];
    Deno.chownSync(row.path, 65534, 65534);
    let r = await list();
    assertEquals([r.liveness, r.reason, r.detail], [
      "unknown",
      "malformed",
      "owned by another user",
    ]);
    Deno.chownSync(row.path, Deno.uid(), Deno.gid());
    for (const loose of [0o620, 0o602, 0o666]) {
      Deno.chmodSync(row.path, loose);
      r = await list();
      assertEquals(
        [r.reason, r.detail],
        ["malformed", "writable by group or others"],
        loose.toString(8),
      );
    }
    Deno.chmodSync(row.path, 0o644); // readable by others is fine: records hold no secrets
    r = await list();
    assertEquals(r.reason, "running");
    // And a plain prune leaves a distrusted record alone.
    Deno.chmodSync(row.path, 0o666);
    const p = await roster(["prune", "--home", home.path, "--json"]);
    assertEquals(JSON.parse(p.stdout).removed, []);
    assert(Deno.statSync(row.path).isFile);
  });
  await t.step("a symlinked sessions directory is refused, not followed", async () => {
    await using home = await tempDir();
    await using elsewhere = await tempDir();
    Deno.symlinkSync(elsewhere.path, `${home.path}/sessions`);
    const r = await roster(["list", "--home", home.path]);
    assertEquals(r.code, 1);
    assertEquals(r.stderr, `roster: Store directory is a symbolic link: ${home.path}/sessions\n`);
  });
});

Deno.test("a lock file that is a link is refused, and its target left alone", async () => {
  await using home = await tempDir();
  await using s = spawnSleeper();
  await rosterJson(home.path, ["register", "--pid", String(s.pid)]);
  const lock = `${hostDir(home.path)}/.lock`;
  Deno.removeSync(lock);
  Deno.symlinkSync(`${home.path}/elsewhere`, lock); // dangling: open(create) would make it
  const r = await roster(["register", "--pid", String(s.pid), "--home", home.path]);
  assertEquals(r.code, 1);
  assertEquals(r.stderr, `roster: The lock is not a regular file: ${lock}\n`);
  let created = true;
  try {
    Deno.lstatSync(`${home.path}/elsewhere`);
  } catch {
    created = false;
  }
  assertEquals(created, false);
});
