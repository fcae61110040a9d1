/**
 * Where `register` finds the records its bounded cleanup examines, without listing the host
 * directory (a listing costs in proportion to the store: 96% of a register at 100,000
 * records). Two small files in the host directory hold record names (`<pid>`, or
 * `<pid>.<suffix>` for an ended record moved aside; `.json` left off) as lines, a queue made
 * of two stacks: `.sweep` is popped from its end, a few names a call; what was examined and
 * kept (still alive, or cannot tell) and every new record's name is pushed onto
 * `.sweep.next`; when `.sweep` runs dry, `.sweep.next` becomes it. So each record comes up
 * once per round, a round lasting about (records / pops per call) registrations, and a call
 * reads and writes a few hundred bytes whatever the store's size. `prune`, which reads the
 * whole directory anyway, rewrites `.sweep` with every record it kept, which compacts the
 * queue and brings in records no register has queued (a store written before the queue).
 *
 * The files are hints, never trusted: a name in them only names a record to re-read and
 * re-judge, a line that is not a record's name is dropped, and a file that is a link, not a regular
 * file or not ours is left alone (the cleanup is skipped). Every change happens under the
 * host directory's lock, pushes before the pop is cut off, so a crash can duplicate an entry
 * but never lose one. Registers push while holding the lock together (shared), each line
 * appended whole (O_APPEND); pops, the hand-over of `.sweep.next` and prune's rewrite hold it
 * alone.
 */
import { type ByteSink, readFully, writeAll } from "../fs/io.ts";
import { replaceAtomically } from "../fs/write.ts";
import { pause } from "../pause.ts";

export const SWEEP_NAME = ".sweep";
export const SWEEP_NEXT_NAME = ".sweep.next";

/** At most this many bytes a line: a pid (10 digits), a dot and a suffix (layout.ts), "\n". */
const LINE_MAX = 44;
const NAME_LINE = /^[1-9][0-9]{0,9}(?:\.[0-9a-z]{1,32})?$/;

const uid = Deno.build.os === "windows" ? null : Deno.uid();
const decoder = new TextDecoder();

/**
 * A queue file roster may use: a regular file of this user's, writable by no one else. Windows
 * has neither owners nor modes to check here (Deno reports 0o666 for every file there, which
 * turned every queue file away, so register's cleanup never ran); the private directory is
 * what guards it there.
 */
const usable = (info: Deno.FileInfo) =>
  info.isFile && (uid === null || (info.uid === uid && ((info.mode ?? 0) & 0o022) === 0));

/**
 * Opens one of the queue files, or null when it is missing or not a private file of ours.
 * Never through a link: a new file is created exclusively (O_EXCL refuses a link), and an
 * existing one is looked at (lstat), opened, and must be the file that was looked at. With
 * `append`, every write goes to the end (O_APPEND): registers holding the lock together each
 * add their line whole, none over another's.
 */
function openQueue(path: string, create: boolean, append = false): Deno.FsFile | null {
  // Read as well as write, always: opening a FIFO swapped in after the lstat write-only would
  // block until a reader came; read-write never blocks (the type is then refused on the handle).
  const mode = append ? { read: true, append: true } : { read: true, write: true };
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    if (!create) return null;
    try {
      return Deno.openSync(path, { ...mode, createNew: true, mode: 0o600 });
    } catch {
      // Created by another register just now: open that one (never through a link).
      return openQueue(path, false, append);
    }
  }
  if (!usable(info)) return null;
  // Where a queue file can be swapped between the look and the open (a drill's pause point).
  pause(
    "sweep:before-open",
    path.slice(0, Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"))),
  );
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, mode);
  } catch {
    return null;
  }
  try {
    const opened = file.statSync();
    if (usable(opened) && opened.ino === info.ino && opened.dev === info.dev) return file;
  } catch { /* fall through: unusable */ }
  file.close();
  return null;
}

/** Pops up to `limit` names off the end of the queue file; returns them and where to cut it. */
function readTail(file: Deno.FsFile, limit: number): { names: string[]; cut: number } {
  const size = file.statSync().size;
  const want = Math.min(size, limit * LINE_MAX + 1);
  const start = size - want;
  const buf = new Uint8Array(want);
  file.seekSync(start, Deno.SeekMode.Start);
  const off = readFully(file, buf);
  // From the end, whole lines only: the window's first line may start before it.
  const names: string[] = [];
  let cut = start + off;
  let end = off > 0 && buf[off - 1] === 0x0a ? off - 1 : off;
  while (names.length < limit) {
    let s = end;
    while (s > 0 && buf[s - 1] !== 0x0a) s--;
    if (s === 0 && start > 0) break;
    cut = start + s;
    const line = decoder.decode(buf.subarray(s, end));
    if (NAME_LINE.test(line)) names.push(line);
    if (s === 0) break;
    end = s - 1;
  }
  // No whole line in the window: a line longer than any pid, which can hold none. Drop it.
  if (cut === start + off && off > 0) cut = start;
  return { names, cut };
}

/** What the caller did with a popped name's record. */
export type Examined = "kept" | "removed" | "missing";

/**
 * One register's cleanup step, under the host lock: pops up to `limit` names, lets `examine`
 * re-read and judge each record (removing it if it is done with), and queues again the ones
 * it kept. Best effort: any failure leaves the queue as it was or with a duplicate, never with
 * a loss.
 */
export function sweep(
  dir: string,
  limit: number,
  examine: (name: string) => Examined,
): string[] {
  const current = `${dir}/${SWEEP_NAME}`;
  const next = `${dir}/${SWEEP_NEXT_NAME}`;
  let file = openQueue(current, false);
  if (file !== null && file.statSync().size === 0) {
    file.close();
    file = null;
  }
  if (file === null) {
    // The round is over: the pushed stack becomes the one to pop.
    try {
      Deno.renameSync(next, current);
      file = openQueue(current, false);
    } catch { /* nothing queued yet */ }
  }
  if (file === null) return [];
  const push: string[] = [];
  const popped: string[] = [];
  try {
    const tail = readTail(file, limit);
    const seen = new Set<string>();
    for (const name of tail.names) {
      if (seen.has(name)) continue;
      seen.add(name);
      popped.push(name);
      if (examine(name) === "kept") push.push(name);
    }
    // Pushed before the pop is cut off: a crash in between duplicates a name, never loses one.
    if (push.length > 0) append(next, push);
    file.truncateSync(tail.cut);
  } finally {
    file.close();
  }
  return popped;
}

/** Queues the names of records just created (under the host lock, shared), for later rounds. */
export function enqueue(dir: string, names: readonly string[]) {
  if (names.length > 0) append(`${dir}/${SWEEP_NEXT_NAME}`, names);
}

function append(path: string, names: readonly string[]) {
  const file = openQueue(path, true, true);
  if (file === null) return;
  try {
    writeAll(file, names.join("\n") + "\n");
  } finally {
    file.close();
  }
}

/**
 * Replaces `.sweep` with `names` (prune's view of every record it kept), written to a temp
 * file and renamed, under the host lock. `.sweep.next` stays: registers that ran between
 * prune's batches queued their names there.
 */
export function rewriteSweep(dir: string, names: Iterable<string>) {
  const fill = (sink: ByteSink) => {
    let chunk: string[] = [];
    for (const name of names) {
      chunk.push(`${name}\n`);
      if (chunk.length >= 8192) {
        writeAll(sink, chunk.join(""));
        chunk = [];
      }
    }
    writeAll(sink, chunk.join(""));
  };
  try {
    // One temp name: only the lock's holder writes it, and a killed prune's is reused, not left.
    replaceAtomically(`${dir}/${SWEEP_NAME}`, fill, {
      durable: false,
      temp: `${dir}/${SWEEP_NAME}.tmp`,
    });
  } catch { /* a hint: the queue as it was still names only records (sweep re-reads each) */ }
}
