/**
 * roster's entry point: parse, dispatch, and turn every error into an exit code in this
 * one place. Command implementations load lazily, so each call pays only for its own code.
 */
import { parseArgs } from "./src/cli/args.ts";
import { Context, writeAll } from "./src/cli/context.ts";
import { RosterError, UsageError } from "./src/errors.ts";

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const args = parseArgs(argv);
    if (args.has("version")) {
      const { VERSION } = await import("./src/version.ts");
      const text = args.has("json")
        ? JSON.stringify({ name: "roster", version: VERSION })
        : `roster ${VERSION}`;
      writeAll(Deno.stdout, `${text}\n`);
      return 0;
    }
    if (args.command === null && !args.has("help") && argv.length > 0) {
      const { COMMANDS } = await import("./src/cli/spec.ts");
      throw new UsageError(
        `Missing command: expected one of ${COMMANDS.map((c) => c.name).join(", ")}`,
      );
    }
    if (args.has("help") || args.command === null) {
      const help = await import("./src/cli/help.ts");
      writeAll(Deno.stdout, args.command ? help.commandHelp(args.command) : help.mainHelp());
      return 0;
    }
    const mod = await args.command.load();
    return await mod.run(new Context(args), args);
  } catch (err) {
    // The reader went away (`roster list | head -1`): nothing is wrong, there is no one to tell.
    if (err instanceof Deno.errors.BrokenPipe) return 0;
    if (err instanceof RosterError) {
      writeAll(Deno.stderr, `roster: ${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
      writeAll(Deno.stderr, `roster: Permission denied: ${(err as Error).message}\n`);
      return 1;
    }
    const message = err instanceof Error ? err.message : String(err);
    writeAll(Deno.stderr, `roster: Unexpected failure: ${message}\n`);
    if (Deno.env.get("ROSTER_DEBUG")) writeAll(Deno.stderr, `${(err as Error)?.stack}\n`);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
