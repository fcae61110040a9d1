/**
 * Careful writes: atomic replacement (a fresh temp file in the same directory, then a
 * rename), durable unless asked otherwise, and exclusive creation that is never torn.
 */
import { ioError } from "../errors.ts";
import { type ByteSink, writeAll } from "./io.ts";

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
  replaceAtomically(path, (sink) => writeAll(sink, data), { durable, beforeRename, mode });
}

/** How replaceAtomically writes: see there. */
export interface ReplaceOptions {
  /** Flushed to disk before the rename (default true). */
  durable?: boolean;
  /** Called between the flush and the rename (a compare-and-swap's last look). */
  beforeRename?: () => void;
  /** The new file's mode exactly, not narrowed by the umask (default 0600). */
  mode?: number;
  /**
   * One fixed temp name instead of a unique one, for a writer that holds a lock: a killed
   * writer's file is then replaced by the next one's, not left behind.
   */
  temp?: string;
}

/**
 * Replaces `path` with what `fill` writes, never torn: `fill` writes a fresh temp file in the
 * same directory (writeTemp), which is then renamed over the target. On any failure the temp
 * file is removed and the old file is untouched.
 */
export function replaceAtomically(
  path: string,
  fill: (sink: ByteSink) => void,
  options: ReplaceOptions = {},
) {
  const tmp = writeTemp(path, fill, options.durable ?? true, options.mode, options.temp);
  try {
    options.beforeRename?.();
    Deno.renameSync(tmp, path);
  } catch (err) {
    removeQuietly(tmp);
    throw ioError("Could not write", path, err);
  }
}

let tempCounter = 0;

/**
 * Writes a fresh temp file beside `path` with `fill` and returns its name (`temp`, or a
 * unique one). The file is created O_CREAT|O_EXCL (createNew), which never follows a link at
 * the name, with its final `mode` (createWithMode: a mode set afterwards by path would follow
 * a link another user swapped in at the temp name of a shared directory, issue 24 item 2), so
 * nothing is done to it by name before the rename.
 */
function writeTemp(
  path: string,
  fill: (sink: ByteSink) => void,
  durable: boolean,
  mode = 0o600,
  temp?: string,
): string {
  // Unique enough with createNew (O_EXCL) behind it; crypto would cost ~1 ms to load.
  const fresh = () =>
    temp ??
      `${path}.${Deno.pid}.${(++tempCounter).toString(36)}${
        Math.floor(Math.random() * 2 ** 32).toString(36)
      }.tmp`;
  let tmp = fresh();
  // A fixed name may hold a killed writer's file (or anything): removed, never opened.
  if (temp !== undefined) removeQuietly(tmp);
  try {
    const made = createWithMode(tmp, mode, fresh);
    tmp = made.path;
    using file = made.file;
    fill(file);
    if (durable) file.syncDataSync();
  } catch (err) {
    removeQuietly(tmp);
    throw ioError("Could not write", path, err);
  }
  return tmp;
}

/**
 * A new file (O_EXCL: never through a link) at `path` whose mode is `mode` exactly, not
 * narrowed by the umask, and the name it was made at. The umask is cleared only when it did
 * narrow the mode (umask 077 and a 0644 textfile): it is the process's, so a thread creating a
 * file or a child meanwhile would get none (a test runner's other tests: a unit file written
 * 0666, a shell whose files were all writable by others). The first file, made under the
 * umask, is then removed unused and the file made again at `another()` name: in a shared
 * directory another user who saw the first name could take it between the two.
 */
function createWithMode(
  path: string,
  mode: number,
  another: () => string,
): { file: Deno.FsFile; path: string } {
  if (Deno.build.os === "windows") {
    return { file: Deno.openSync(path, { write: true, createNew: true }), path };
  }
  const file = Deno.openSync(path, { write: true, createNew: true, mode });
  let narrowed: boolean;
  try {
    narrowed = ((file.statSync().mode ?? mode) & 0o777) !== (mode & 0o777);
  } catch (err) {
    file.close();
    throw err;
  }
  if (!narrowed) return { file, path };
  file.close();
  removeQuietly(path);
  const again = another();
  const umask = Deno.umask(0);
  try {
    return { file: Deno.openSync(again, { write: true, createNew: true, mode }), path: again };
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
  const tmp = writeTemp(path, (sink) => writeAll(sink, data), true);
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
