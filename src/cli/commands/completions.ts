/** `roster completions bash|zsh|fish|powershell`: print a completion script (generated: ../completions.ts). */
import type { Parsed } from "../args.ts";
import { script, type Shell } from "../completions.ts";
import type { Context } from "../context.ts";

export function run(ctx: Context, args: Parsed): number {
  // The parser has checked it against the command table's choices.
  const shell = args.positionals[0] as Shell;
  const text = script(shell);
  if (ctx.json) ctx.printJson({ shell, script: text });
  else ctx.out(text);
  return 0;
}
