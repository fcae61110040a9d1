/**
 * What every command gets: the resolved home, output helpers that keep machine output on
 * stdout and messages on stderr, and the process backend and host identity, each made once.
 */
import { UsageError } from "../errors.ts";
import { processBackend } from "../process/mod.ts";
import { hostIdentity } from "../identity/identity.ts";
import { LivenessJudge } from "../identity/liveness.ts";
import type { ProcessBackend } from "../process/types.ts";
import { checkHome, denoEnv, resolveHome } from "../registry/home.ts";
import type { Parsed } from "./args.ts";

const encoder = new TextEncoder();

export function writeAll(fd: typeof Deno.stdout | typeof Deno.stderr, text: string) {
  const bytes = encoder.encode(text);
  let off = 0;
  while (off < bytes.length) off += fd.writeSync(bytes.subarray(off));
}

export class Context {
  readonly json: boolean;
  #home: string | undefined;
  #host: string | undefined;
  #judge: Promise<LivenessJudge> | undefined;

  constructor(readonly args: Parsed) {
    this.json = args.has("json");
  }

  get home(): string {
    return this.#home ??= checkHome(resolveHome(this.args.get("home"), denoEnv()));
  }

  get host(): string {
    return this.#host ??= Deno.hostname();
  }

  backend(): Promise<ProcessBackend> {
    return processBackend();
  }

  /** One judge per call: the host identity is read once, and each pid once (judge.probe). */
  judge(): Promise<LivenessJudge> {
    return this.#judge ??= this.backend().then((b) =>
      new LivenessJudge(b, hostIdentity(b, this.host))
    );
  }

  out(text: string) {
    writeAll(Deno.stdout, text.endsWith("\n") ? text : text + "\n");
  }

  printJson(value: unknown) {
    this.out(JSON.stringify(value, null, 2));
  }

  err(text: string) {
    writeAll(Deno.stderr, text.endsWith("\n") ? text : text + "\n");
  }
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
