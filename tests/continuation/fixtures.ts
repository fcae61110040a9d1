/** Small helpers the ledger's unit tests share. */
import { assert } from "../assert.ts";
import { Judge } from "../../src/registry/liveness.ts";
import { processBackend } from "../../src/process/mod.ts";

/** A judge for this host, as a command gets one. */
export async function testJudge(): Promise<Judge> {
  const b = await processBackend();
  return new Judge(b, { host: Deno.hostname(), bootId: b.bootId() });
}

export function mkfifo(path: string) {
  const r = new Deno.Command("mkfifo", { args: [path] }).outputSync();
  assert(r.success, "mkfifo");
}

/** Writes `text` to `path` with `mode`, as a hand-edited or hostile file would be. */
export const put = (path: string, text: string, mode = 0o600) => {
  Deno.writeTextFileSync(path, text);
  Deno.chmodSync(path, mode);
};

export function iso() {
  return new Date().toISOString();
}
