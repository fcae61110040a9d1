/**
 * The entry point of `deno task roster`: deno task runs a task in the repository's root, so this
 * moves back to where the task was started (INIT_CWD) before running roster, and `register`
 * records the caller's directory, not the checkout's.
 */
const init = Deno.env.get("INIT_CWD");
if (init) {
  Deno.env.delete("INIT_CWD");
  try {
    Deno.chdir(init);
  } catch { /* a directory that went away: stay where the task put us */ }
}
const { main } = await import("../main.ts");
Deno.exit(await main(Deno.args));
