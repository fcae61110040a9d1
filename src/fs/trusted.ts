/**
 * Directories that no other user can rewrite, checked from `/` down and created one component
 * at a time without following links; and opens that never follow a link at the last component
 * and never block on a FIFO.
 *
 * Deno has no openat(2), so a path is re-resolved by the kernel on every call. That is safe
 * only when no other user can change any directory on it: then what was checked stays what is
 * used. So every directory from `/` to the store must be owned by root or the caller, and one
 * that others may write to must be sticky (like /tmp), with the entry on the path owned by
 * root or the caller (the sticky bit keeps others from renaming or removing it). A link on the
 * way is followed only when root or the caller owns it (in a checked directory, nobody else
 * can replace it), and its target is checked the same way. Below the root (the home or a
 * ledger) every directory must be the caller's own and is never a link.
 */
import { RosterError } from "../errors.ts";

const WINDOWS = Deno.build.os === "windows";
const ME = WINDOWS ? -1 : Deno.uid();
const SEP = WINDOWS ? "\\" : "/";
const MAX_LINKS = 40;

/** A trusted directory could not be had: one line, exit 1. */
export class UntrustedError extends RosterError {
  constructor(message: string) {
    super(message);
    this.name = "UntrustedError";
  }
}

/** What an open found instead of a regular file (a link, FIFO, device, directory...). */
export class NotRegularError extends Error {
  constructor(readonly problem: string) {
    super(problem);
  }
}

function lstat(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

const writableByOthers = (i: Deno.FileInfo) => ((i.mode ?? 0) & 0o022) !== 0;
const sticky = (i: Deno.FileInfo) => ((i.mode ?? 0) & 0o1000) !== 0;
const trustedOwner = (uid: number | null) => uid === 0 || uid === ME;

const join = (dir: string, name: string) => dir === SEP ? `${SEP}${name}` : `${dir}${SEP}${name}`;
const parentOf = (dir: string) => dir.slice(0, Math.max(dir.lastIndexOf(SEP), 1));

/**
 * Why another user could rewrite the directory `info` at `dir` (null when nobody can): its
 * owner, or write access for group or others without the sticky bit.
 */
function ancestorProblem(info: Deno.FileInfo): string | null {
  if (!trustedOwner(info.uid)) return `owned by uid ${info.uid}`;
  if (writableByOthers(info) && !sticky(info)) return "writable by group or others, not sticky";
  return null;
}

/**
 * The canonical path of the directory `path` (absolute), after checking every directory from
 * `/` down to it (see the module comment). Components that do not exist yet are created
 * (0700) when `create` is set; otherwise null is returned for a missing directory. `label`
 * names it in messages ("the store", "the ledger"). The directory itself may be root's (read
 * only to others, or sticky) or the caller's, and a caller's that is loose is tightened to
 * 0700 unless it is sticky (a shared directory given as home is left alone).
 */
export function trustedDir(path: string, label: string, create: boolean): string | null {
  if (WINDOWS) {
    if (create) Deno.mkdirSync(path, { recursive: true });
    return path;
  }
  const refuse = (dir: string, why: string) =>
    new UntrustedError(
      `Refusing ${label}: another user can rewrite a directory on its path (${why}): ${dir}`,
    );
  const queue = path.split(SEP).filter((c) => c !== "" && c !== ".");
  let cur = SEP;
  let info = Deno.lstatSync(SEP);
  let problem = ancestorProblem(info);
  if (problem !== null) throw refuse(cur, problem);
  let links = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === "..") {
      cur = parentOf(cur);
      info = Deno.lstatSync(cur);
      continue;
    }
    const next = join(cur, name);
    let entry = lstat(next);
    if (entry === null) {
      if (!create) return null;
      try {
        Deno.mkdirSync(next, { mode: 0o700 });
      } catch (err) {
        if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      }
      entry = lstat(next);
      if (entry === null) {
        throw new UntrustedError(`${label} vanished while being created: ${next}`);
      }
    }
    // In a directory others may write to (sticky, or it was refused above), only an entry of
    // root's or the caller's own stays put.
    if (!trustedOwner(entry.uid)) {
      throw refuse(next, `owned by uid ${entry.uid}`);
    }
    if (entry.isSymlink) {
      if (++links > MAX_LINKS) {
        throw new UntrustedError(`Too many links on the way to ${label}: ${path}`);
      }
      const target = Deno.readLinkSync(next);
      queue.unshift(...target.split(SEP).filter((c) => c !== "" && c !== "."));
      if (target.startsWith(SEP)) {
        cur = SEP;
        info = Deno.lstatSync(SEP);
      }
      continue;
    }
    if (!entry.isDirectory) {
      throw new UntrustedError(`${capital(label)} is not a directory: ${next}`);
    }
    const last = queue.length === 0;
    problem = ancestorProblem(entry);
    if (problem !== null) {
      if (!last || entry.uid !== ME) throw refuse(next, problem);
      // The caller's own loose directory: theirs to tighten.
      tighten(next, entry);
    }
    cur = next;
    info = entry;
  }
  return cur;
}

function capital(s: string): string {
  const t = s.replace(/^the /, "");
  return t.charAt(0).toUpperCase() + t.slice(1);
}

function tighten(path: string, info: Deno.FileInfo) {
  if (((info.mode ?? 0) & 0o077) === 0 || sticky(info)) return;
  Deno.chmodSync(path, 0o700);
}

/**
 * The directory `name` inside the trusted directory `parent`: the caller's own, a real
 * directory (never a link), tightened to 0700 when looser. Created when `create` is set;
 * null when missing otherwise.
 */
export function privateChild(parent: string, name: string, create: boolean): string | null {
  const path = join(parent, name);
  if (WINDOWS) {
    if (create) Deno.mkdirSync(path, { recursive: true });
    else if (lstat(path) === null) return null;
    return path;
  }
  let info = lstat(path);
  if (info === null) {
    if (!create) return null;
    try {
      Deno.mkdirSync(path, { mode: 0o700 });
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
    info = lstat(path);
    if (info === null) {
      throw new UntrustedError(`Store directory vanished while being created: ${path}`);
    }
  }
  if (info.isSymlink) throw new UntrustedError(`Store directory is a symbolic link: ${path}`);
  if (!info.isDirectory) throw new UntrustedError(`Store path is not a directory: ${path}`);
  if (info.uid !== ME) throw new UntrustedError(`Store directory belongs to another user: ${path}`);
  if (create && ((info.mode ?? 0) & 0o077) !== 0) Deno.chmodSync(path, 0o700);
  return path;
}

/**
 * Opens the regular file at `path` that `judged` (the caller's lstat; null: any regular file)
 * describes, never blocking and never reading through a link. Deno ignores customFlags, so
 * there is no O_NOFOLLOW or O_NONBLOCK: the file is opened for reading and writing (such an
 * open never blocks on a FIFO, on Linux and the BSDs; nothing is written), or read-only when
 * it may not be written (then its owner swapped nothing in: a read-only file system, or a
 * mode the caller set), and its type and identity are checked on the open handle. A FIFO,
 * device or link swapped in since the lstat is closed unread: NotRegularError says what it
 * is. NotFound passes through.
 */
export function openRegular(
  path: string,
  judged: Deno.FileInfo | null,
  options: { append?: boolean } = {},
): { file: Deno.FsFile; info: Deno.FileInfo } {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true, write: true, append: options.append });
  } catch (err) {
    if (options.append || !(err instanceof Deno.errors.PermissionDenied || isReadOnlyFs(err))) {
      throw err;
    }
    file = Deno.openSync(path, { read: true });
  }
  let info: Deno.FileInfo;
  try {
    info = file.statSync();
  } catch (err) {
    file.close();
    throw err;
  }
  const problem = !info.isFile
    ? "not a regular file"
    : judged !== null && (info.ino !== judged.ino || info.dev !== judged.dev)
    ? "changed while being read"
    : null;
  if (problem !== null) {
    file.close();
    throw new NotRegularError(problem);
  }
  return { file, info };
}

function isReadOnlyFs(err: unknown): boolean {
  return err instanceof Error && /read-only file system|EROFS|os error 30\b/i.test(err.message);
}
