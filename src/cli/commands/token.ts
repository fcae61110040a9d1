/** `roster token PID` prints a process's start token; `--verify PID TOKEN` checks one. */
import { CannotTellError, NoSuchProcessError, UsageError } from "../../errors.ts";
import { EXIT } from "../../exit.ts";
import { parsePid } from "../../identity/pid.ts";
import { formatToken, type TokenVerdict, verifyToken } from "../../identity/token.ts";
import { asProcess, isGone } from "../../process/types.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";

function tokenExitCode(v: TokenVerdict): number {
  return v === "same" ? EXIT.OK : v === "unknown" ? EXIT.UNKNOWN : EXIT.DEAD;
}

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const verify = args.has("verify");
  const [pidText, given] = args.positionals;
  if (verify && given === undefined) {
    throw new UsageError(
      "Missing TOKEN for token --verify. Usage: roster token --verify PID TOKEN",
    );
  }
  if (!verify && given !== undefined) {
    throw new UsageError(
      `Unexpected argument for token: ${given} (did you mean --verify?). ` +
        "Usage: roster token PID | roster token --verify PID TOKEN",
    );
  }
  const pid = parsePid(pidText, "PID");
  if (verify && (given === "" || given.length > 512)) {
    throw new UsageError(
      `Invalid TOKEN: expected what 'roster token PID' printed, got ${JSON.stringify(given)}`,
    );
  }
  const backend = await ctx.backend();
  const probe = asProcess(backend.probe(pid));
  const bootId = backend.bootId();
  if (verify) {
    const v = verifyToken(given, probe, bootId, (a, b) => backend.compareTokens(a, b));
    if (ctx.json) ctx.printJson({ pid, token: given, verdict: v });
    return tokenExitCode(v);
  }
  const gone = isGone(probe);
  if (gone || probe.kind !== "exists" || probe.info.startToken === null) {
    // JSON readers get an answer too: a null token and why, besides the exit code.
    if (ctx.json) {
      ctx.printJson({
        pid,
        token: null,
        start_token: null,
        boot_id: bootId,
        process_started_at: null,
        state: gone ? "gone" : "unknown",
      });
    }
    if (gone) throw new NoSuchProcessError(pid);
    throw new CannotTellError(`Cannot read the start token of process: ${pid}`);
  }
  const printed = formatToken(probe.info.startToken, bootId);
  if (ctx.json) {
    const started = probe.info.startedAtMs;
    ctx.printJson({
      pid,
      token: printed,
      start_token: probe.info.startToken,
      boot_id: bootId,
      process_started_at: started === null ? null : new Date(started).toISOString(),
      state: "running",
    });
  } else ctx.out(printed);
  return 0;
}
