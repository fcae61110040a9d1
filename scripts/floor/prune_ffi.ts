/**
 * The Deno FFI floor for `roster prune`: prune.c's work, call for call, from Deno
 * (floor_ffi.ts): under the host directory's lock, every record read, its pid probed in /proc,
 * the dead ones removed and named on stdout. Run under the same `deno run` flags as roster.
 * Usage: deno run -A scripts/floor/prune_ffi.ts <host-dir> [proc-root]
 */
import {
  alive,
  bytes,
  Dir,
  lockExclusive,
  name,
  nameLength,
  Out,
  pidDigits,
  readRecord,
  unlinkCurrent,
  useProc,
} from "./floor_ffi.ts";

const [dirPath, proc] = Deno.args;
if (dirPath === undefined) Deno.exit(2);
if (proc !== undefined) useProc(proc);
const dir = new Dir(dirPath);
lockExclusive(dir.fd);
const out = new Out();
const indent = bytes("  ");
const dead = bytes(`  dead  ${dirPath}/`);
const newline = bytes("\n");
let removed = 0;
let kept = 0;
for (let pid = dir.next(); pid !== -1; pid = dir.next()) {
  if (pid === 0 || !readRecord(dir.fd)) continue;
  if (alive()) {
    kept++;
  } else if (unlinkCurrent(dir.fd)) {
    removed++;
    out.bytes(indent);
    out.bytes(name, pidDigits);
    out.bytes(dead);
    out.bytes(name, nameLength);
    out.bytes(newline);
  }
}
out.bytes(bytes(`Removed ${removed} records; kept ${kept}.\n`));
out.flush();
dir.close();
