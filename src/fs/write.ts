/**
 * Careful writes: atomic replacement (a fresh temp file in the same directory, then a
 * rename), durable unless asked otherwise, and exclusive creation that is never torn.
 */
import { ioError } from "../errors.ts";

/**
 * What writeTemp appends to a target's name: `.<writer pid>.<unique>.tmp`. A feature that
 * sweeps crashed writers' temp files matches its own names followed by this.
 */
export const TEMP_SUFFIX = String.raw`\.[0-9]+\.[0-9a-z]+\.tmp`;

/**
 * Writes a file atomically: a fresh temp file in the same directory (created exclusively,
 * with `mode`, 0600 unless it says otherwise), flushed to disk unless `durable` is false, then
 * renamed over the target.
 * On any failure the temp file is removed and the old file is untouched.
 */
export function writeAtomic(
  path: string,
  data: string,
  durable = true,
  beforeRename?: () => void,
  mode = 0o600,
) {
  const tmp = writeTemp(path, data, durable, mode);
  try {
    beforeRename?.();
    Deno.renameSync(tmp, path);
  } catch (err) {
    removeQuietly(tmp);
    throw ioError("Could not write", path, err);
  }
}

let tempCounter = 0;

/**
 * Writes `data` to a fresh temp file beside `path` and returns its name. The file is created
 * O_CREAT|O_EXCL (createNew), which never follows a link at the name, with its final `mode`
 * (the umask cleared for the open: a mode set afterwards by path would follow a link another
 * user swapped in at the temp name of a shared directory, issue 24 item 2), so nothing is done
 * to it by name before the rename.
 */
function writeTemp(path: string, data: string, durable: boolean, mode = 0o600): string {
  // Unique enough with createNew (O_EXCL) behind it; crypto would cost ~1 ms to load.
  const tmp = `${path}.${Deno.pid}.${(++tempCounter).toString(36)}${
    Math.floor(Math.random() * 2 ** 32).toString(36)
  }.tmp`;
  try {
    using file = createWithMode(tmp, mode);
    const bytes = new TextEncoder().encode(data);
    let off = 0;
    while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
    if (durable) file.syncDataSync();
  } catch (err) {
    removeQuietly(tmp);
    throw ioError("Could not write", path, err);
  }
  return tmp;
}

/** A new file (O_EXCL: never through a link) whose mode is `mode` exactly, not narrowed by the umask. */
function createWithMode(path: string, mode: number): Deno.FsFile {
  if (Deno.build.os === "windows") return Deno.openSync(path, { write: true, createNew: true });
  const umask = Deno.umask(0);
  try {
    return Deno.openSync(path, { write: true, createNew: true, mode });
  } finally {
    Deno.umask(umask);
  }
}

/** Removes a file, saying nothing when it is already gone (or cannot be removed). */
export function removeQuietly(path: string) {
  try {
    Deno.removeSync(path);
  } catch { /* already gone */ }
}

/**
 * Creates `path` holding `data`, exclusively and never torn: a fully written, flushed temp
 * file is hard-linked to the name, which fails when the name exists. Returns the new file's
 * identity, or null when the name was taken.
 */
export function createExclusive(path: string, data: string): { ino: number; dev: number } | null {
  const tmp = writeTemp(path, data, true);
  try {
    const info = Deno.lstatSync(tmp);
    Deno.linkSync(tmp, path);
    return { ino: info.ino ?? 0, dev: info.dev };
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return null;
    throw ioError("Could not create", path, err);
  } finally {
    removeQuietly(tmp);
  }
}
