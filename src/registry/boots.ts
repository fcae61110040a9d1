/**
 * The boots this machine has run roster in (issue 24 item 7): a small file on the machine's own
 * disk, never in the home, which clones of one VM image share over NFS with the same hostname
 * and machine id. A record of another boot is proven this machine's past only by this file.
 */
import { envVar } from "../env.ts";
import { writeAll } from "../fs/io.ts";
import { isAbsolute } from "../fs/path.ts";
import { openRegular, readSmallFile } from "../fs/read.ts";
import { createExclusive, writeAtomic } from "../fs/write.ts";

/** The most boots the file keeps; past it, the older half is dropped. */
const MAX_BOOTS = 64;
const BOOT_LINE = /^[!-~]{1,64}$/;

/**
 * Where the file is: `$ROSTER_BOOT_HISTORY`, else `/var/tmp/roster-<uid>.boots` (local, and
 * kept across reboots, which /tmp and /run are not); null where there are no boot ids, or
 * where the variable names a relative path, which would be another file in each directory a
 * hook runs in (no history: a past boot reads unproven, never dead; doctor says why).
 */
export function bootHistoryPath(): string | null {
  const given = envVar("ROSTER_BOOT_HISTORY");
  if (given) return isAbsolute(given) ? given : null;
  return Deno.build.os === "linux" ? `/var/tmp/roster-${Deno.uid()}.boots` : null;
}

/** Why this machine has no usable boot history: doctor words it. */
export type BootHistoryProblem =
  | { relative: string }
  | { path: string; problem: string };

/**
 * For doctor: the variable names a relative path, or the file is not a private regular file of
 * this user's (one another local user made first in the shared /var/tmp, a link, a FIFO); null
 * when it is usable or simply not written yet.
 */
export function bootHistoryProblem(): BootHistoryProblem | null {
  const given = envVar("ROSTER_BOOT_HISTORY");
  if (given && !isAbsolute(given)) return { relative: given };
  const path = bootHistoryPath();
  const file = path === null ? null : readSmallFile(path, MAX_BOOTS * 80);
  return file === null || file.ok ? null : { path: path!, problem: file.problem };
}

/** The boot ids in the file, oldest first; null when it is missing or not a private file of ours. */
export function readBoots(path: string | null): string[] | null {
  if (path === null) return null;
  const file = readSmallFile(path, MAX_BOOTS * 80);
  if (file === null || !file.ok) return null;
  return bootLines(file.value);
}

/** The boot ids of the file's text, one a line; anything else in it is ignored. */
const bootLines = (text: string) => text.split("\n").filter((l) => BOOT_LINE.test(l));

/**
 * Adds `bootId` to the file when it is not there yet (register calls it before it writes a
 * record, so every record's boot is in it). Best effort: a file that is not ours is left
 * alone, never written through a link.
 */
export function noteBoot(path: string | null, bootId: string | null) {
  if (path === null || bootId === null || !BOOT_LINE.test(bootId)) return;
  try {
    const file = readSmallFile(path, MAX_BOOTS * 80);
    if (file !== null && !file.ok) return;
    const boots = file === null ? [] : bootLines(file.value);
    if (boots.includes(bootId)) return;
    if (file === null && createExclusive(path, `${bootId}\n`) !== null) return;
    if (boots.length >= MAX_BOOTS) {
      writeAtomic(path, [...boots.slice(-MAX_BOOTS / 2), bootId].join("\n") + "\n", false);
      return;
    }
    using handle = openRegular(path, "boot history", { append: true });
    if (handle !== null) writeAll(handle, `${bootId}\n`);
  } catch { /* best effort: a boot not noted reads as unproven, never as dead */ }
}
