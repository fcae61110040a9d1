/**
 * The Deno FFI floor for `roster list --all --json`: list.c's work, call for call, from Deno
 * (floor_ffi.ts): every record read, its pid probed in /proc, the record written out with its
 * liveness. Run under the same `deno run` flags as roster.
 * Usage: deno run -A scripts/floor/list_ffi.ts <host-dir> [proc-root]
 */
import {
  alive,
  bytes,
  Dir,
  name,
  nameLength,
  Out,
  readRecord,
  record,
  recordLength,
  useProc,
} from "./floor_ffi.ts";

const [dirPath, proc] = Deno.args;
if (dirPath === undefined) Deno.exit(2);
if (proc !== undefined) useProc(proc);
const dir = new Dir(dirPath);
const out = new Out();
const aliveLine = bytes(`"liveness": "alive", "path": "${dirPath}/`);
const deadLine = bytes(`"liveness": "dead", "path": "${dirPath}/`);
const lineEnd = bytes('"\n');
out.bytes(bytes("[\n"));
for (let pid = dir.next(); pid !== -1; pid = dir.next()) {
  if (pid === 0 || !readRecord(dir.fd)) continue;
  const live = alive();
  out.bytes(record, recordLength);
  out.bytes(live ? aliveLine : deadLine);
  out.bytes(name, nameLength);
  out.bytes(lineEnd);
}
out.bytes(bytes("]\n"));
out.flush();
dir.close();
