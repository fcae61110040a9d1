/**
 * scripts/deno, the README's launcher, on a machine with npm but no Deno: a PATH that holds
 * everything but `deno` and an empty cache. It fetches the pinned Deno from the npm registry
 * once, reuses it, ignores a deno of another version, and says what is missing without npm.
 * The README's set-up command runs from a fresh clone exactly as written.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { cleanEnv, ROOT, run, spawnSleeper, tempDir } from "../helpers.ts";

const LAUNCHER = `${ROOT}scripts/deno`;
const PINNED = "2.9.6";

/** A directory of links to everything on PATH except `hidden`, plus `extra` scripts. */
async function pathWithout(
  dir: string,
  hidden: string[],
  extra: Record<string, string> = {},
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, body] of Object.entries(extra)) {
    await Deno.writeTextFile(`${dir}/${name}`, body);
    await Deno.chmod(`${dir}/${name}`, 0o755);
  }
  for (const p of (Deno.env.get("PATH") ?? "").split(":")) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(p)];
    } catch {
      continue;
    }
    for (const e of entries) {
      if (hidden.includes(e.name) || e.name in extra) continue;
      await Deno.symlink(`${p}/${e.name}`, `${dir}/${e.name}`).catch(() => {});
    }
  }
  return dir;
}

/**
 * A private HOME, PATH and cache; the machine's network settings (CA bundles, proxies) kept, or
 * npm would retry a TLS failure for minutes.
 */
function baseEnv(path: string, cache: string, home: string): Record<string, string> {
  const net = Object.entries(Deno.env.toObject()).filter(([k]) =>
    /CERT|(^|_)CA(_|$)|SSL|PROXY/i.test(k)
  );
  return {
    ...Object.fromEntries(net),
    PATH: path,
    HOME: home,
    ROSTER_DENO_CACHE: cache,
    NO_COLOR: "1",
  };
}

Deno.test("scripts/deno fetches the pinned Deno from npm when none is installed", async (t) => {
  await using dir = await tempDir("roster-launcher-");
  const path = await pathWithout(`${dir.path}/bin`, ["deno"]);
  const cache = `${dir.path}/cache`;
  // npm's own cache stays the user's (a warm one makes this fast); everything else is private.
  const env = {
    ...baseEnv(path, cache, dir.path),
    npm_config_cache: `${Deno.env.get("HOME")}/.npm`,
  };

  await t.step("no deno on PATH: it is fetched into the cache and run", async () => {
    const r = await run(LAUNCHER, ["--version"], env);
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, new RegExp(`^deno ${PINNED.replaceAll(".", "\\.")} `));
    assertMatch(r.stderr, /fetching deno@2\.9\.6 from the npm registry/);
  });

  await t.step("the second run uses the cache and says nothing", async () => {
    const r = await run(LAUNCHER, ["--version"], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stderr, "");
    assertMatch(r.stdout, /^deno 2\.9\.6 /);
  });

  await t.step("a deno of another version on PATH is not used", async () => {
    const other = await pathWithout(`${dir.path}/bin-old`, [], {
      deno: "#!/bin/sh\necho 'deno 1.0.0 (fake)'\n",
    });
    const r = await run(LAUNCHER, ["--version"], { ...env, PATH: other });
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, /^deno 2\.9\.6 /);
  });

  await t.step("the README's run command works from a fresh clone", async () => {
    const clone = `${dir.path}/clone`;
    const git = await run("git", ["clone", "--quiet", ROOT, clone], env);
    assertEquals(git.code, 0, git.stderr);
    const readme = await Deno.readTextFile(`${clone}/README.md`);
    const command = readme.match(/^(scripts\/deno task roster --help)\s/m);
    assert(command, "README names `scripts/deno task roster --help`");
    const r = await run("sh", ["-c", command[1]], env, clone);
    assertEquals(r.code, 0, r.stderr);
    assertMatch(r.stdout, /^roster \S+: a host-local registry/);
  });

  await t.step("the README's install command puts a working roster on PATH", async () => {
    const readme = await Deno.readTextFile(`${ROOT}README.md`);
    const line = readme.match(/^scripts\/deno (install -g .*)$/m);
    assert(line, "README names `scripts/deno install -g ...`");
    const root = `${dir.path}/root`;
    const args = line[1].split(/\s+/);
    const r = await run(
      LAUNCHER,
      [...args.slice(0, 2), "--root", root, ...args.slice(2)],
      env,
      ROOT,
    );
    assertEquals(r.code, 0, r.stderr);
    // The installed script runs `deno`: the fetched one, by PATH.
    const fetched = (await run(LAUNCHER, ["eval", "console.log(Deno.execPath())"], env)).stdout
      .trim();
    const bin = `${dir.path}/bin-installed`;
    await Deno.mkdir(bin);
    await Deno.symlink(fetched, `${bin}/deno`);
    const v = await run(`${root}/bin/roster`, ["--version"], { ...env, PATH: `${bin}:${path}` });
    assertEquals(v.code, 0, v.stderr);
    assertMatch(v.stdout, /^roster \d+\.\d+\.\d+/);
  });
});

Deno.test("scripts/deno without Deno and without npm names what to install", async () => {
  await using dir = await tempDir("roster-launcher-");
  const path = await pathWithout(`${dir.path}/bin`, ["deno", "npm"]);
  const r = await run(LAUNCHER, ["--version"], baseEnv(path, `${dir.path}/cache`, dir.path));
  assertEquals(r.code, 127);
  assertEquals(r.stdout, "");
  assertMatch(r.stderr, /^scripts\/deno: Deno 2\.9\.6 is not installed and npm is missing/);
});

Deno.test("deno task roster records the caller's directory, not the checkout's", async () => {
  await using dir = await tempDir("roster-task-");
  await using sleeper = spawnSleeper();
  const home = `${dir.path}/home`;
  const r = await run(
    Deno.execPath(),
    [
      "task",
      "--quiet",
      "--config",
      `${ROOT}deno.json`,
      "roster",
      "register",
      "--pid",
      String(sleeper.pid),
      "--home",
      home,
      "--json",
    ],
    { ...cleanEnv(), NO_COLOR: "1" },
    dir.path,
  );
  assertEquals(r.code, 0, r.stderr);
  assertEquals(JSON.parse(r.stdout).cwd, Deno.realPathSync(dir.path));
});

Deno.test("scripts/roster, linked onto PATH as the README says, runs from a deleted directory", async (t) => {
  await using dir = await tempDir("roster-link-");
  await using sleeper = spawnSleeper();
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const line = readme.match(/^ln -s "\$PWD\/(scripts\/roster)" ~\/\.local\/bin\/roster$/m);
  assert(line, 'README names `ln -s "$PWD/scripts/roster" ~/.local/bin/roster`');
  const bin = `${dir.path}/bin`;
  await Deno.mkdir(bin);
  await Deno.symlink(`${ROOT}${line[1]}`, `${bin}/roster`);
  const env = { ...cleanEnv(), NO_COLOR: "1", PATH: `${bin}:${Deno.env.get("PATH")}` };
  const home = `${dir.path}/home`;
  const project = `${dir.path}/project`;

  await t.step("from a live directory: that directory is recorded", async () => {
    await Deno.mkdir(project);
    const r = await run(
      "roster",
      ["register", "--pid", String(sleeper.pid), "--home", home, "--json"],
      env,
      project,
    );
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout).cwd, Deno.realPathSync(project));
  });

  await t.step("from a deleted one: exit 0, the directory unknown (not /)", async () => {
    // The shell moves into the directory, deletes it, and runs roster there, as a hook would.
    const script = `cd "$1" && rmdir "$1" && exec roster register --pid "$2" --home "$3" --json`;
    const r = await run("sh", ["-c", script, "sh", project, String(sleeper.pid), home], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout).cwd, "");
    // Only the shell's own complaint about its directory, nothing from Deno or roster.
    assertEquals(r.stderr.split("\n").filter((l) => l && !/getcwd/.test(l)), []);
  });
});
