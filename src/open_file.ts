/**
 * Opening and reading a file that must be a regular one without ever blocking on a FIFO or
 * device put in its place: the one opener beneath src/fs's careful reads and the Linux
 * backend's reads of /proc and /etc/machine-id (which src/process, below src/fs, needs too).
 */
import { decodeUtf8 } from "./utf8.ts";

/**
 * Opens `path` only as the regular file `judged` describes (the caller's lstat, or stat for a
 * link it follows; null: any regular file, for one just created), checked on the open handle.
 * A FIFO, device or other file swapped in between is closed unread and null is returned.
 */
export function openJudged(
  path: string,
  judged: Deno.FileInfo | null,
  options: Deno.OpenOptions,
): Deno.FsFile | null {
  const file = openWithoutBlocking(path, options, judged);
  try {
    const opened = file.statSync();
    const same = judged === null || (opened.ino === judged.ino && opened.dev === judged.dev);
    if (opened.isFile && same) return file;
  } catch (err) {
    file.close();
    throw err;
  }
  file.close();
  return null;
}

/**
 * Opens `path` so that a FIFO swapped in for the file never blocks. Deno has no O_NONBLOCK
 * (OpenOptions takes no flags), so the file is opened for reading and writing instead (such an
 * open never waits for a FIFO's other end, on Linux and the BSDs; nothing is written). A file
 * that may not be written is opened as asked: on a read-only file system nobody swaps files,
 * and a mode that forbids writing was set by the file's owner. A regular file `judged` shows
 * no one may write (/proc's files, /etc/machine-id) is opened as asked straight away: the
 * attempt would fail for all but root (a thrown error costs more than the read), and root
 * has no business opening it for writing. (Windows has no FIFOs.)
 */
function openWithoutBlocking(
  path: string,
  options: Deno.OpenOptions,
  judged: Deno.FileInfo | null,
): Deno.FsFile {
  if (Deno.build.os === "windows") return Deno.openSync(path, options);
  if (options.write || options.append) return Deno.openSync(path, { ...options, read: true });
  if (judged !== null && judged.isFile && ((judged.mode ?? 0o200) & 0o222) === 0) {
    return Deno.openSync(path, options);
  }
  try {
    return Deno.openSync(path, { ...options, read: true, write: true });
  } catch (err) {
    if (err instanceof Deno.errors.PermissionDenied || isReadOnlyFs(err)) {
      return Deno.openSync(path, options);
    }
    throw err;
  }
}

function isReadOnlyFs(err: unknown): boolean {
  return err instanceof Error && /read-only file system|EROFS|os error 30\b/i.test(err.message);
}

/** The most readRegularText reads by default: /proc's files and machine ids are far smaller. */
const MAX_TEXT = 1 << 20;
/** readRegularText's buffer: enough for /proc/self/status and most mountinfo tables. */
const TEXT_BUF = 16 * 1024;
let textBuf: Uint8Array | undefined;

/**
 * The text of the regular file at `path` (links followed: /proc/self is one), or null where
 * it is missing, unreadable, longer than `maxBytes`, or no regular file: a FIFO or device
 * bound over /etc/machine-id or a /proc file is never opened for reading, so no command
 * waits on one. Synchronous and cheap: the Linux backend reads these on every command's path
 * (procfs files show size 0, so the read goes to end of file, bounded).
 */
export function readRegularText(path: string, maxBytes = MAX_TEXT): string | null {
  try {
    const info = Deno.statSync(path);
    if (!info.isFile) return null;
    using file = openJudged(path, info, { read: true });
    if (file === null) return null;
    // One buffer kept for every read (a fresh 64 KiB one each time cost more than the
    // syscalls), doubled while a file fills it, up to one byte past the bound.
    let buf = textBuf ??= new Uint8Array(TEXT_BUF);
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > maxBytes) return null;
        const bigger = new Uint8Array(Math.min(buf.length * 2, maxBytes + 1));
        bigger.set(buf);
        buf = bigger;
      }
      const got = file.readSync(buf.subarray(n));
      if (got === null || got === 0) break;
      n += got;
    }
    return n > maxBytes ? null : decodeUtf8(buf.subarray(0, n));
  } catch {
    return null;
  }
}
