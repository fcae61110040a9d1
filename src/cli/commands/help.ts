/** `roster help [COMMAND]`: the same text as `roster --help` and `roster COMMAND --help`. */
import { UsageError } from "../../errors.ts";
import { nearest, type Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { commandHelp, mainHelp } from "../help.ts";
import { COMMANDS } from "../spec.ts";

export function run(ctx: Context, args: Parsed): number {
  const [name] = args.positionals;
  if (name === undefined) {
    ctx.out(mainHelp());
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (cmd === undefined) {
    const near = nearest(name, COMMANDS.map((c) => c.name));
    throw new UsageError(
      `Unknown command: ${name}` + (near ? ` (did you mean ${near}?)` : "") +
        ". Run 'roster --help' for the list",
    );
  }
  ctx.out(commandHelp(cmd));
  return 0;
}
