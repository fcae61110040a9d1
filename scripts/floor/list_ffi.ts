/**
 * The Deno FFI floor for `roster list --all --json`: list.c's work, call for call, from Deno
 * (floor_ffi.ts): every record read, its pid probed in /proc, the record written out with its
 * liveness. Run under the same `deno run` flags as roster.
 * Usage: deno run -A scripts/floor/list_ffi.ts <host-dir> [proc-root]
 */
import {
  alive,
  bytes,
  hostDirFromArgs,
  name,
  nameLength,
  Out,
  record,
  recordLength,
} from "./floor_ffi.ts";

const dir = hostDirFromArgs();
const out = new Out();
const aliveLine = bytes(`"liveness": "alive", "path": "${dir.path}/`);
const deadLine = bytes(`"liveness": "dead", "path": "${dir.path}/`);
const lineEnd = bytes('"\n');
out.bytes(bytes("[\n"));
while (dir.nextRecord()) {
  const live = alive();
  out.bytes(record, recordLength);
  out.bytes(live ? aliveLine : deadLine);
  out.bytes(name, nameLength);
  out.bytes(lineEnd);
}
out.bytes(bytes("]\n"));
out.flush();
dir.close();
