/** `roster man`: print the manual page roster(1) (generated: ../man.ts). */
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { manPage } from "../man.ts";

export function run(ctx: Context, _args: Parsed): number {
  const page = manPage();
  if (ctx.json) ctx.printJson({ page });
  else ctx.out(page.trimEnd());
  return 0;
}
