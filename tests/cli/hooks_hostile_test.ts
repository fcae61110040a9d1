/**
 * `roster hooks` against a hostile checkout (issue 24 items 3, 4, 8): no write follows a link
 * roster did not make (a backup name, the settings file, a directory, names planted in a loop),
 * a FIFO never hangs install, uninstall, --dry-run or doctor, and nesting too deep for any
 * settings file is one clear error.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";

const VICTIM = "echo the user's shell startup\n";

async function checkout(dir: string) {
  const project = `${dir}/repo`;
  const victim = `${dir}/bashrc`;
  await Deno.mkdir(`${project}/.claude`, { recursive: true });
  await Deno.writeTextFile(victim, VICTIM);
  await Deno.chmod(victim, 0o644);
  return { project, victim, env: { HOME: `${dir}/home` } };
}

Deno.test("hooks --project never writes through a link the checkout carries", async (t) => {
  await t.step("a backup name linked to ~/.bashrc: skipped, the victim untouched", async () => {
    await using dir = await tempDir();
    const { project, victim, env } = await checkout(dir.path);
    const settings = `${project}/.claude/settings.json`;
    await Deno.writeTextFile(settings, '{"model": "opus"}\n');
    await Deno.symlink(victim, `${settings}.roster-backup`);
    const i = await roster(["hooks", "install", "--project", "claude"], { env, cwd: project });
    assertEquals(i.code, 0, i.stderr);
    assertMatch(i.stdout, /backup: .*\.roster-backup\.2\)/);
    assertEquals(await Deno.readTextFile(victim), VICTIM);
    const u = await roster(["hooks", "uninstall", "--project", "claude"], { env, cwd: project });
    assertEquals(u.code, 0, u.stderr);
    assertEquals(await Deno.readTextFile(settings), '{"model": "opus"}\n');
    assertEquals(await Deno.readTextFile(victim), VICTIM);
    assertEquals((await Deno.lstat(`${settings}.roster-backup`)).isSymlink, true);
  });

  await t.step("uninstall names no backup it ignored (a link planted after install)", async () => {
    // Retest of issue 24: uninstall said `backup: …roster-backup` of a link it rightly left.
    await using dir = await tempDir();
    const { project, victim, env } = await checkout(dir.path);
    const settings = `${project}/.claude/settings.json`;
    const i = await roster(["hooks", "install", "--project", "claude"], { env, cwd: project });
    assertEquals(i.code, 0, i.stderr);
    await Deno.symlink(victim, `${settings}.roster-backup`);
    const u = await roster(["hooks", "uninstall", "--project", "claude", "--json"], {
      env,
      cwd: project,
    });
    assertEquals(u.code, 0, u.stderr);
    assertEquals(JSON.parse(u.stdout).backup, null);
    assertEquals(await Deno.readTextFile(victim), VICTIM);
    assertEquals((await Deno.lstat(`${settings}.roster-backup`)).isSymlink, true);
  });

  await t.step("uninstall names the backup it kept, not a link beside it", async () => {
    await using dir = await tempDir();
    const { project, victim, env } = await checkout(dir.path);
    const settings = `${project}/.claude/settings.json`;
    await Deno.writeTextFile(settings, '{"model": "opus"}\n');
    const i = await roster(["hooks", "install", "--project", "claude"], { env, cwd: project });
    assertEquals(i.code, 0, i.stderr);
    // The user edits the file after install (so no backup is its original), and a link takes
    // the next backup name.
    const edited = (await Deno.readTextFile(settings)).replace('"opus"', '"sonnet"');
    await Deno.writeTextFile(settings, edited);
    await Deno.symlink(victim, `${settings}.roster-backup.2`);
    const u = await roster(["hooks", "uninstall", "--project", "claude"], { env, cwd: project });
    assertEquals(u.code, 0, u.stderr);
    assertMatch(u.stdout, /\(backup: .*\.roster-backup\)$/m);
    assertEquals(await Deno.readTextFile(victim), VICTIM);
  });

  await t.step("the settings file linked elsewhere: refused, nothing written", async () => {
    await using dir = await tempDir();
    const { project, victim, env } = await checkout(dir.path);
    await Deno.symlink(victim, `${project}/.claude/settings.json`);
    for (const action of ["install", "uninstall"]) {
      const r = await roster(["hooks", action, "--project", "claude"], { env, cwd: project });
      assertEquals(r.code, 1, r.stdout);
      assertMatch(r.stderr, /^roster: Not writing through a symbolic link in a project/);
    }
    assertEquals(await Deno.readTextFile(victim), VICTIM);
    assertEquals((await Deno.stat(victim)).mode! & 0o777, 0o644);
  });

  await t.step("the settings directory linked elsewhere: refused", async () => {
    await using dir = await tempDir();
    const { project, env } = await checkout(dir.path);
    await Deno.mkdir(`${dir.path}/elsewhere`);
    await Deno.symlink(`${dir.path}/elsewhere`, `${project}/.codex`);
    const r = await roster(["hooks", "install", "--project", "codex"], { env, cwd: project });
    assertEquals(r.code, 1);
    assertMatch(r.stderr, /symbolic link in a project.*\.codex$/m);
    assertEquals([...Deno.readDirSync(`${dir.path}/elsewhere`)], []);
  });

  await t.step(
    "in the user's own home, a link of theirs to a file of theirs is followed",
    async () => {
      await using dir = await tempDir();
      const home = `${dir.path}/home`;
      await Deno.mkdir(`${home}/.claude`, { recursive: true });
      await Deno.mkdir(`${dir.path}/dotfiles`);
      await Deno.writeTextFile(`${dir.path}/dotfiles/claude.json`, "{}\n");
      await Deno.symlink(`${dir.path}/dotfiles/claude.json`, `${home}/.claude/settings.json`);
      const r = await roster(["hooks", "install", "claude"], { env: { HOME: home } });
      assertEquals(r.code, 0, r.stderr);
      assertEquals((await Deno.lstat(`${home}/.claude/settings.json`)).isSymlink, true);
      assertMatch(await Deno.readTextFile(`${dir.path}/dotfiles/claude.json`), /roster register/);
    },
  );
});

Deno.test("links planted in a loop at backup and temp names are never written through", async () => {
  await using dir = await tempDir();
  const { project, victim, env } = await checkout(dir.path);
  const settings = `${project}/.claude/settings.json`;
  await Deno.writeTextFile(settings, '{"a": 1}\n');
  // A planter racing roster: links at every backup name and at temp names of the next pids.
  const planter = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const [s, v] = Deno.args.slice(0, 2);
      for (;;) {
        for (const n of ["", ".2", ".3"]) { try { Deno.symlinkSync(v, s + ".roster-backup" + n); } catch {} }
        for (let p = 0; p < 50; p++) {
          const name = s + "." + (Deno.pid + p) + ".1.tmp";
          try { Deno.symlinkSync(v, name); } catch {}
        }
        await new Promise((ok) => setTimeout(ok, 1));
      }`,
      settings,
      victim,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (let round = 0; round < 6; round++) {
      for (const action of ["install", "uninstall"]) {
        const r = await roster(["hooks", action, "--project", "claude"], { env, cwd: project });
        // Refusing is fine; writing through a link never is.
        assertMatch(String(r.code), /^[01]$/, r.stderr);
        assertEquals(await Deno.readTextFile(victim), VICTIM);
        assertEquals((await Deno.stat(victim)).mode! & 0o777, 0o644);
      }
    }
  } finally {
    planter.kill("SIGKILL");
    await planter.status;
  }
  assertEquals((await Deno.lstat(settings)).isFile, true);
});

Deno.test("a FIFO settings file never hangs hooks or doctor", async (t) => {
  await using dir = await tempDir();
  const { project, env } = await checkout(dir.path);
  const fifo = `${project}/.claude/settings.json`;
  const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assertEquals(mk.code, 0);
  // The bound catches a hang only: each of these returns at once.
  const timeoutMs = 60_000;
  for (const args of [["install"], ["uninstall"], ["install", "--dry-run"]]) {
    await t.step(`hooks ${args.join(" ")}`, async () => {
      const r = await roster(["hooks", ...args, "--project", "claude"], {
        env,
        cwd: project,
        timeoutMs,
      });
      assertEquals(r.code, 1, r.stderr);
      assertMatch(r.stderr, /^roster: Cannot read the settings file: not a regular file: /);
    });
  }
  await t.step("doctor in the project directory", async () => {
    const r = await roster(["doctor", "--json", "--home", `${dir.path}/store`], {
      env,
      cwd: project,
      timeoutMs,
    });
    const claude = JSON.parse(r.stdout).hooks.find((h: { path: string }) => h.path === fifo);
    assertEquals(claude.state, "invalid");
    assertMatch(claude.detail, /not a regular file/);
  });
});

Deno.test("settings nested deeper than any real file: one clear error", async () => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  await Deno.mkdir(`${home}/.claude`, { recursive: true });
  const deep = `{"a": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
  await Deno.writeTextFile(`${home}/.claude/settings.json`, deep);
  for (const args of [["hooks", "install", "claude"], ["hooks", "uninstall", "claude"]]) {
    const r = await roster(args, { env: { HOME: home } });
    assertEquals(r.code, 1);
    assertMatch(
      r.stderr,
      /^roster: Cannot merge into the settings file: not valid JSON \(nesting deeper than 100 levels at line 1, column \d+\): .*settings\.json\n$/,
    );
  }
  assertEquals(await Deno.readTextFile(`${home}/.claude/settings.json`), deep);
});

Deno.test("a user's own hook that starts with a roster call is theirs: kept, backed up", async () => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const settings = `${home}/.claude/settings.json`;
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  const env = { HOME: home };
  // Another command after a `;`, a line break or a tab: each is the user's own.
  for (
    const own of [
      'roster activity idle --quiet; notify-send "Claude is done"',
      "roster activity idle --quiet\nsay done",
      "roster activity idle --quiet\ttput bel",
    ]
  ) {
    const original = JSON.stringify({
      hooks: { Stop: [{ hooks: [{ type: "command", command: own }] }] },
    }) + "\n";
    Deno.writeTextFileSync(settings, original);
    const i = await roster(["hooks", "install", "claude"], { env });
    assertEquals(i.code, 0, i.stderr);
    assert(Deno.readTextFileSync(settings).includes(JSON.stringify(own)), "the user's hook stays");
    assertEquals(Deno.readTextFileSync(`${settings}.roster-backup`), original);
    const u = await roster(["hooks", "uninstall", "claude"], { env });
    assertEquals(u.code, 0, u.stderr);
    assertEquals(Deno.readTextFileSync(settings), original, "the original, byte for byte");
  }
});

Deno.test("uninstall through a link to the user's dotfiles removes nothing outside", async () => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const dotfiles = `${dir.path}/dotfiles/stow/claude`;
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  Deno.mkdirSync(dotfiles, { recursive: true });
  const env = { HOME: home };
  const shown = await roster(["hooks", "show", "claude"], { env });
  Deno.writeTextFileSync(`${dotfiles}/settings.json`, shown.stdout);
  Deno.symlinkSync(`${dotfiles}/settings.json`, `${home}/.claude/settings.json`);
  const u = await roster(["hooks", "uninstall", "claude"], { env });
  assertEquals(u.code, 0, u.stderr);
  assert(Deno.lstatSync(`${home}/.claude/settings.json`).isSymlink, "the link stays");
  const left = Deno.readTextFileSync(`${dotfiles}/settings.json`);
  assert(!left.includes("roster"), left);
  const again = await roster(["hooks", "install", "claude"], { env });
  assertEquals(again.code, 0, again.stderr);
});

Deno.test("a settings file that starts with a byte-order mark comes back byte for byte", async () => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const settings = `${home}/.claude/settings.json`;
  Deno.mkdirSync(`${home}/.claude`, { recursive: true });
  const original = new Uint8Array([
    0xef,
    0xbb,
    0xbf,
    ...new TextEncoder().encode('{"model":"opus"}\n'),
  ]);
  Deno.writeFileSync(settings, original);
  const env = { HOME: home };
  const i = await roster(["hooks", "install", "claude"], { env });
  assertEquals(i.code, 0, i.stderr);
  assertEquals(Deno.readFileSync(`${settings}.roster-backup`), original);
  const u = await roster(["hooks", "uninstall", "claude"], { env });
  assertEquals(u.code, 0, u.stderr);
  assertEquals(Deno.readFileSync(settings), original);
});

Deno.test("uninstall after a later edit keeps the user's own empty lists, comments and keys", async (t) => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const env = { HOME: home };
  const roundTrip = async (harness: string, file: string, original: string, edit: string) => {
    Deno.mkdirSync(`${home}/${file.slice(0, file.lastIndexOf("/"))}`, { recursive: true });
    const path = `${home}/${file}`;
    Deno.writeTextFileSync(path, original);
    assertEquals((await roster(["hooks", "install", harness, "-q"], { env })).code, 0);
    // A later edit: the file is no longer the install of the backup, so roster takes out only
    // its own text.
    Deno.writeTextFileSync(path, Deno.readTextFileSync(path).replace(/^\{/, `{${edit},`));
    const u = await roster(["hooks", "uninstall", harness, "-q"], { env });
    assertEquals(u.code, 0, u.stderr);
    return Deno.readTextFileSync(path);
  };
  await t.step("an empty event list with a comment in it, and the hooks object", async () => {
    const original =
      '{\n  // my note\n  "hooks": {\n    "BeforeTool": [ /* keep this */ ]\n  }\n}\n';
    const left = await roundTrip("gemini", ".gemini/settings.json", original, '"theme":"Dracula"');
    // Every key and comment of theirs; only the blanks inside the emptied list may differ.
    assertMatch(
      left,
      /^\{"theme":"Dracula",\n {2}\/\/ my note\n {2}"hooks": \{\n {4}"BeforeTool": \[\s*\/\* keep this \*\/ \]\n {2}\}\n\}\n$/,
    );
  });
  await t.step("the last of two hooks keys, which the harness reads, stays", async () => {
    const original = '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo off"}]}]},' +
      '"hooks":{}}\n';
    const left = await roundTrip("claude", ".claude/settings.json", original, '"model":"opus"');
    assertEquals(JSON.parse(left).hooks, {});
  });
});

Deno.test("uninstall keeps a settings directory that is a link to the user's dotfiles", async () => {
  await using dir = await tempDir();
  const home = `${dir.path}/home`;
  const dotfiles = `${dir.path}/dotfiles/claude`;
  Deno.mkdirSync(home, { recursive: true });
  Deno.mkdirSync(dotfiles, { recursive: true });
  Deno.writeTextFileSync(`${dotfiles}/CLAUDE.md`, "# mine\n");
  Deno.symlinkSync(dotfiles, `${home}/.claude`);
  const env = { HOME: home };
  assertEquals((await roster(["hooks", "install", "claude"], { env })).code, 0);
  const u = await roster(["hooks", "uninstall", "claude"], { env });
  assertEquals(u.code, 0, u.stderr);
  assert(Deno.lstatSync(`${home}/.claude`).isSymlink, "the link stays");
  assertEquals(Deno.readTextFileSync(`${dotfiles}/CLAUDE.md`), "# mine\n");
});
