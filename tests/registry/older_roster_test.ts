/**
 * An older roster beside this one (issue 24 item 6): a pinned CI image or an upgrade under way
 * runs a roster from before the place layout, which reads every directory under `sessions/` as
 * a host's and calls a record of `sessions/<host>~...` malformed, so its `prune --older-than 7d`
 * (the README's example) deleted live sessions' records. This layout lives under `places/`,
 * which no older roster reads. The older rosters here are the real ones, from git history.
 */
import { assertEquals } from "../assert.ts";
import { rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";

const REPO = new URL("../..", import.meta.url).pathname;

/** The rosters docs/decisions.md says are safe beside this one, each by its last commit. */
const OLDER = [
  // The last commit before the place layout (one directory per host: sessions/<host>/).
  { name: "before places", commit: "7c2078cea045c631fd1f73f57b1de6c85b055fa9" },
  // The place layout under sessions/ (sessions/<host>~<machine>.<pid ns>/).
  { name: "places under sessions/", commit: "e5ac3c440abdeef8376d06d226c96fe03f30d30f" },
];

const git = (args: string[]) =>
  new Deno.Command("git", { args: ["-C", REPO, ...args], stdout: "piped", stderr: "piped" })
    .outputSync();
/** A clone without that history (a shallow CI checkout) cannot run the older rosters. */
const HAVE_HISTORY = (() => {
  try {
    return OLDER.every((o) => git(["cat-file", "-e", `${o.commit}^{commit}`]).success);
  } catch {
    return false;
  }
})();

/** The older roster's tree, unpacked from git (no worktree is registered). */
async function unpack(commit: string, into: string) {
  const archive = git(["archive", "--format=tar", commit]);
  if (!archive.success) throw new Error(new TextDecoder().decode(archive.stderr));
  const tar = new Deno.Command("tar", { args: ["-x", "-C", into], stdin: "piped" }).spawn();
  const w = tar.stdin.getWriter();
  await w.write(archive.stdout);
  await w.close();
  assertEquals((await tar.status).code, 0);
}

/** Runs the older roster's main.ts, from its own tree (its deno.json), on `home`. */
async function older(tree: string, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--no-lock", `${tree}/main.ts`, ...args],
    cwd: tree,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test({
  name: "an older roster's prune beside this layout removes no live session's record",
  ignore: !HAVE_HISTORY || Deno.build.os !== "linux",
  async fn(t) {
    await using s = spawnSleeper();
    for (const o of OLDER) {
      await t.step(o.name, async () => {
        await using dir = await tempDir();
        const tree = `${dir.path}/older`;
        Deno.mkdirSync(tree);
        await unpack(o.commit, tree);
        const home = `${dir.path}/home`;
        const own = await rosterJson<Row>(home, ["register", "--pid", String(s.pid)]);
        // A week and a day old, as a long-lived session's file is: what --older-than 7d reaches.
        const old = new Date(Date.now() - 8 * 86_400_000);
        Deno.utimeSync(own.path, old, old);
        const before = Deno.readTextFileSync(own.path);
        for (const args of [["prune", "--older-than", "7d"], ["prune", "--older-than", "0s"]]) {
          const r = await older(tree, [...args, "--json", "--home", home]);
          assertEquals(r.code, 0, r.stderr);
          assertEquals(JSON.parse(r.stdout).removed, [], r.stdout);
        }
        assertEquals(Deno.readTextFileSync(own.path), before);
        const rows = await rosterJson<Row[]>(home, ["list"]);
        assertEquals(rows.map((r) => [r.session_pid, r.reason]), [[s.pid, "running"]]);
        // And what the older roster writes, this one reads beside its own.
        await using s2 = spawnSleeper();
        const r = await older(tree, ["register", "--pid", String(s2.pid), "--home", home]);
        assertEquals(r.code, 0, r.stderr);
        const all = await rosterJson<Row[]>(home, ["list"]);
        assertEquals(
          all.map((r) => [r.session_pid, r.reason, r.path.includes("/sessions/")]).sort(),
          [[s2.pid, "running", true], [s.pid, "running", false]].sort(),
        );
      });
    }
  },
});

Deno.test({
  name: "moving from an older layout keeps what was decided of a session (retest F3)",
  ignore: !HAVE_HISTORY || Deno.build.os !== "linux",
  async fn(t) {
    for (const o of OLDER) {
      await t.step(`parked under ${o.name}, registered again here: still parked`, async () => {
        await using s = spawnSleeper();
        await using dir = await tempDir();
        const tree = `${dir.path}/older`;
        Deno.mkdirSync(tree);
        await unpack(o.commit, tree);
        const home = `${dir.path}/home`;
        const pid = String(s.pid);
        for (
          const args of [["register", "--pid", pid, "--session-id", "s1"], ["park", "--pid", pid]]
        ) {
          const r = await older(tree, [...args, "--home", home]);
          assertEquals(r.code, 0, r.stderr);
        }
        const parked = await rosterJson<Row[]>(home, ["list", "--all"]);
        assertEquals(parked.map((r) => [r.session_pid, r.reason]), [[s.pid, "parked"]]);
        const parkedAt = parked[0].parked_at;
        await rosterJson<Row>(home, ["register", "--pid", pid, "--session-id", "s1"]);
        const rows = await rosterJson<Row[]>(home, ["list", "--all"]);
        assertEquals(
          rows.map((r) => [r.session_pid, r.reason, r.parked_at, r.path.includes("/places/")]),
          [[s.pid, "parked", parkedAt, true]],
        );
      });
    }
  },
});
