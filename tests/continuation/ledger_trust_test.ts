/**
 * The ledger's housekeeping commands refuse a ledger that is a link roster did not make, as
 * its writers do: clean would remove, decline and the lock would write, hold off would remove
 * in the directory the link points at. A ledger that is not there is nothing to do.
 */
import { assertEquals, assertMatch } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";
import { deadSession, ledgerOf, plan } from "./fixtures.ts";

/** The names in `dir` and each one's modification time: what a refused command must keep. */
function snapshot(dir: string): string[] {
  return [...Deno.readDirSync(dir)]
    .map((e) => `${e.name} ${Deno.lstatSync(`${dir}/${e.name}`).mtime?.getTime()}`)
    .sort();
}

Deno.test("a ledger that is a link: clean, decline and hold off refuse it", async (t) => {
  await using home = await tempDir();
  const pid = await deadSession(home.path);
  await plan(home.path, "k1", pid);
  // The real ledger moves aside; the home's ledger becomes a link to it, holding old files.
  const real = `${home.path}/elsewhere`;
  Deno.renameSync(ledgerOf(home.path), real);
  const old = new Date(Date.now() - 3 * 86_400_000);
  for (const name of ["k2.claim", "k2.skip", "k2.outcome", "w.4000000.x1.tmp", "hold"]) {
    Deno.writeTextFileSync(`${real}/${name}`, "{}");
    Deno.utimeSync(`${real}/${name}`, old, old);
  }
  Deno.symlinkSync(real, ledgerOf(home.path));
  const before = snapshot(real);
  const commands: [string, string[]][] = [
    ["continuation-clean", ["continuation-clean", "--home", home.path]],
    ["continuation-clean --dry-run", ["continuation-clean", "--dry-run", "--home", home.path]],
    ["continuation-decline", [
      "continuation-decline",
      "--key",
      "k1",
      "--reason",
      "x",
      "--home",
      home.path,
    ]],
    ["continuation-hold off", ["continuation-hold", "off", "--home", home.path]],
    ["continuation-hold off --ledger", [
      "continuation-hold",
      "off",
      "--ledger",
      ledgerOf(home.path),
    ]],
  ];
  for (const [name, args] of commands) {
    await t.step(`${name}: exit 1, nothing removed or written`, async () => {
      const r = await roster(args);
      assertEquals(r.code, 1, r.stderr);
      assertMatch(r.stderr, /^roster: Ledger directory is a symbolic link: /);
      assertEquals(snapshot(real), before);
    });
  }
});

Deno.test("hold off and clean on a home with no ledger: nothing to do, exit 0", async () => {
  await using home = await tempDir();
  const off = await roster(["continuation-hold", "off", "--home", `${home.path}/new`]);
  assertEquals([off.code, off.stdout, off.stderr], [0, "No hold.\n", ""]);
  const clean = await roster(["continuation-clean", "--home", `${home.path}/new`]);
  assertEquals([clean.code, clean.stderr], [0, ""]);
  assertEquals([...Deno.readDirSync(home.path)], []);
});
