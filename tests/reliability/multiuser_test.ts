/**
 * Two real users on one machine: an attacker who owns or shares directories around a victim's
 * store, and the victim (an unprivileged user, or root). No directory or link the attacker
 * plants makes roster write outside the victim's home, and no ledger the attacker can rewrite
 * lets one continuation key be dispatched twice. Needs root (the test creates both users with
 * useradd, runs roster as them with setpriv, and removes them); skipped otherwise.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { type CliResult, hostDir, PERMS, ROOT, spawnSleeper } from "../helpers.ts";
import { FACTS, PANE } from "../continuation/fixtures.ts";
import { hasStackTrace } from "./store_check.ts";

interface User {
  name: string;
  uid: number;
  gid: number;
}

function sh(cmd: string, args: string[]): { ok: boolean; out: string } {
  const r = new Deno.Command(cmd, { args, stdin: "null", stdout: "piped", stderr: "piped" })
    .outputSync();
  const dec = new TextDecoder();
  return { ok: r.success, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}

function canRun(): string | null {
  if (Deno.build.os !== "linux") return "Linux only";
  if (Deno.uid() !== 0) return "needs root to create two users (useradd) and run roster as them";
  for (const tool of ["useradd", "userdel", "setpriv"]) {
    if (!sh("sh", ["-c", `command -v ${tool}`]).ok) return `${tool} is not installed`;
  }
  return null;
}

function createUser(name: string): User {
  const r = sh("useradd", ["--system", "--no-create-home", "--shell", "/bin/sh", name]);
  assert(r.ok, `useradd ${name}: ${r.out}`);
  const id = (flag: string) => Number(sh("id", [flag, name]).out.trim());
  return { name, uid: id("-u"), gid: id("-g") };
}

/** A copy of roster any user can read (the checkout may sit in root's home). */
function copyApp(to: string) {
  Deno.mkdirSync(to, { mode: 0o755 });
  const files = ["main.ts", "src", "deno.json", "deno.lock"].filter((f) => {
    try {
      Deno.statSync(`${ROOT}${f}`);
      return true;
    } catch {
      return false;
    }
  });
  const r = sh("cp", ["-r", ...files.map((f) => `${ROOT}${f}`), to]);
  assert(r.ok, r.out);
  sh("chmod", ["-R", "a+rX", to]);
  return `${to}/main.ts`;
}

const dec = new TextDecoder();

Deno.test("another user's directories and links never redirect roster's writes", async (t) => {
  const why = canRun();
  if (why !== null) {
    console.log(`skipped: ${why}`);
    return;
  }
  const tag = crypto.randomUUID().slice(0, 6);
  const base = Deno.makeTempDirSync({ prefix: "roster-mu-" });
  Deno.chmodSync(base, 0o755);
  const attacker = createUser(`rstr-a-${tag}`);
  const victim = createUser(`rstr-v-${tag}`);
  await using sleeper = spawnSleeper();
  try {
    const main = copyApp(`${base}/app`);
    const denoDir = (u: User) => {
      const d = `${base}/deno-${u.name}`;
      Deno.mkdirSync(d, { recursive: true, mode: 0o700 });
      Deno.chownSync(d, u.uid, u.gid);
      return d;
    };
    const dirs = new Map<string, string>();
    const rootDenoDir = Deno.env.get("DENO_DIR") ??
      `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
    /** roster as `u` (null: root), as a hook would run it. */
    const roster = async (
      u: User | null,
      args: string[],
      env: Record<string, string> = {},
      stdin?: string,
    ): Promise<CliResult> => {
      const deno = [Deno.execPath(), "run", "--quiet", ...PERMS, main, ...args];
      const cmd = u === null ? deno : [
        "setpriv",
        `--reuid=${u.uid}`,
        `--regid=${u.gid}`,
        "--init-groups",
        "--",
        ...deno,
      ];
      // Deno keeps its cache under HOME unless told: root's stays in root's own.
      const dd = u === null ? rootDenoDir : (dirs.get(u.name) ??
        (dirs.set(u.name, denoDir(u)), dirs.get(u.name)!));
      const child = new Deno.Command(cmd[0], {
        args: cmd.slice(1),
        clearEnv: true,
        env: {
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          HOME: u === null ? (Deno.env.get("HOME") ?? "/root") : base,
          NO_COLOR: "1",
          ...(dd ? { DENO_DIR: dd } : {}),
          ...env,
        },
        cwd: base,
        stdin: stdin === undefined ? "null" : "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      if (stdin !== undefined) {
        const w = child.stdin.getWriter();
        await w.write(new TextEncoder().encode(stdin));
        await w.close();
      }
      const out = await child.output();
      const r = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
      assert(!hasStackTrace(r.stderr), r.stderr);
      assert(!/Unexpected failure/.test(r.stderr), r.stderr);
      return r;
    };
    const mkdir = (path: string, owner: User | null, mode: number) => {
      Deno.mkdirSync(path);
      Deno.chmodSync(path, mode);
      if (owner) Deno.chownSync(path, owner.uid, owner.gid);
      return path;
    };
    const as = (u: User, cmd: string) => {
      const r = sh("setpriv", [
        `--reuid=${u.uid}`,
        `--regid=${u.gid}`,
        "--init-groups",
        "--",
        "sh",
        "-c",
        cmd,
      ]);
      return r;
    };
    const tree = (path: string): string[] => {
      const out: string[] = [];
      for (const e of Deno.readDirSync(path)) {
        out.push(e.name);
        if (e.isDirectory && !Deno.lstatSync(`${path}/${e.name}`).isSymlink) {
          for (const x of tree(`${path}/${e.name}`)) out.push(`${e.name}/${x}`);
        }
      }
      return out.sort();
    };
    const register = (u: User | null, home: string) =>
      roster(u, ["register", "--pid", String(sleeper.pid), "--home", home]);
    const refusedOneLine = (r: CliResult, what: string) => {
      assertEquals(r.code, 1, `${what}: ${r.stdout}${r.stderr}`);
      assertEquals(r.stderr.split("\n").length, 2, r.stderr);
      assertMatch(r.stderr, /^roster: /);
    };

    await t.step(
      "a home inside a directory the attacker owns: refused, nothing created",
      async () => {
        const owned = mkdir(`${base}/attacker-owned`, attacker, 0o755);
        const home = mkdir(`${owned}/victim-home`, victim, 0o700);
        for (const u of [victim, null]) {
          const r = await register(u, home);
          refusedOneLine(r, u ? "victim" : "root");
          assertMatch(r.stderr, /another user.*attacker-owned/);
        }
        assertEquals(tree(home), []);
      },
    );

    await t.step(
      "a sticky shared home: the attacker's places/ is refused every time",
      async () => {
        const shared = mkdir(`${base}/shared`, null, 0o1777);
        assert(as(attacker, `mkdir -m 777 '${shared}/places'`).ok);
        for (const u of [victim, null]) {
          for (let i = 0; i < 3; i++) {
            const r = await register(u, shared);
            refusedOneLine(r, `${u?.name ?? "root"} call ${i + 1}`);
          }
        }
        assertEquals(tree(`${shared}/places`), []);
      },
    );

    await t.step(
      "a sticky shared home: the attacker's places link to a root-only directory",
      async () => {
        const shared = mkdir(`${base}/shared2`, null, 0o1777);
        const rootOnly = mkdir(`${base}/root-only`, null, 0o700);
        assert(as(attacker, `ln -s '${rootOnly}' '${shared}/places'`).ok);
        for (const u of [null, victim]) {
          for (let i = 0; i < 3; i++) refusedOneLine(await register(u, shared), `call ${i + 1}`);
        }
        assertEquals(tree(rootOnly), []);
        // And with the link at the host level under a places/ of the victim's own.
        const shared3 = mkdir(`${base}/shared3`, null, 0o1777);
        mkdir(`${shared3}/places`, victim, 0o1777);
        assert(
          as(
            attacker,
            `ln -s '${rootOnly}' '${hostDir(shared3)}'`,
          )
            .ok,
        );
        for (let i = 0; i < 2; i++) {
          refusedOneLine(await register(victim, shared3), `host link ${i}`);
        }
        assertEquals(tree(rootOnly), []);
      },
    );

    await t.step("a sticky shared home: the victim's own store works there", async () => {
      const shared = mkdir(`${base}/shared4`, null, 0o1777);
      const home = `${shared}/victim`;
      const r = await register(victim, home);
      assertEquals(r.code, 0, r.stderr);
      assertEquals(Deno.statSync(`${home}/places`).uid, victim.uid);
      // The attacker cannot move it aside: the sticky bit keeps the victim's entry.
      assert(!as(attacker, `mv '${home}' '${shared}/aside'`).ok, "sticky bit held");
    });

    await t.step("root against the victim's home never locks the victim out", async () => {
      const home = mkdir(`${base}/victim-home`, victim, 0o700);
      const r = await roster(null, ["register", "--pid", String(sleeper.pid)], { HOME: home });
      refusedOneLine(r, "root with the victim's HOME");
      assertMatch(r.stderr, /another user/);
      const direct = await register(null, `${home}/.local/state/roster`);
      refusedOneLine(direct, "root with --home in the victim's home");
      assertEquals(tree(home), []);
      const v = await roster(victim, ["register", "--pid", String(sleeper.pid)], { HOME: home });
      assertEquals(v.code, 0, v.stderr);
      for (const p of tree(home)) {
        assertEquals(Deno.lstatSync(`${home}/${p}`).uid, victim.uid, p);
      }
    });

    await t.step("a ledger the attacker can move aside: no key is dispatched twice", async () => {
      const home = mkdir(`${base}/victim-store`, victim, 0o700);
      const gone = spawnSleeper();
      const reg = await roster(victim, [
        "register",
        "--pid",
        String(gone.pid),
        "--session-id",
        "S1",
        "--home",
        home,
      ], { TMUX_PANE: PANE });
      assertEquals(reg.code, 0, reg.stderr);
      await gone.kill();
      for (
        const [label, parentMode] of [["attacker-owned", 0o777], [
          "attacker-sticky",
          0o1777,
        ]] as const
      ) {
        const parent = mkdir(`${base}/${label}-ledgers`, attacker, parentMode);
        const ledger = `${parent}/ledger`;
        let dispatched = 0;
        for (let round = 0; round < 2; round++) {
          const plan = await roster(victim, [
            "continuation-plan",
            "--key",
            "k1",
            "--session",
            String(gone.pid),
            "--frozen-marker",
            "m1",
            "--spacing",
            "0s",
            "--release",
            "--home",
            home,
            "--ledger",
            ledger,
          ]);
          if (plan.code === 0) {
            assert(
              as(
                victim,
                `printf '{"mode":"on"}' > '${ledger}/config.json' && chmod 600 '${ledger}/config.json'`,
              )
                .ok,
            );
          } else {
            refusedOneLine(plan, `${label} plan`);
            assertMatch(plan.stderr, /another user/);
          }
          const c = await roster(
            victim,
            [
              "continuation-check",
              "--key",
              "k1",
              "--claim",
              "--facts",
              "-",
              "--home",
              home,
              "--ledger",
              ledger,
            ],
            {},
            JSON.stringify(FACTS),
          );
          if (c.code === 0) {
            dispatched++;
          }
          // The attacker moves the ledger (claims and all) aside, as the owner of its parent may.
          as(attacker, `mv '${ledger}' '${parent}/aside-${round}' 2>/dev/null`);
        }
        assert(dispatched <= 1, `${label}: dispatched ${dispatched} times`);
        assertEquals(dispatched, 0, `${label}: a ledger the attacker can rewrite is refused`);
      }
    });

    await t.step("the victim's records are never the attacker's to remove", async () => {
      const shared = mkdir(`${base}/shared5`, null, 0o1777);
      const home = `${shared}/v`;
      assertEquals((await register(victim, home)).code, 0);
      // Whatever the attacker runs against it (refused, or nothing it may read), it stays.
      await roster(attacker, ["prune", "--older-than", "0s", "--home", home]);
      await roster(attacker, ["unregister", "--pid", String(sleeper.pid), "--home", home]);
      const listed = await roster(victim, ["list", "--json", "--home", home]);
      assertEquals(JSON.parse(listed.stdout).length, 1, listed.stdout);
    });
  } finally {
    sh("userdel", [attacker.name]);
    sh("userdel", [victim.name]);
    Deno.removeSync(base, { recursive: true });
  }
});
