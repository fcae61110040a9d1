/**
 * What the recipe tests share: the recipes as docs/hooks.md has them, a `roster` on PATH that
 * runs this checkout exactly as a hook would, stand-ins for the harnesses (an executable named
 * like the harness), and a long-lived stand-in that runs hook commands one at a time.
 */
import { cleanEnv, cliArgs, type CliResult } from "../helpers.ts";

export const DOC = new URL("../../docs/hooks.md", import.meta.url).pathname;

/** The fenced block that follows `<!-- recipe: NAME -->` in docs/hooks.md. */
export function recipe(name: string): string {
  const text = Deno.readTextFileSync(DOC);
  const marker = `<!-- recipe: ${name} -->`;
  const at = text.indexOf(marker);
  if (at === -1) throw new Error(`docs/hooks.md has no recipe: ${name}`);
  const m = /```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at + marker.length));
  if (!m) throw new Error(`docs/hooks.md has no code block after: ${marker}`);
  return m[1] + "\n";
}

/** The `command` strings of one hook event in a Claude-Code-style hooks object. */
export function hookCommands(config: string, event: string): string[] {
  const parsed = JSON.parse(config) as {
    hooks: Record<string, { hooks: { type: string; command: string }[] }[]>;
  };
  const groups = parsed.hooks[event];
  if (!groups) throw new Error(`The recipe has no ${event} hook`);
  return groups.flatMap((g) => g.hooks.filter((h) => h.type === "command").map((h) => h.command));
}

/** Single-quotes a string for sh. */
export function shq(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Writes an executable `roster` into `dir` that runs this checkout's main.ts as a hook would. */
export function installRoster(dir: string): string {
  const path = `${dir}/roster`;
  const line = [Deno.execPath(), ...cliArgs([])].map(shq).join(" ");
  Deno.writeTextFileSync(path, `#!/bin/sh\nexec ${line} "$@"\n`);
  Deno.chmodSync(path, 0o755);
  return path;
}

/** An executable copy of bash named like a harness (`; true` after a -c command keeps it). */
export function standIn(dir: string, name: string): string {
  const path = `${dir}/${name}`;
  Deno.copyFileSync("/bin/bash", path);
  Deno.chmodSync(path, 0o755);
  return path;
}

/** A script named like a program that runs until `release` exists (for agents run in the background). */
export function waitingProgram(dir: string, name: string, release: string): string {
  const path = `${dir}/${name}`;
  Deno.writeTextFileSync(
    path,
    `#!/bin/bash\nwhile [ ! -e ${shq(release)} ]; do sleep 0.05; done\n`,
  );
  Deno.chmodSync(path, 0o755);
  return path;
}

/** The environment of a recipe's shell: `bin` first on PATH, the store at `home`. */
export function recipeEnv(
  bin: string,
  home: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env = cleanEnv();
  return { ...env, PATH: `${bin}:${env.PATH ?? "/usr/bin:/bin"}`, ROSTER_HOME: home, ...extra };
}

/**
 * A harness stand-in that stays up: a bash copy named like the harness, reading commands on
 * stdin and running each hook command the way harnesses do (`sh -c COMMAND`, the hook's JSON
 * on its stdin), one at a time, so a test can look at the registry between hooks.
 */
export class Harness implements AsyncDisposable {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  #n = 0;
  #done = false;

  private constructor(child: Deno.ChildProcess, readonly dir: string) {
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** `args` follow `-s`: bash takes them as its positional parameters (e.g. `app-server`). */
  static start(
    path: string,
    env: Record<string, string>,
    dir: string,
    args: string[] = [],
  ): Harness {
    const child = new Deno.Command(path, {
      args: ["-s", ...args],
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    return new Harness(child, dir);
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Runs one hook command; `input` is the JSON the harness hands the hook on stdin. */
  async hook(command: string, input = "{}"): Promise<CliResult> {
    const n = ++this.#n;
    const base = `${this.dir}/hook-${this.pid}-${n}`;
    Deno.writeTextFileSync(`${base}.in`, input);
    const line = `sh -c ${shq(command)} <${shq(`${base}.in`)} >${shq(`${base}.out`)} ` +
      `2>${shq(`${base}.err`)}; echo "__rc ${n} $?"\n`;
    await this.#writer.write(new TextEncoder().encode(line));
    const code = await this.#waitFor(n);
    return {
      code,
      stdout: Deno.readTextFileSync(`${base}.out`),
      stderr: Deno.readTextFileSync(`${base}.err`),
    };
  }

  async #waitFor(n: number): Promise<number> {
    const re = new RegExp(`^__rc ${n} (\\d+)$`, "m");
    for (;;) {
      const m = re.exec(this.#buffer);
      if (m) {
        this.#buffer = this.#buffer.slice(m.index + m[0].length);
        return Number(m[1]);
      }
      const { value, done } = await this.#reader.read();
      if (done) throw new Error("The harness stand-in exited while running a hook");
      this.#buffer += value;
    }
  }

  /** Ends the harness the normal way: its stdin closes and it exits. */
  async exit(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#writer.close().catch(() => {});
    await this.#child.status;
    await this.#reader.cancel().catch(() => {});
  }

  /** Ends it the crash way: SIGKILL, no end hook, then reaped. */
  async crash(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    try {
      this.#child.kill("SIGKILL");
    } catch { /* already gone */ }
    await this.#child.status;
    await this.#writer.close().catch(() => {});
    await this.#reader.cancel().catch(() => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.crash();
  }
}
