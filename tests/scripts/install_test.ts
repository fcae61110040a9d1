/**
 * scripts/install.sh against a release served from a temp directory on 127.0.0.1: a good
 * checksum installs, a bad one installs nothing and leaves nothing behind, an unknown platform
 * is named. `uname` is faked through a PATH shim, so every OS runs the Linux x86_64 case.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { type CliResult, ROOT, run, tempDir } from "../helpers.ts";
import { sha256Hex } from "../../scripts/build.ts";

const INSTALL_SH = `${ROOT}scripts/install.sh`;
const ASSET = "roster-x86_64-unknown-linux-gnu";
const STAND_IN = "#!/bin/sh\necho 'roster 0.0.0-test'\n";

/** Serves `dir` read-only on loopback; 404 for anything that is not a plain file in it. */
function serve(dir: string): { url: string } & AsyncDisposable {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const name = decodeURIComponent(new URL(req.url).pathname.slice(1));
    if (!/^[\w.-]+$/.test(name)) return new Response("not found", { status: 404 });
    try {
      return new Response(await Deno.readFile(`${dir}/${name}`));
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** A directory whose `uname` reports FAKE_OS/FAKE_ARCH, and which shadows `hidden` commands. */
async function shimDir(dir: string, hidden: string[] = []): Promise<string> {
  await Deno.writeTextFile(
    `${dir}/uname`,
    '#!/bin/sh\ncase "$1" in -m) echo "$FAKE_ARCH" ;; *) echo "$FAKE_OS" ;; esac\n',
  );
  await Deno.chmod(`${dir}/uname`, 0o755);
  if (hidden.length === 0) return dir;
  // Hiding a command means a PATH without it: link in everything else from the real PATH.
  for (const p of (Deno.env.get("PATH") ?? "").split(":")) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(p)];
    } catch {
      continue;
    }
    for (const e of entries) {
      if (hidden.includes(e.name) || e.name === "uname") continue;
      await Deno.symlink(`${p}/${e.name}`, `${dir}/${e.name}`).catch(() => {});
    }
  }
  return dir;
}

interface Fixture extends AsyncDisposable {
  /** Served as the release directory. */
  release: string;
  install: string;
  tmp: string;
  run(opts?: { os?: string; arch?: string; hidden?: string[]; path?: string }): Promise<CliResult>;
}

async function fixture(sumsFor: (realHash: string) => string): Promise<Fixture> {
  const root = await tempDir("roster-install-test-");
  const release = `${root.path}/release`;
  const install = `${root.path}/bin`;
  const tmp = `${root.path}/tmp`;
  for (const d of [release, install, tmp]) await Deno.mkdir(d);
  await Deno.writeTextFile(`${release}/${ASSET}`, STAND_IN);
  await Deno.writeTextFile(
    `${release}/SHA256SUMS`,
    sumsFor(await sha256Hex(new TextEncoder().encode(STAND_IN))),
  );
  const server = serve(release);
  return {
    release,
    install,
    tmp,
    async run({ os = "Linux", arch = "x86_64", hidden = [], path } = {}) {
      const shim = await shimDir(await Deno.makeTempDir({ dir: root.path }), hidden);
      const env: Record<string, string> = {
        HOME: root.path,
        PATH: hidden.length ? shim : `${shim}:${path ?? Deno.env.get("PATH") ?? ""}`,
        TMPDIR: tmp,
        ROSTER_BASE_URL: server.url,
        ROSTER_INSTALL: install,
        FAKE_OS: os,
        FAKE_ARCH: arch,
        // Loopback only: no proxy may sit between the installer and the test server.
        no_proxy: "127.0.0.1",
        NO_PROXY: "127.0.0.1",
      };
      return await run("sh", [INSTALL_SH], env);
    },
    async [Symbol.asyncDispose]() {
      await server[Symbol.asyncDispose]();
      await root[Symbol.asyncDispose]();
    },
  };
}

const names = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

Deno.test({
  name: "install.sh",
  // The installer is POSIX sh; Windows users take the .exe from the release page.
  ignore: Deno.build.os === "windows",
  async fn(t) {
    await t.step("a good checksum installs an executable roster", async () => {
      await using f = await fixture((h) => `${"0".repeat(64)}  roster-other\n${h}  ${ASSET}\n`);
      const r = await f.run();
      assertEquals(r.code, 0, r.stderr);
      const dest = `${f.install}/roster`;
      assert(((await Deno.stat(dest)).mode ?? 0o755) & 0o100, "roster must be executable");
      assertEquals(names(f.install), ["roster"], "no staging file left beside it");
      assertEquals(names(f.tmp), [], "the download dir is gone");
      const run = await new Deno.Command(dest, { stdout: "piped" }).output();
      assertEquals(new TextDecoder().decode(run.stdout), "roster 0.0.0-test\n");
      assertMatch(r.stdout, /Installed roster 0\.0\.0-test to .*\/bin\/roster/);
      assertMatch(r.stdout, /is not on your PATH[\s\S]*export PATH=/);
    });

    await t.step("an install dir already on PATH gets no PATH advice", async () => {
      await using f = await fixture((h) => `${h}  ${ASSET}\n`);
      const r = await f.run({ path: `${f.install}:${Deno.env.get("PATH")}` });
      assertEquals(r.code, 0, r.stderr);
      assert(!r.stdout.includes("PATH"), r.stdout);
    });

    await t.step("a bad checksum refuses, and leaves nothing behind", async () => {
      await using f = await fixture(() => `${"f".repeat(64)}  ${ASSET}\n`);
      const r = await f.run();
      assert(r.code !== 0, "must fail");
      assertMatch(r.stderr, /checksum mismatch for roster-x86_64-unknown-linux-gnu/);
      assertEquals(names(f.install), [], "nothing installed");
      assertEquals(names(f.tmp), [], "nothing left in the temp dir");
    });

    await t.step("a SHA256SUMS without the binary's entry refuses", async () => {
      await using f = await fixture((h) => `${h}  roster-other\n`);
      const r = await f.run();
      assert(r.code !== 0, "must fail");
      assertMatch(r.stderr, /SHA256SUMS lists no checksum for roster-x86_64-unknown-linux-gnu/);
      assertEquals([names(f.install), names(f.tmp)], [[], []]);
    });

    await t.step("a binary missing from the release fails the download", async () => {
      await using f = await fixture((h) => `${h}  ${ASSET}\n`);
      const r = await f.run({ arch: "arm64" });
      assert(r.code !== 0, "must fail");
      assertMatch(r.stderr, /download failed: .*\/roster-aarch64-unknown-linux-gnu/);
      assertEquals([names(f.install), names(f.tmp)], [[], []]);
    });

    await t.step("an unknown platform is named, exit 1", async () => {
      await using f = await fixture((h) => `${h}  ${ASSET}\n`);
      for (const [os, arch] of [["Plan9", "x86_64"], ["Linux", "riscv64"]]) {
        const r = await f.run({ os, arch });
        assertEquals(r.code, 1, `${os} ${arch}`);
        assertMatch(r.stderr, new RegExp(`unsupported platform: ${os} ${arch}`));
        assertEquals([names(f.install), names(f.tmp)], [[], []]);
      }
    });

    await t.step("without curl it downloads with wget; without sha256sum, shasum", async (t) => {
      for (const hidden of [["curl"], ["sha256sum"]]) {
        const needed = hidden[0] === "curl" ? "wget" : "shasum";
        const has = (Deno.env.get("PATH") ?? "").split(":").some((p) => {
          try {
            return Deno.statSync(`${p}/${needed}`).isFile;
          } catch {
            return false;
          }
        });
        if (!has) {
          console.log(`skipped: no ${needed} on this machine to stand in for ${hidden[0]}`);
          continue;
        }
        await t.step(`no ${hidden[0]}`, async () => {
          await using f = await fixture((h) => `${h}  ${ASSET}\n`);
          const r = await f.run({ hidden });
          assertEquals(r.code, 0, r.stderr);
          assertEquals(names(f.install), ["roster"]);
        });
      }
    });
  },
});
