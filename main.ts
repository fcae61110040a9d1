/**
 * roster's entry point: parse, dispatch, and turn every error into an exit code in this
 * one place. Command implementations load lazily, so each call pays only for its own code.
 */
import { parseArgs } from "./src/cli/args.ts";
import { Context } from "./src/cli/context.ts";
import { writeAll } from "./src/fs/io.ts";
import { printable, printableLines } from "./src/cli/terminal.ts";
import { RosterError, UsageError } from "./src/errors.ts";
import { lazyModule } from "./src/lazy.ts";

/** Loaded only when asked for (src/lazy.ts). */
const versionModule = lazyModule<typeof import("./src/version.ts")>(
  "./src/version.ts",
  (s) => import(s),
);
const specModule = lazyModule<typeof import("./src/cli/spec.ts")>(
  "./src/cli/spec.ts",
  (s) => import(s),
);
const helpModule = lazyModule<typeof import("./src/cli/help.ts")>(
  "./src/cli/help.ts",
  (s) => import(s),
);

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const args = parseArgs(argv);
    if (args.has("version")) {
      const { VERSION } = await versionModule();
      const text = args.has("json")
        ? JSON.stringify({ name: "roster", version: VERSION })
        : `roster ${VERSION}`;
      writeAll(Deno.stdout, `${text}\n`);
      return 0;
    }
    if (args.command === null && !args.has("help") && argv.length > 0) {
      const { COMMANDS } = await specModule();
      throw new UsageError(
        `Missing command: expected one of ${COMMANDS.map((c) => c.name).join(", ")}`,
      );
    }
    if (args.has("help") || args.command === null) {
      const help = await helpModule();
      writeAll(Deno.stdout, args.command ? help.commandHelp(args.command) : help.mainHelp());
      return 0;
    }
    const mod = await args.command.load();
    return await mod.run(new Context(args), args);
  } catch (err) {
    // The reader of --help or --version went away (`roster --help | head -1`): nothing is
    // wrong. Commands keep their exit code when theirs goes away (cli/context.ts).
    if (err instanceof Deno.errors.BrokenPipe) return 0;
    if (err instanceof RosterError) {
      tell(err.message);
      return err.exitCode;
    }
    if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
      tell(`Permission denied: ${(err as Error).message}`);
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    tell(`Unexpected failure: ${message}`);
    if (debugging()) writeAll(Deno.stderr, printableLines(`${(err as Error)?.stack}\n`));
    return 1;
  }
}

/** One line on stderr, escaped (paths and values in messages come from others). */
function tell(message: string) {
  try {
    writeAll(Deno.stderr, `roster: ${printable(message)}\n`);
  } catch { /* no one is reading stderr: the exit code still says it */ }
}

function debugging(): boolean {
  try {
    return Boolean(Deno.env.get("ROSTER_DEBUG"));
  } catch {
    return false;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
