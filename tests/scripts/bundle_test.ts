/**
 * scripts/bundle.ts: the code-split bundle builds, runs every hook command as the sources do
 * (same exit codes, same stdout, on the same home), loads only the chunks of the command it
 * runs, and refuses an import it cannot follow instead of shipping one that would fail.
 */
import { assert, assertEquals, assertMatch, assertRejects, assertThrows } from "../assert.ts";
import { cleanEnv, cliArgs, PERMS, ROOT, run, spawnSleeper, tempDir } from "../helpers.ts";
import {
  bundle,
  BundleError,
  commandChunks,
  commandMerges,
  deferChunkImports,
  deferredTargets,
  ENTRY,
  exportedNames,
  literalImports,
  nonLiteralImports,
  reachableFiles,
  redirectImports,
  renameImport,
  startupChunks,
  staticTargets,
} from "../../scripts/bundle.ts";
import { V8_FLAGS } from "../../scripts/build.ts";

/** `deno run` of the bundle's entry, as a hook would start it. */
function bundleArgs(dir: string, args: string[]): string[] {
  return ["run", "--quiet", ...PERMS, ...V8_FLAGS, `${dir}/${ENTRY}`, ...args];
}

function env(): Record<string, string> {
  return { ...cleanEnv(), NO_COLOR: "1" };
}

Deno.test("the transformer and the scans, on their own", async (t) => {
  await t.step("a variable import becomes a choice among its file's typeof imports", () => {
    const source = [
      'const A = "./a.ts";',
      'const m: typeof import("./a.ts") = await import(A);',
      'type B = typeof import("../b.ts");',
      "export const load = (s: string) => import(s);",
      'const literal = await import("./c.ts");',
    ].join("\n");
    const out = literalImports(source, "x.ts")!;
    assert(!/(?<![\w$.])import\(\s*[A-Za-z_$]/.test(out), out);
    assert(out.includes("__rosterImport(A)") && out.includes("__rosterImport(s)"), out);
    assert(out.includes('case "./a.ts":\n      return import("./a.ts");'), out);
    assert(out.includes('case "../b.ts":\n      return import("../b.ts");'), out);
    assert(out.includes('await import("./c.ts")'), "a literal import is left as it is");
    assert(!out.includes('case "./c.ts"'), "only typeof imports are choices");
    assertEquals(literalImports('const x = await import("./c.ts");\n', "y.ts"), null);
  });

  await t.step("a variable import with nothing to choose from is refused, with its line", () => {
    const err = assertThrows(
      () => literalImports("// one\nconst p = 'x';\nawait import(p);\n", "src/z.ts"),
      BundleError,
    );
    assertMatch(err.message, /^src\/z\.ts:3: import\(\) of a variable with no typeof import/);
  });

  await t.step("main.js's start-up chunks: its static imports and theirs, in run order", () => {
    const files: Record<string, string> = {
      [ENTRY]: 'import { a } from "./chunk-A.js";\nimport "./chunk-B.js";\n' +
        'const __rosterChunk0 = "./check-C.js";\nimport(__rosterChunk0);\n',
      "chunk-A.js": 'import {\n  d as e\n} from "./chunk-D.js";\nvar a = e;\nexport {\n  a\n};\n',
      "chunk-B.js": 'import "./chunk-D.js";\nexport * from "./chunk-A.js";\n',
      "chunk-D.js": "var d = 1, x = 2;\nexport {\n  d,\n  x as y\n};\n",
    };
    assertEquals(staticTargets(files["chunk-A.js"]), ["./chunk-D.js"]);
    assertEquals(staticTargets(files["chunk-B.js"]), ["./chunk-D.js", "./chunk-A.js"]);
    // Depth first, each import before its importer: the order ES modules are evaluated in.
    assertEquals(startupChunks((f) => files[f]), ["chunk-D.js", "chunk-A.js", "chunk-B.js"]);
    assertEquals(exportedNames(files["chunk-D.js"]), ["d", "y"]);
    const out = redirectImports(files[ENTRY], new Set(["chunk-A.js"]), "chunk-M.js");
    assertEquals(
      out,
      'import { a } from "./chunk-M.js";\nimport "./chunk-B.js";\n' +
        'const __rosterChunk0 = "./check-C.js";\nimport(__rosterChunk0);\n',
    );
  });

  await t.step("the output scan: string literals pass, anything else is reported", () => {
    const ok = "const a = import(\"./a.js\"); const b = import( './b.js' ); x.import(y);";
    assertEquals(nonLiteralImports(ok, "ok.js"), []);
    for (const bad of ["import(p)", 'import("./a" + p)', "import(`./${p}.js`)", "import (p)"]) {
      const found = nonLiteralImports(`const q = 1;\nawait ${bad};\n`, "bad.js");
      assertEquals(found.length, 1, bad);
      assertEquals([found[0].file, found[0].line], ["bad.js", 2], bad);
    }
  });

  await t.step("each command's file takes the chunks no other file of its calls loads", () => {
    const table = (cases: [string, string][], fn = "__rosterImport") =>
      `function ${fn}(specifier) {\n  switch (specifier) {\n` +
      cases.map(([s, f]) => `    case "${s}":\n      return import("./${f}");\n`).join("") +
      "  }\n}\n";
    const files: Record<string, string> = {
      [ENTRY]: 'import { main } from "./chunk-S.js";\nmain();\n',
      "chunk-S.js": table(
        [["./commands/a.ts", "a-A.js"], ["./commands/b.ts", "b-B.js"]],
        "__rosterCommandImport",
      ) + table([["./linux.ts", "linux-L.js"]]),
      // a loads lazy-Z on demand, which imports chunk-Q: a's copy would be a second one.
      "a-A.js": 'import "./chunk-S.js";\nimport "./chunk-X.js";\nimport "./chunk-P.js";\n' +
        'import "./chunk-Q.js";\nconst z = () => import("./lazy-Z.js");\n',
      // b never loads lazy-Z: chunk-Q is b's alone in a call of b. It loads helper-H, a module
      // under commands/ that is not in the table: a module loaded on demand like any other.
      "b-B.js": 'import "./chunk-X.js";\nimport "./chunk-Y.js";\nimport "./chunk-Q.js";\n' +
        'import "./chunk-R.js";\n' + table([["./commands/helper.ts", "helper-H.js"]]),
      "helper-H.js": 'import "./chunk-R.js";\n',
      "chunk-R.js": "var r = 1;\n",
      "chunk-X.js": 'import "./chunk-W.js";\nvar x = 1;\n',
      "chunk-W.js": "var w = 1;\n",
      "chunk-Y.js": "var y = 1;\n",
      "chunk-P.js": "var p = 1;\n",
      "chunk-Q.js": "var q = 1;\n",
      // The backend every command may load shares chunk-P.
      "linux-L.js": 'import "./chunk-P.js";\n',
      "lazy-Z.js": 'import "./chunk-Q.js";\n',
      // What a merge left behind: nothing imports it.
      "chunk-O.js": "var o = 1;\n",
    };
    const read = (f: string) => files[f];
    assertEquals(commandChunks(files["chunk-S.js"]), ["a-A.js", "b-B.js"]);
    // A lazy import of a module under commands/ from elsewhere than the table is no command.
    assertEquals(commandChunks(files["b-B.js"]), []);
    assertEquals(
      commandMerges(read, Object.keys(files)),
      new Map([
        ["a-A.js", ["chunk-W.js", "chunk-X.js"]],
        ["b-B.js", ["chunk-Q.js", "chunk-W.js", "chunk-X.js", "chunk-Y.js"]],
      ]),
    );
    const renamed = renameImport(files["chunk-S.js"], "a-A.js", "a-N.js");
    assertEquals(commandChunks(renamed), ["a-N.js", "b-B.js"]);
    assertEquals(
      [...reachableFiles(read)].sort(),
      Object.keys(files).filter((f) => f !== "chunk-O.js").sort(),
    );
    // A command another file imports, or loads from elsewhere than the table, is refused: its
    // file would then share a call with another command's copies.
    for (
      const [file, plant] of [
        ["a-A.js", 'import "./b-B.js";\n'],
        ["lazy-Z.js", 'const b = () => import("./b-B.js");\n'],
      ]
    ) {
      const planted = { ...files, [file]: files[file] + plant };
      const err = assertThrows(
        () => commandMerges((f) => planted[f], Object.keys(planted)),
        BundleError,
      );
      assertMatch(err.message, /^b-B\.js is loaded other than through the command table/);
    }
  });

  await t.step(
    "only main.ts loads a command's module, once a call: what the fold relies on",
    () => {
      // Each command's file holds its own copy of the chunks it shares with other commands
      // (commandMerges): a second command loaded in the same call would run those modules twice.
      const sites: string[] = [];
      const walk = (dir: string) => {
        for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
          const path = `${dir}/${e.name}`;
          if (e.isDirectory) walk(path);
          else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) {
            const text = Deno.readTextFileSync(`${ROOT}${path}`);
            for (const m of text.matchAll(/[\w$.?]*command[\w$.?]*\.load\(/gi)) {
              sites.push(`${path}: ${m[0]}`);
            }
          }
        }
      };
      walk("src");
      const main = Deno.readTextFileSync(`${ROOT}main.ts`);
      const inMain = [...main.matchAll(/[\w$.?]*command[\w$.?]*\.load\(/gi)].map((m) => m[0]);
      assertEquals(sites, []);
      assertEquals(inMain, ["args.command.load("]);
    },
  );

  await t.step("chunk imports deferred into variables, each named once at the top", () => {
    const js = 'import { a } from "./chunk-A.js";\nconst f = () => import("./check-B.js");\n' +
      'const g = () => import("./list-C.js");\n';
    const out = deferChunkImports(js);
    assertEquals(deferredTargets(out), ["./check-B.js", "./list-C.js"]);
    assertEquals(nonLiteralImports(out, "out.js").length, 2, "no literal import is left");
    assert(out.includes('import { a } from "./chunk-A.js";'), "static imports stay");
    assert(out.includes("import(__rosterChunk1)"), out);
    assertEquals(deferChunkImports("const x = 1;\n"), "const x = 1;\n");
  });

  await t.step(
    "a planted import the transformer cannot map fails the bundle in one line",
    async () => {
      await using tree = await tempDir();
      for (const f of ["main.ts", "deno.json"]) {
        Deno.copyFileSync(
          `${ROOT}${f}`,
          `${tree.path}/${f}`,
        );
      }
      await run("cp", ["-r", `${ROOT}src`, `${tree.path}/src`], env());
      const check = `${tree.path}/src/cli/commands/check.ts`;
      const original = Deno.readTextFileSync(check);
      // Neither is a bare variable (literalImports' form): esbuild leaves the first as it is and
      // makes the second a glob. Either would look for a file that does not exist beside the bundle.
      const plants: [string, RegExp][] = [
        [
          "export const planted = (names: string[]) => import(names[0]);",
          /^check-\w+\.js:\d+: import\(\) of a non-literal specifier \(import\(names\[0\]\)/,
        ],
        [
          'export const planted = (name: string) => import("./" + name + ".ts");',
          /^check-\w+\.js: import\("\.\/\*\*\/\*\.ts"\) names no file of the bundle$/,
        ],
      ];
      for (const [plant, message] of plants) {
        await using out = await tempDir();
        Deno.writeTextFileSync(check, `${original}\n${plant}\n`);
        const err = await assertRejects(
          () => bundle({ out: out.path, root: tree.path, verbose: false, help: false }),
          BundleError,
        );
        assertMatch(err.message, message);
        assert(!err.message.includes("\n"), err.message);
        assertEquals([...Deno.readDirSync(out.path)], [], "nothing written");
      }
      // The same tree without a plant bundles: the failures were the plants'.
      Deno.writeTextFileSync(check, original);
      await using out = await tempDir();
      const files = await bundle({ out: out.path, root: tree.path, verbose: false, help: false });
      assertEquals(files[0], ENTRY);
    },
  );
});

Deno.test({
  name: "the bundle: built, the same answers as the sources, only its command's chunks",
  // strace is installed by .ci/setup.d/strace.sh; on Linux its absence fails the test.
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    await using dir = await tempDir();
    const b = dir.path;
    const files: string[] = [];

    await t.step(
      "the task builds main.js and its chunks; every import names one of them",
      async () => {
        // A stale chunk beside the bundle is removed, not left to be loaded or shipped.
        Deno.writeTextFileSync(`${b}/stale-AAAAAAAA.js`, "");
        const r = await run(
          Deno.execPath(),
          ["run", "--allow-all", `${ROOT}scripts/bundle.ts`, "--out", b],
          env(),
        );
        assertEquals(r.code, 0, r.stderr);
        assertMatch(r.stdout, /^bundled .*main\.js and \d+ chunks/);
        files.push(...[...Deno.readDirSync(b)].map((e) => e.name).sort());
        assert(files.includes(ENTRY) && !files.includes("stale-AAAAAAAA.js"), `${files}`);
        // Each file was written beside its place and renamed in: no temp file is left.
        assert(files.every((f) => !f.startsWith(".")), `${files}`);
        // One chunk per module loaded on demand, named after it: every command, every backend.
        for (
          const m of ["register", "check", "whoami", "list", "help", "linux", "windows", "ledger"]
        ) {
          assert(files.some((f) => new RegExp(`^${m}-\\w+\\.js$`).test(f)), `no chunk for ${m}`);
        }
        // main.js's own code is one chunk: every call loads all of it before main runs.
        const startup = new Set(staticTargets(Deno.readTextFileSync(`${b}/${ENTRY}`)));
        assertEquals(startup.size, 1, `${[...startup]}`);
        for (const f of files) {
          const js = Deno.readTextFileSync(`${b}/${f}`);
          const deferred = deferredTargets(js);
          assertEquals(nonLiteralImports(js, f).length, deferred.length, `${f}: an unknown import`);
          for (const target of deferred) assert(files.includes(target.slice(2)), `${f}: ${target}`);
        }
      },
    );

    await using home = await tempDir();
    await using session = spawnSleeper();
    await using other = spawnSleeper();
    const h = ["--home", home.path];

    /** One call through the sources, then the bundle, on the same home: the same answer. */
    const same = async (args: string[], codes: number[]) => {
      const src = await run(Deno.execPath(), cliArgs(args), env());
      const bun = await run(Deno.execPath(), bundleArgs(b, args), env());
      assert(codes.includes(src.code), `${args.join(" ")}: exit ${src.code}: ${src.stderr}`);
      assertEquals([bun.code, bun.stdout], [src.code, src.stdout], args.join(" "));
      assertEquals(bun.stderr, src.stderr, args.join(" "));
      return src;
    };
    /** A write through one, then through the other on a second process: the same answers. */
    const sameWrite = async (args: (pid: number) => string[], codes: number[]) => {
      const src = await run(Deno.execPath(), cliArgs(args(session.pid)), env());
      const bun = await run(Deno.execPath(), bundleArgs(b, args(other.pid)), env());
      assert(codes.includes(src.code), `${args(0).join(" ")}: exit ${src.code}: ${src.stderr}`);
      assertEquals([bun.code, bun.stdout, bun.stderr], [src.code, src.stdout, src.stderr]);
    };

    await t.step("run as a hook would, it answers as the sources do", async () => {
      await same(["--version"], [0]);
      await same(["--version", "--json"], [0]);
      await same(["--help"], [0]);
      await same(["help", "check"], [0]);
      await same(["frobnicate"], [2]);
      await sameWrite((pid) => ["register", "--pid", `${pid}`, "--quiet", ...h], [0]);
      // whoami's caller is this process's child: this process is the session it finds.
      await run(
        Deno.execPath(),
        cliArgs(["register", "--pid", `${Deno.pid}`, "--agent", "t", "-q", ...h]),
        env(),
      );
      const listed = await same(["list", "--json", ...h], [0]);
      assertEquals(JSON.parse(listed.stdout).length, 3, listed.stdout);
      await same(["check", `${session.pid}`, ...h], [0]);
      await same(["check", `${other.pid}`, "--json", ...h], [0]);
      await same(["check", "4200000", ...h], [3]);
      await same(["whoami", ...h], [0]);
      await same(["whoami", "--json", ...h], [0]);
      await same(["continuation-check", "--key", "k", ...h], [10, 11, 12, 13]);
      await same(["continuation-check", "--key", "k", "--json", ...h], [10, 11, 12, 13]);
      await same(["register", "--pid", "x", ...h], [2]);
      await sameWrite((pid) => ["unregister", "--pid", `${pid}`, "--quiet", ...h], [0]);
      await same(["list", "--all", "--json", ...h], [0]);
      await same(["unregister", "--pid", `${session.pid}`, "--quiet", ...h], [3, 0]);
    });

    await t.step(
      "no hook call queues enough warm code for V8 to compile a Sparkplug batch",
      async () => {
        // V8_FLAGS' --baseline-batch-compilation-threshold: a batch compiled would cost the call
        // its compilation for a few faster calls; V8 traces each batch it compiles on stdout.
        const [flags] = V8_FLAGS;
        const traced = `${flags},--trace-baseline-batch-compilation`;
        await run(
          Deno.execPath(),
          cliArgs(["register", "--pid", `${session.pid}`, "-q", ...h]),
          env(),
        );
        const calls = [
          ["register", "--pid", `${other.pid}`, "-q", ...h],
          ["activity", "--tool-start", "t1", "--pid", `${session.pid}`, "-q", ...h],
          ["activity", "idle", "--tool-end", "t1", "--pid", `${session.pid}`, "-q", ...h],
          ["check", `${session.pid}`, ...h],
          ["whoami", ...h],
          ["continuation-check", "--key", "k", ...h],
          ["unregister", "--pid", `${other.pid}`, "-q", ...h],
        ];
        for (const args of calls) {
          // Twice: the first writes the code cache for these flags, the second runs as a hook does.
          for (const _ of [1, 2]) {
            const r = await run(
              Deno.execPath(),
              ["run", "--quiet", ...PERMS, traced, `${b}/${ENTRY}`, ...args],
              env(),
            );
            const batches = r.stdout.split("\n").filter((l) =>
              l.includes("Compiling current batch")
            );
            assertEquals(batches, [], args.join(" "));
          }
        }
        // The trace is there to be read: with the default threshold, activity compiles batches.
        const plain = flags.replace(/,--baseline-batch-compilation-threshold=\d+/, "");
        const r = await run(
          Deno.execPath(),
          [
            "run",
            "--quiet",
            ...PERMS,
            `${plain},--trace-baseline-batch-compilation`,
            `${b}/${ENTRY}`,
            ...calls[1],
          ],
          env(),
        );
        assertMatch(r.stdout, /Compiling current batch/);
      },
    );

    await t.step(
      "check reads main.js, its own chunks and Linux's, no other command's",
      async () => {
        await run(
          Deno.execPath(),
          cliArgs(["register", "--pid", `${session.pid}`, "-q", ...h]),
          env(),
        );
        const log = `${home.path}/strace.log`;
        const out = await new Deno.Command("strace", {
          args: [
            "-f",
            "-qq",
            "-o",
            log,
            "-e",
            "trace=open,openat",
            Deno.execPath(),
            ...bundleArgs(b, ["check", `${session.pid}`, ...h]),
          ],
          env: env(),
          clearEnv: true,
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).output();
        assertEquals(out.code, 0);
        const opened = new Set<string>();
        for (const line of Deno.readTextFileSync(log).split("\n")) {
          const path = /"([^"]+)"/.exec(line)?.[1];
          if (path?.startsWith(`${b}/`) && !line.includes("ENOENT")) {
            opened.add(path.slice(b.length + 1));
          }
        }
        const named = [...opened].filter((f) => !f.startsWith("chunk-")).map((f) =>
          f.replace(/-\w+\.js$/, "")
        )
          .sort();
        // Chunks named after a module are the modules loaded on demand; chunk-* are shared code.
        assertEquals(named, ["check", "linux", "main.js"]);
        // check's own chunks are folded into its file: the only chunks it opens are main.js's
        // and those the Linux backend imports too.
        const read = (f: string) => Deno.readTextFileSync(`${b}/${f}`);
        const linux = [...opened].find((f) => f.startsWith("linux-"))!;
        const allowed = new Set([
          ...staticTargets(read(ENTRY)),
          ...staticTargets(read(linux)),
        ].map((t) => t.slice(2)));
        const chunks = [...opened].filter((f) => f.startsWith("chunk-"));
        assert(chunks.every((f) => allowed.has(f)), `${chunks} beyond ${[...allowed]}`);
        assert(opened.size >= 4 && opened.size < files.length / 2, `${[...opened]}`);
      },
    );
  },
});
