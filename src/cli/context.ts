/**
 * What every command gets: the resolved home, output helpers that keep machine output on
 * stdout and messages on stderr, and the process backend and host identity, each made once.
 */
import { UsageError } from "../errors.ts";
import { writeAll } from "../fs/io.ts";
import { isAbsolute, SEP } from "../fs/path.ts";
import { processBackend } from "../process/mod.ts";
import { hostIdentity, hostKey } from "../identity/identity.ts";
import { LivenessJudge } from "../identity/liveness.ts";
import type { ProcessBackend } from "../process/types.ts";
import { bootHistoryPath, readBoots } from "../registry/boots.ts";
import { checkHome, denoEnv, resolveHome } from "../registry/home.ts";
import { DECLARED_SESSION_VARS } from "../registry/session_id.ts";
import { envVar } from "../env.ts";
import type { Parsed } from "./args.ts";
import { printableLines, terminalJson } from "./terminal.ts";
import { encodeUtf8 } from "../utf8.ts";

/**
 * Writes a line for a person or a program. A reader that has gone away (`roster check X |
 * true`, `list | head -1`) is no failure: later writes are dropped, and the command still
 * returns the exit code that carries its answer.
 */
class Output {
  #gone = false;
  constructor(readonly fd: typeof Deno.stdout | typeof Deno.stderr) {}

  /** Whether the reader has gone away. */
  get gone(): boolean {
    return this.#gone;
  }

  write(text: string) {
    this.bytes(encodeUtf8(text.endsWith("\n") ? text : text + "\n"));
  }

  /** Bytes as they are (streamed output: `list` and `prune` write in chunks). */
  bytes(bytes: Uint8Array) {
    if (this.#gone) return;
    try {
      writeAll(this.fd, bytes);
    } catch (err) {
      if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
      this.#gone = true;
    }
  }
}

/**
 * The hostname, or "localhost" where it is empty (a container or namespace set up without
 * one): an empty host would name a place directory no record of it belongs in.
 */
function hostname(): string {
  return Deno.hostname() || "localhost";
}

export class Context {
  readonly json: boolean;
  readonly stdout = new Output(Deno.stdout);
  readonly stderr = new Output(Deno.stderr);
  #home: string | undefined;
  #host: string | undefined;
  #judge: Promise<LivenessJudge> | undefined;

  constructor(readonly args: Parsed) {
    this.json = args.has("json");
  }

  get home(): string {
    if (this.#home === undefined) {
      const home = resolveHome(this.args.get("home"), denoEnv());
      this.#home = checkHome({ ...home, path: absolutePath(home.path, home.source ?? "home") });
    }
    return this.#home;
  }

  /**
   * The host key (hostKey). On macOS it needs the backend's machine id, so it is known only
   * once judge() has resolved; every command reads it after that.
   */
  get host(): string {
    if (this.#host === undefined && Deno.build.os === "darwin") {
      throw new Error("The host key was read before the process backend was loaded");
    }
    return this.#host ??= hostname();
  }

  backend(): Promise<ProcessBackend> {
    return processBackend();
  }

  /** One judge per call: the host identity is read once, and each pid once (judge.probe). */
  judge(): Promise<LivenessJudge> {
    return this.#judge ??= this.backend().then((b) => {
      this.#host ??= hostKey(Deno.build.os, hostname(), b.machineId?.() ?? null);
      let boots: ReadonlySet<string> | null | undefined;
      const pastBoots = () => {
        if (boots === undefined) {
          const read = readBoots(bootHistoryPath());
          boots = read === null ? null : new Set(read);
        }
        return boots;
      };
      const bootStartedMs = () => b.bootTimeMs?.() ?? null;
      const here = { ...hostIdentity(b, this.#host), pastBoots, bootStartedMs };
      return new LivenessJudge(b, here, declaredSessions());
    });
  }

  /**
   * Text for a person on stdout, escaped line by line (terminal.ts); `escaped`: text already
   * made printable by its caller (a table with colours).
   */
  out(text: string, escaped = false) {
    this.stdout.write(escaped ? text : printableLines(text));
  }

  /** JSON on stdout: the same JSON, with nothing a terminal acts on (terminal.ts). */
  printJson(value: unknown) {
    this.stdout.write(terminalJson(JSON.stringify(value, null, 2)));
  }

  /** A message on stderr, escaped line by line; `escaped`: made printable by its caller. */
  err(text: string, escaped = false) {
    this.stderr.write(escaped ? text : printableLines(text));
  }
}

/**
 * `path` made absolute against the current directory (a usage error naming `what` when that
 * cannot be read): every later check walks the path from `/`.
 */
export function absolutePath(path: string, what: string): string {
  if (isAbsolute(path)) return path;
  let cwd: string;
  try {
    cwd = Deno.cwd();
  } catch {
    throw new UsageError(
      `Invalid ${what}: a relative path, and the current directory cannot be read: ${path}`,
    );
  }
  return `${cwd}${SEP}${path}`;
}

/** A directory given on the command line, as its real path; a usage error otherwise. */
export function realDir(value: string, flag: string): string {
  try {
    const real = Deno.realPathSync(value);
    if (!Deno.statSync(real).isDirectory) throw new Deno.errors.NotADirectory();
    return real;
  } catch (err) {
    const why = err instanceof Deno.errors.NotFound
      ? "no such directory"
      : err instanceof Deno.errors.NotADirectory
      ? "not a directory"
      : "cannot be read";
    throw new UsageError(`Invalid ${flag}: ${why}: ${value}`);
  }
}

/** The roster that writes a record: its executable, or under `deno run` the script it runs. */
export function registrarPath(): string {
  const exe = Deno.execPath();
  // Under `deno run` the executable is deno itself: name the script instead. (String work,
  // not new URL(): the URL extension costs start-up time to load.)
  const main = Deno.mainModule;
  if (/[\\/]deno(\.exe)?$/.test(exe) && main.startsWith("file://")) {
    return decodeURIComponent(main.slice(Deno.build.os === "windows" ? 8 : 7));
  }
  return exe;
}

/**
 * The session ids the caller's harnesses declare to it ($CODEX_THREAD_ID, ...): the sessions it
 * runs inside, which `list` recognises from a sandbox (identity/liveness.ts ownSessionVerdict).
 * A value that is not UTF-8 declares nothing.
 */
function declaredSessions(): Set<string> {
  const ids = new Set<string>();
  for (const name of DECLARED_SESSION_VARS) {
    try {
      const v = envVar(name);
      if (v) ids.add(v);
    } catch { /* not UTF-8: no session id */ }
  }
  return ids;
}
