/**
 * Run by ps_test.ts with only `--allow-run=ps` (the permission the macOS and FreeBSD binaries
 * have): prints what the ps backend and FreeBSD's sysctl-failure check say about each pid.
 */
import { psBackend } from "../../src/process/ps.ts";
import { confirmSysctlFailure } from "../../src/process/freebsd.ts";

const b = psBackend();
const out: Record<string, string> = {};
for (const arg of Deno.args) {
  const pid = Number(arg);
  out[`ps ${arg}`] = b.probe(pid).kind;
  out[`confirm ${arg}`] = confirmSysctlFailure(pid).kind;
}
console.log(JSON.stringify(out));
