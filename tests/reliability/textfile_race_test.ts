/**
 * `metrics --textfile` in a shared directory whose other writers may swap a link in at roster's
 * temp name (issue 24, item 2): a racing process replaces every temp file it sees with a link to
 * the writer's private file, as fast as it can, while `metrics --textfile` runs again and again.
 * roster creates its temp file O_EXCL with its final mode and sets nothing by name afterwards,
 * so the private file keeps its mode (before: chmod by path made it 0644 on the first call).
 */
import { assert, assertEquals } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";

const RACER = `
const [dir, target] = Deno.args;
for (;;) {
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.endsWith(".tmp") || e.isSymlink) continue;
    try {
      Deno.removeSync(dir + "/" + e.name);
      Deno.symlinkSync(target, dir + "/" + e.name);
    } catch { /* the writer renamed it first */ }
  }
}
`;

Deno.test({
  name: "metrics --textfile never changes a file through a link swapped in at its temp name",
  ignore: Deno.build.os === "windows",
}, async () => {
  await using home = await tempDir();
  await using shared = await tempDir();
  // The docs' old shared directory: every writer may replace every name (no sticky bit).
  Deno.chmodSync(shared.path, 0o777);
  const secret = `${home.path}/secret`;
  Deno.writeTextFileSync(secret, "private\n");
  Deno.chmodSync(secret, 0o600);
  const racer = new Deno.Command(Deno.execPath(), {
    args: ["eval", RACER, shared.path, secret],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const textfile = `${shared.path}/roster.prom`;
    let swapped = 0;
    for (let i = 0; i < 10; i++) {
      const r = await roster(["metrics", "--home", home.path, "--textfile", textfile]);
      assert(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
      assertEquals((Deno.statSync(secret).mode! & 0o7777).toString(8), "600", `call ${i + 1}`);
      assertEquals(Deno.readTextFileSync(secret), "private\n");
      try {
        if (Deno.lstatSync(textfile).isSymlink) swapped++;
      } catch { /* not written this time */ }
    }
    console.log(`renames that published the racer's link: ${swapped} of 10`);
  } finally {
    racer.kill("SIGKILL");
    await racer.status;
  }
});

Deno.test({
  name: "metrics --textfile is created with its mode whatever the umask",
  ignore: Deno.build.os === "windows",
}, async () => {
  await using home = await tempDir();
  await using dir = await tempDir();
  const textfile = `${dir.path}/roster.prom`;
  const r = await new Deno.Command("sh", {
    args: ["-c", 'umask 077 && exec "$@"', "sh", Deno.execPath(), "run", "-A", "main.ts", "metrics"]
      .concat(["--home", home.path, "--textfile", textfile]),
    cwd: new URL("../../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(r.code, 0, new TextDecoder().decode(r.stderr));
  assertEquals((Deno.statSync(textfile).mode! & 0o7777).toString(8), "644");
});

/**
 * Under umask 077 the 0644 textfile's first temp file is made, found narrowed, removed and
 * made again with the umask cleared: another user watching the shared directory who takes the
 * removed name meanwhile (planted here at the removal itself) must not make the write fail.
 */
const TAKER = `
import { writeAtomic } from "./src/fs/write.ts";
const [target] = Deno.args;
const remove = Deno.removeSync;
let taken = "";
Deno.removeSync = (path, options) => {
  remove(path, options);
  if (taken === "" && String(path).endsWith(".tmp")) {
    taken = String(path);
    Deno.writeTextFileSync(taken, "theirs", { createNew: true });
  }
};
writeAtomic(target, "ours\\n", false, undefined, 0o644);
console.log(taken);
`;

Deno.test({
  name: "a temp name taken while the umask is cleared does not fail the write",
  ignore: Deno.build.os === "windows",
}, async () => {
  await using dir = await tempDir();
  const target = `${dir.path}/roster.prom`;
  const r = await new Deno.Command("sh", {
    args: ["-c", 'umask 077 && exec "$@"', "sh", Deno.execPath(), "eval", TAKER, target],
    cwd: new URL("../../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(r.code, 0, new TextDecoder().decode(r.stderr));
  const taken = new TextDecoder().decode(r.stdout).trim();
  assert(taken.startsWith(`${target}.`), `the first temp name was removed: ${taken}`);
  assertEquals(Deno.readTextFileSync(taken), "theirs");
  assertEquals(Deno.readTextFileSync(target), "ours\n");
  assertEquals((Deno.statSync(target).mode! & 0o7777).toString(8), "644");
});
