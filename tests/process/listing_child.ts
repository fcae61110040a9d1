/**
 * Run by tests/process/listing_test.ts inside a time namespace: takes the process-table listing
 * after GONE gone pids, then starts a process and prints, as JSON, what exitedBefore says of it
 * and of one that exited before the listing. Usage: listing_child.ts GONE
 */
import { linuxBackend } from "../../src/process/linux.ts";
import { libc } from "../../src/process/libc.ts";

libc();
const b = linuxBackend();
const token = (pid: number) => {
  const p = b.probe(pid);
  if (p.kind !== "exists" || p.info.startToken === null) throw new Error(`no token for ${pid}`);
  return p.info.startToken;
};
const spawn = () =>
  new Deno.Command("sleep", { args: ["60"], stdout: "null", stderr: "null" }).spawn();
const early = spawn();
const earlyToken = token(early.pid);
early.kill("SIGKILL");
await early.status;
await new Promise((r) => setTimeout(r, 1_200));
const pidMax = Number(Deno.readTextFileSync("/proc/sys/kernel/pid_max").trim());
for (let i = 1; i <= Number(Deno.args[0]); i++) b.probe(pidMax + i);
const exited = b.exitedBefore(early.pid, earlyToken);
const late = spawn();
const lateVerdict = b.exitedBefore(late.pid, token(late.pid));
late.kill("SIGKILL");
await late.status;
console.log(JSON.stringify({ exited, late: lateVerdict }));
