/**
 * scripts/build.ts: its pure helpers (targets, baked permissions, SHA256SUMS), the bundle's
 * main.js compiled with every chunk passed with --include, and the script itself where the
 * compile base cannot be downloaded and where DENORT_BIN supplies one.
 */
import { assert, assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { run, tempDir } from "../helpers.ts";
import {
  BuildError,
  checkDenortBin,
  compileArgs,
  formatSha256Sums,
  isBaseDownloadFailure,
  osOf,
  outputName,
  parseOptions,
  PERMISSIONS,
  permissionsFor,
  resolveTargets,
  sha256Hex,
  TARGETS,
  V8_FLAGS,
} from "../../scripts/build.ts";

const ROOT = new URL("../../", import.meta.url);
const BUILD = new URL("scripts/build.ts", ROOT).href;
const LINUX = "x86_64-unknown-linux-gnu";
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

Deno.test("build helpers", async (t) => {
  await t.step("targets: host, all, a named one; anything else is refused", () => {
    assertEquals(resolveTargets("host", LINUX), [LINUX]);
    assertEquals(resolveTargets("all", LINUX), [...TARGETS]);
    assertEquals(TARGETS.length, 5);
    assertEquals(resolveTargets("aarch64-apple-darwin", LINUX), ["aarch64-apple-darwin"]);
    const unknown = assertThrows(() => resolveTargets("x86_64-linux", LINUX), BuildError);
    assertMatch(unknown.message, /unknown target "x86_64-linux".*aarch64-apple-darwin/);
    const host = assertThrows(() => resolveTargets("host", "x86_64-unknown-freebsd"), BuildError);
    assertMatch(host.message, /x86_64-unknown-freebsd\) is not a release target/);
  });

  await t.step("output names: roster-<target>, .exe on Windows only", () => {
    assertEquals(outputName(LINUX), `roster-${LINUX}`);
    assertEquals(outputName("aarch64-apple-darwin"), "roster-aarch64-apple-darwin");
    assertEquals(outputName("x86_64-pc-windows-msvc"), "roster-x86_64-pc-windows-msvc.exe");
  });

  await t.step("permissions: all on Linux, an explicit list elsewhere", () => {
    for (const target of TARGETS) {
      const perms = permissionsFor(target);
      assert(perms.includes("--no-prompt"), `${target} must never prompt`);
      if (target.includes("linux")) {
        assertEquals(perms, ["--allow-all", "--no-prompt"]);
        continue;
      }
      assert(!perms.includes("--allow-all"), `${target} must not get --allow-all`);
      for (const p of ["--allow-read", "--allow-write", "--allow-env", "--allow-ffi"]) {
        assert(perms.includes(p), `${target} lacks ${p}`);
      }
      assert(perms.some((p) => /^--allow-sys=(.*,)?hostname(,|$)/.test(p)), `${target}: hostname`);
      // Unrestricted sys access would undo the point of listing them.
      assert(!perms.includes("--allow-sys"), target);
      // exec runs the caller's command and --tmux runs tmux: any program (issue 25).
      assert(perms.includes("--allow-run"), `${target}: exec needs run access`);
    }
    assert(
      permissionsFor("aarch64-apple-darwin").includes("--allow-sys=hostname,osUptime,uid,umask"),
      "the store checks owners with Deno.uid(); list --discover needs the boot time",
    );
    // No Deno.uid() on Windows, so no sys access for it.
    assert(permissionsFor("x86_64-pc-windows-msvc").includes("--allow-sys=hostname,osUptime"));
    for (const target of TARGETS) {
      assertEquals(permissionsFor(target), [...PERMISSIONS[osOf(target)]]);
    }
  });

  await t.step(
    "compile arguments: no config, the target, its permissions, V8 flags, every chunk, main.js",
    () => {
      const chunks = ["chunk-A.js", "main.js", "check-B.js"];
      const args = compileArgs("x86_64-apple-darwin", "/o/roster-x86_64-apple-darwin", chunks);
      assertEquals(args.slice(0, 6), [
        "compile",
        "--no-config",
        "--target",
        "x86_64-apple-darwin",
        "--output",
        "/o/roster-x86_64-apple-darwin",
      ]);
      const flags = [...permissionsFor("x86_64-apple-darwin"), ...V8_FLAGS];
      assertEquals(args.slice(6, 6 + flags.length), flags);
      // The chunks import each other through variables (scripts/bundle.ts deferChunkImports),
      // which deno compile does not follow: each is included by name, the entry last.
      assertEquals(args.slice(6 + flags.length), [
        "--include",
        "chunk-A.js",
        "--include",
        "check-B.js",
        "main.js",
      ]);
    },
  );

  await t.step("SHA256SUMS: sha256sum's format, sorted by name", () => {
    assertEquals(
      formatSha256Sums([{ name: "roster-b", sha256: HASH_B }, {
        name: "roster-a",
        sha256: HASH_A,
      }]),
      `${HASH_A}  roster-a\n${HASH_B}  roster-b\n`,
    );
    assertEquals(formatSha256Sums([]), "");
    assertThrows(() => formatSha256Sums([{ name: "x", sha256: "ABC" }]), BuildError);
    assertThrows(() => formatSha256Sums([{ name: "a b", sha256: HASH_A }]), BuildError);
  });

  await t.step("sha256Hex matches the FIPS 180-2 test vector", async () => {
    assertEquals(
      await sha256Hex(new TextEncoder().encode("abc")),
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  await t.step("a failed base download is told apart from other failures", () => {
    const real = "error: Writing deno compile executable to temporary file 'x'\n\nCaused by:\n" +
      "    0: Setting up base binary.\n    1: error sending request for url " +
      "(https://dl.deno.land/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip)";
    assert(isBaseDownloadFailure(real));
    assert(!isBaseDownloadFailure("error: TS2322 [ERROR]: Type 'string' is not assignable"));
  });

  await t.step("options: defaults, --flag value, --flag=value; mistakes are refused", () => {
    const d = parseOptions([]);
    assertEquals([d.target, d.verbose, d.help], ["host", false, false]);
    assertMatch(d.out, /[\\/]dist$/);
    const o = parseOptions(["--target=all", "--out", "/tmp/o", "--verbose"]);
    assertEquals([o.target, o.out, o.verbose], ["all", "/tmp/o", true]);
    assertThrows(() => parseOptions(["--target"]), BuildError);
    assertThrows(() => parseOptions(["--frobnicate"]), BuildError);
  });

  await t.step("DENORT_BIN serves exactly one target, and must exist", async () => {
    await using dir = await tempDir();
    const bin = `${dir.path}/denort`;
    Deno.writeTextFileSync(bin, "");
    assertEquals(checkDenortBin([...TARGETS], undefined), undefined);
    assertEquals(checkDenortBin([LINUX], bin), bin);
    const many = assertThrows(() => checkDenortBin([...TARGETS], bin), BuildError);
    assertMatch(many.message, /one target/);
    const missing = assertThrows(() => checkDenortBin([LINUX], `${bin}-missing`), BuildError);
    assertMatch(missing.message, /is not a file/);
  });
});

Deno.test("every way of running roster carries the binaries' V8 flags", async () => {
  // The benchmark measures the sources with V8_FLAGS; a launcher without them would run a
  // roster with another memory bound (--max-semi-space-size) than the one measured and shipped.
  assertEquals(V8_FLAGS.length, 1);
  const [flag] = V8_FLAGS;
  assertMatch(
    flag,
    /^--v8-flags=--no-lazy,--max-semi-space-size=\d+,--baseline-batch-compilation-threshold=\d+$/,
  );
  for (const file of ["deno.json", "scripts/roster", "scripts/install_from_source.sh"]) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    const found = text.match(/--v8-flags=\S+/g) ?? [];
    assert(found.length > 0, `${file} runs roster without --v8-flags`);
    for (const f of found) assertEquals(f.replace(/["\\]+$/, ""), flag, file);
  }
});

const TASK_PERMS = ["--allow-read", "--allow-write", "--allow-env", "--allow-run", "--allow-net"];

async function runBuild(args: string[], env: Record<string, string>) {
  const base = Deno.env.toObject();
  delete base.DENORT_BIN;
  return await run(Deno.execPath(), ["run", ...TASK_PERMS, BUILD, ...args], {
    ...base,
    NO_COLOR: "1",
    ...env,
  });
}

async function baseReachable(): Promise<boolean> {
  const url = `https://dl.deno.land/release/v${Deno.version.deno}/denort-${Deno.build.target}.zip`;
  try {
    const res = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(5000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

Deno.test("build without a reachable compile base: one line naming DENORT_BIN", async () => {
  if (await baseReachable()) {
    console.log("skipped: the network reaches the deno compile base, so the build would succeed");
    return;
  }
  await using out = await tempDir();
  // A fresh DENO_DIR, so a base cached by an earlier build cannot make this one succeed.
  await using denoDir = await tempDir();
  const r = await runBuild(["--out", out.path], { DENO_DIR: denoDir.path });
  assert(r.code !== 0, `expected failure, got exit 0: ${r.stdout}`);
  const lines = r.stderr.trimEnd().split("\n");
  assertEquals(lines.length, 1, `expected one line on stderr, got:\n${r.stderr}`);
  assertMatch(lines[0], /^build: cannot download the deno compile base for .*DENORT_BIN/);
  assertEquals([...Deno.readDirSync(out.path)].map((e) => e.name), [], "nothing left behind");
});

Deno.test({
  name: "build with DENORT_BIN: the binary, a SHA256SUMS that vouches for it, the man page",
  // Deno's own executable serves as a base for the host target only on Linux (ELF, unsigned).
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using out = await tempDir();
    const r = await runBuild(["--out", out.path], { DENORT_BIN: Deno.execPath() });
    assertEquals(r.code, 0, r.stderr);
    const name = outputName(resolveTargets("host", Deno.build.target)[0]);
    const bytes = await Deno.readFile(`${out.path}/${name}`);
    assertEquals(
      await Deno.readTextFile(`${out.path}/SHA256SUMS`),
      `${await sha256Hex(bytes)}  ${name}\n`,
    );
    // The bundle was built in a temp dir of its own: nothing of it is left in the output.
    assertEquals(
      [...Deno.readDirSync(out.path)].map((e) => e.name).sort(),
      [name, "SHA256SUMS", "roster.1"].sort(),
    );
    assertMatch(await Deno.readTextFile(`${out.path}/roster.1`), /^\.TH ROSTER 1 /);
  },
});
