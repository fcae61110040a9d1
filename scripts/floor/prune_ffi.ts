/**
 * The Deno FFI floor for `roster prune`: prune.c's work, call for call, from Deno
 * (floor_ffi.ts): under the host directory's lock, every record read, its pid probed in /proc,
 * the dead ones removed and named on stdout. Run under the same `deno run` flags as roster.
 * Usage: deno run -A scripts/floor/prune_ffi.ts <host-dir> [proc-root]
 */
import {
  alive,
  bytes,
  hostDirFromArgs,
  lockExclusive,
  name,
  nameLength,
  Out,
  pidDigits,
  unlinkCurrent,
} from "./floor_ffi.ts";

const dir = hostDirFromArgs();
lockExclusive(dir.fd);
const out = new Out();
const indent = bytes("  ");
const dead = bytes(`  dead  ${dir.path}/`);
const newline = bytes("\n");
let removed = 0;
let kept = 0;
while (dir.nextRecord()) {
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
