/**
 * Completion scripts: generated from the command table, and loaded in the real shells (bash,
 * zsh through a pseudo-terminal, fish with `complete -C`) to see what each offers. A shell that
 * is not installed is skipped with a printed reason.
 */
import { assert, assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { HANG_MS, installed, isFile, roster, tempDir } from "../helpers.ts";
import { buildModel, script, type Shell, SHELLS } from "../../src/cli/completions.ts";
import { SCHEMAS } from "../../src/cli/schemas.ts";
import { COMMANDS, type CommandSpec, GLOBAL_FLAGS } from "../../src/cli/spec.ts";

const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

async function output(cmd: string, args: string[], env?: Record<string, string>) {
  const out = await new Deno.Command(cmd, {
    args,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // A hang bound, not a speed limit: zsh under a loaded host took more than 20 s.
    signal: AbortSignal.timeout(HANG_MS),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("the scripts come from the command table", async (t) => {
  await t.step("every command, flag and choice is in every script", () => {
    for (const shell of SHELLS) {
      const text = script(shell);
      for (const c of COMMANDS) {
        assert(text.includes(c.name), `${shell}: ${c.name}`);
        for (const f of [...c.flags, ...GLOBAL_FLAGS]) {
          assert(new RegExp(`(--|-l )${f.name}\\b`).test(text), `${shell}: --${f.name}`);
          for (const choice of f.choices ?? []) {
            assert(text.includes(choice), `${shell}: ${choice}`);
          }
        }
      }
    }
  });
  await t.step("a command added to the table is offered", () => {
    const extra: CommandSpec = {
      name: "frobnicate",
      summary: "Frobnicate things",
      flags: [{ name: "level", value: "L", choices: ["low", "high"], help: "How much" }],
      load: () => Promise.reject(new Error("never loaded")),
    };
    const model = buildModel([...COMMANDS, extra]);
    for (const shell of SHELLS) {
      const text = script(shell, model);
      assert(text.includes("frobnicate") && text.includes("low high"), shell);
    }
  });
  await t.step("a name that is not a plain word is refused, never pasted into a script", () => {
    const bad: CommandSpec = { ...COMMANDS[0], name: "x; rm -rf ~" };
    assertThrows(() => buildModel([bad]));
  });
});

Deno.test("roster completions", async (t) => {
  await t.step("prints each script on stdout", async () => {
    for (const shell of SHELLS) {
      const r = await roster(["completions", shell]);
      assertEquals([r.code, r.stderr], [0, ""]);
      assertEquals(r.stdout, script(shell) + (script(shell).endsWith("\n") ? "" : "\n"));
    }
  });
  await t.step("an unknown shell is a usage error", async () => {
    const r = await roster(["completions", "tcsh"]);
    assertEquals([r.code, r.stdout], [2, ""]);
    assertEquals(
      r.stderr,
      'roster: Invalid SHELL: expected one of bash, zsh, fish, powershell, got "tcsh"\n',
    );
  });
  await t.step("--json wraps the script", async () => {
    const r = await roster(["completions", "fish", "--json"]);
    assertEquals(JSON.parse(r.stdout), { shell: "fish", script: script("fish") });
  });
});

/** What each shell must offer for a command line (the cursor at its end). */
const CASES: [line: string, offered: string[]][] = [
  ["roster li", ["list"]],
  ["roster ", COMMANDS.map((c) => c.name)],
  ["roster con", COMMANDS.map((c) => c.name).filter((n) => n.startsWith("con"))],
  ["roster list --st", ["--state"]],
  ["roster list --state ", ["alive", "dead", "unknown"]],
  ["roster --home /tmp un", ["unregister"]],
  ["roster completions ", ["bash", "fish", "powershell", "zsh"]],
  ["roster token --v", ["--verify", "--version"]],
  ["roster unregister --", [
    "--home",
    "--json",
    "--color",
    "--help",
    "--pid",
    "--quiet",
    "--session-id",
    "--version",
  ]],
  ["roster continuation-plan --cause ", ["hard", "signal"]],
  ["roster register --pid ", []],
  // Positional arguments, by position (issue 27 item 3).
  ["roster hooks ", ["install", "show", "uninstall"]],
  ["roster hooks install ", ["claude", "codex", "gemini", "pi"]],
  ["roster hooks install --project ", ["claude", "codex", "gemini", "pi"]],
  ["roster --home /tmp hooks un", ["uninstall"]],
  ["roster hooks install claude ", []],
  ["roster schema ", Object.keys(SCHEMAS)],
  ["roster schema do", Object.keys(SCHEMAS).filter((n) => n.startsWith("do"))],
  ["roster help ", COMMANDS.map((c) => c.name)],
  ["roster continuation-mode ", ["dry-run", "off", "on"]],
];

const sorted = (a: string[]) => [...new Set(a)].sort();

/** Completes `line` in a real shell; returns the words offered. */
type Completer = (line: string) => Promise<string[]>;

async function checkCases(t: Deno.TestContext, complete: Completer, dir: string) {
  for (const [line, offered] of CASES) {
    await t.step(JSON.stringify(line), async () => {
      assertEquals(sorted(await complete(line)), sorted(offered));
    });
  }
  await t.step("a DIR value completes to directories only", async () => {
    const got = await complete(`roster list --cwd ${dir}/s`);
    assert(got.some((w) => /sub\/?$/.test(w)), `got ${JSON.stringify(got)}`);
    assert(!got.some((w) => w.includes("somefile")), `got ${JSON.stringify(got)}`);
  });
}

async function fixtureDir() {
  const dir = await tempDir("roster-compl-");
  Deno.mkdirSync(`${dir.path}/sub`);
  Deno.writeTextFileSync(`${dir.path}/somefile`, "");
  return dir;
}

Deno.test({
  name: "bash offers what the table has",
  ignore: !installed("bash"),
  async fn(t) {
    await using dir = await fixtureDir();
    const file = `${dir.path}/roster.bash`;
    Deno.writeTextFileSync(file, script("bash"));
    const systemCompletion = "/usr/share/bash-completion/bash_completion";
    const modes: [string, string][] = [["alone", ""]];
    if (isFile(systemCompletion)) {
      modes.push(["after bash-completion", `. ${systemCompletion}`]);
    } else {console.log(
        "skipped: bash-completion is not installed (apt-get install bash-completion)",
      );}
    for (const [mode, preamble] of modes) {
      await t.step(mode, async (t) => {
        const complete: Completer = async (line) => {
          const words = line.split(" ");
          const driver = `${preamble}\n. ${sq(file)}\n` +
            `complete -p roster | grep -qx 'complete -F _roster roster' || exit 9\n` +
            `COMP_WORDS=(${words.map(sq).join(" ")}); COMP_CWORD=${words.length - 1}\n` +
            `COMP_LINE=${sq(line)}; COMP_POINT=${line.length}\n` +
            `_roster; printf '%s\\n' "\${COMPREPLY[@]}"\n`;
          const r = await output("bash", ["--norc", "--noprofile", "-c", driver]);
          assertEquals(r.code, 0, r.stderr);
          return r.stdout.split("\n").filter((w) => w !== "");
        };
        await checkCases(t, complete, dir.path);
        await t.step("--flag=value split at = as readline does", async () => {
          const words = ["roster", "list", "--state", "=", "de"];
          const driver = `. ${sq(file)}\nCOMP_WORDS=(${words.map(sq).join(" ")}); COMP_CWORD=4\n` +
            `_roster; printf '%s\\n' "\${COMPREPLY[@]}"\n`;
          const r = await output("bash", ["--norc", "--noprofile", "-c", driver]);
          assertEquals(r.stdout, "dead\n");
        });
      });
    }
  },
});

/**
 * Drives an interactive zsh in a pseudo-terminal (zsh/zpty): loads compinit and the script,
 * types the line and TAB, and prints every match the completion system adds, caught by
 * wrapping compadd (which still adds them, so the completion system behaves as it would). Markers from compprefuncs/comppostfuncs bracket one completion.
 */
// (Written with § for the dollar of zsh's ${...}, which a template literal would take.)
const ZSH_CAPTURE = String.raw`
zmodload zsh/zpty || exit 3
local mode=$1 file=$2 line=$3 out
zpty z zsh -f -i
local load
if [[ $mode == fpath ]]; then
  load="fpath=(§{(q)file:h} \$fpath); autoload -U compinit && compinit -u -D"
else
  load="autoload -U compinit && compinit -u -D; source §{(q)file}"
fi
zpty -w z "PROMPT= RPROMPT= PS2=; $load
bindkey '^I' complete-word
zstyle ':completion:*' insert-tab false
__mark() { print -r -- __ROSTER_MARK__ }
compprefuncs=( __mark ); comppostfuncs=( __mark exit )
compadd() {
  if [[ \§{@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd \"\$@\"; return; fi
  local -a __hits
  builtin compadd -O __hits \"\$@\"
  (( \$#__hits )) && print -rl -- __HIT__\$^__hits
  builtin compadd \"\$@\"
}
print -r -- __READY__"
while zpty -r z out; do [[ $out == *__READY__* ]] && break; done
zpty -w -n z "$line"$'\t'
integer n=0
while zpty -r z out; do
  out=§{out//$'\r'/}; out=§{out%$'\n'}
  if [[ $out == *__ROSTER_MARK__* ]]; then (( ++n == 2 )) && break; continue; fi
  (( n == 1 )) && [[ $out == __HIT__* ]] && print -r -- §{out#__HIT__}
done
zpty -d z
`.replaceAll("§{", "$" + "{");

Deno.test({
  name: "zsh offers what the table has",
  ignore: !installed("zsh"),
  async fn(t) {
    await using dir = await fixtureDir();
    Deno.mkdirSync(`${dir.path}/fpath`);
    const file = `${dir.path}/fpath/_roster`;
    Deno.writeTextFileSync(file, script("zsh"));
    const capture = `${dir.path}/capture.zsh`;
    Deno.writeTextFileSync(capture, ZSH_CAPTURE);
    const zsh = (mode: string, line: string) => output("zsh", ["-f", capture, mode, file, line]);
    await t.step("the script loads with compinit without a word on stderr", async () => {
      const r = await output("zsh", [
        "-f",
        "-c",
        `autoload -U compinit; compinit -u -D; source ${sq(file)}; print -r -- $_comps[roster]`,
      ]);
      assertEquals([r.code, r.stdout, r.stderr], [0, "_roster\n", ""]);
    });
    const complete: Completer = async (line) => {
      const r = await zsh("source", line);
      assertEquals(r.code, 0, r.stderr);
      return r.stdout.split("\n").filter((w) => w !== "");
    };
    await checkCases(t, complete, dir.path);
    await t.step("--flag=value in one word", async () => {
      assertEquals(await complete("roster list --state=d"), ["dead"]);
    });
    await t.step("autoloaded from $fpath as _roster", async () => {
      const r = await zsh("fpath", "roster li");
      assertEquals([r.code, r.stdout], [0, "list\n"]);
    });
  },
});

Deno.test({
  name: "fish offers what the table has",
  ignore: !installed("fish"),
  async fn(t) {
    await using dir = await fixtureDir();
    const file = `${dir.path}/roster.fish`;
    Deno.writeTextFileSync(file, script("fish"));
    await t.step("the script loads without a word on stderr", async () => {
      const r = await output("fish", ["--no-config", "-c", `source ${sq(file)}`]);
      assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    });
    const complete: Completer = async (line) => {
      const r = await output(
        "fish",
        ["--no-config", "-c", `source ${sq(file)}; complete -C $ROSTER_LINE`],
        { ...Deno.env.toObject(), ROSTER_LINE: line },
      );
      assertEquals(r.code, 0, r.stderr);
      return r.stdout.split("\n").filter((w) => w !== "").map((w) => w.split("\t")[0]);
    };
    await checkCases(t, complete, dir.path);
    await t.step("descriptions come from the table", async () => {
      const r = await output("fish", [
        "--no-config",
        "-c",
        `source ${sq(file)}; complete -C 'roster li'`,
      ]);
      const list = COMMANDS.find((c) => c.name === "list")!;
      assertEquals(r.stdout, `list\t${list.summary}\n`);
    });
  },
});

Deno.test("every shell the command accepts has a generator", () => {
  for (const shell of SHELLS as readonly Shell[]) assertMatch(script(shell), /roster/);
});

Deno.test("the table's hooks positionals are the harnesses hooks knows", async () => {
  const { HOOK_HARNESSES } = await import("../../src/hooks/recipes.ts");
  const hooks = COMMANDS.find((c) => c.name === "hooks")!;
  assertEquals(hooks.positionals?.each?.[1], HOOK_HARNESSES);
});
