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

  await t.step("the README's install lines work with an empty HOME and only npm", async (t) => {
    // Nothing in HOME, no deno on PATH, no cache named: the pinned Deno comes from npm into
    // the empty HOME's cache. Only npm's own download cache is the user's (it makes this fast).
    const clone = `${dir.path}/clone`;
    const readme = await Deno.readTextFile(`${clone}/README.md`);
    const lines = [...readme.matchAll(/^(scripts\/install_from_source\.sh(?: --bundle)?)\s/gm)]
      .map((m) => m[1]);
    assertEquals(lines, [
      "scripts/install_from_source.sh",
      "scripts/install_from_source.sh --bundle",
    ]);
    for (const line of lines) {
      await t.step(line, async () => {
        const home = await Deno.makeTempDir({ dir: dir.path, prefix: "home-" });
        const bare: Record<string, string> = { ...env, HOME: home };
        delete bare.ROSTER_DENO_CACHE;
        const r = await run("sh", ["-c", line], bare, clone);
        assertEquals(r.code, 0, r.stderr);
        const bin = `${home}/.local/bin`;
        assertMatch(r.stdout, new RegExp(`^Installed ${bin}/roster$`, "m"));
        // Not on PATH: the hint says how.
        assertMatch(r.stdout, new RegExp(`^  export PATH="${bin}:\\$PATH"$`, "m"));
        const v = await run(`${bin}/roster`, ["--version"], bare);
        assertEquals(v.code, 0, v.stderr);
        assertMatch(v.stdout, /^roster \d+\.\d+\.\d+/);
        // It runs the Deno fetched into the empty HOME, by its path, not a `deno` from PATH.
        const fetched =
          (await run(`${clone}/scripts/deno`, ["eval", "console.log(Deno.execPath())"], bare))
            .stdout.trim();
        assert(fetched.startsWith(`${home}/.cache/roster/`), fetched);
        if (line.endsWith("--bundle")) {
          assertMatch(
            Deno.readTextFileSync(`${bin}/roster`),
            new RegExp(`^exec '${fetched}' run `, "m"),
          );
        } else {
          assertEquals(
            Deno.realPathSync(`${bin}/roster`),
            `${Deno.realPathSync(clone)}/scripts/roster`,
          );
        }
        // Again, with the directory on PATH: no hint.
        const again = await run("sh", ["-c", line], { ...bare, PATH: `${bin}:${path}` }, clone);
        assertEquals(again.code, 0, again.stderr);
        assert(!again.stdout.includes("export PATH"), again.stdout);
      });
    }
  });
});

Deno.test("scripts/roster starts Deno once a call: a deno on PATH is asked its version once", async () => {
  await using dir = await tempDir("roster-once-");
  const log = `${dir.path}/starts`;
  const wrapper = (note: string) =>
    `#!/bin/sh\n# ${note}\necho "$1" >>'${log}'\nexec '${Deno.execPath()}' "$@"\n`;
  const bin = await pathWithout(`${dir.path}/bin`, ["deno"], { deno: wrapper("first") });
  const env = {
    ...cleanEnv(),
    NO_COLOR: "1",
    PATH: bin,
    ROSTER_DENO_CACHE: `${dir.path}/cache`,
  };
  const calls = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await run(`${ROOT}scripts/roster`, ["--version"], env);
      assertEquals(r.code, 0, r.stderr);
    }
    const starts = Deno.readTextFileSync(log).trim().split("\n");
    Deno.removeSync(log);
    return starts;
  };
  assertEquals(await calls(3), ["--version", "run", "run", "run"]);
  // Another deno in its place (another size) is asked again, once.
  Deno.writeTextFileSync(`${bin}/deno`, wrapper("second, longer"));
  assertEquals(await calls(2), ["--version", "run", "run"]);
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

Deno.test("scripts/roster, installed by scripts/install_from_source.sh, runs from a deleted directory", async (t) => {
  await using dir = await tempDir("roster-link-");
  await using sleeper = spawnSleeper();
  const bin = `${dir.path}/bin`;
  const env = { ...cleanEnv(), NO_COLOR: "1", PATH: `${bin}:${Deno.env.get("PATH")}` };
  const installed = await run(`${ROOT}scripts/install_from_source.sh`, [], {
    ...env,
    ROSTER_INSTALL: bin,
  });
  assertEquals(installed.code, 0, installed.stderr);
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
