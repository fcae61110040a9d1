/**
 * Private directories: directories that no other user can rewrite, checked from `/` down and
 * created one component at a time without following links (path text: path.ts).
 *
 * Deno has no openat(2), so a path is resolved again by the kernel on every call. That is safe
 * only when no other user can change any directory on it: then what was checked stays what is
 * used. So every directory from `/` to a tree roster writes (the store's home, a ledger) must be
 * owned by root or the caller, and one that others may write to must be sticky (like /tmp), with
 * the entry on the path owned by root or the caller (the sticky bit keeps others from renaming
 * or removing it). A link on the way is followed only when root or the caller owns it (in a
 * checked directory nobody else can replace it), and its target is checked the same way. Below
 * that root every directory must be the caller's own and never a link.
 */
import { ioError, RosterError } from "../errors.ts";
import { join, parentOf, SEP } from "./path.ts";

const WINDOWS = Deno.build.os === "windows";

const ME = WINDOWS ? -1 : Deno.uid();
const MAX_LINKS = 40;

/** A trusted directory could not be had: one line, exit 1. */
export class UntrustedError extends RosterError {
  override name = "UntrustedError";
}

function lstat(path: string, what: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw ioError(what, path, err);
  }
}

/** mkdir(2) of one directory, 0700; one that appeared meanwhile is checked by the caller. */
function mkdirOne(path: string, what: string) {
  try {
    Deno.mkdirSync(path, { mode: 0o700 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw ioError(what, path, err);
  }
}

const writableByOthers = (i: Deno.FileInfo) => ((i.mode ?? 0) & 0o022) !== 0;
const sticky = (i: Deno.FileInfo) => ((i.mode ?? 0) & 0o1000) !== 0;
const trustedOwner = (uid: number | null) => uid === 0 || uid === ME;

const under = (dir: string, name: string) => dir === SEP ? `${SEP}${name}` : `${dir}${SEP}${name}`;
const parts = (path: string) => path.split(SEP).filter((c) => c !== "" && c !== ".");

/** Why another user could rewrite the directory `info` describes; null when nobody can. */
function othersCanRewrite(info: Deno.FileInfo): string | null {
  if (!trustedOwner(info.uid)) return `owned by uid ${info.uid}`;
  if (writableByOthers(info) && !sticky(info)) return "writable by group or others, not sticky";
  return null;
}

/**
 * The canonical path of the directory `path` (absolute), after checking every directory from
 * `/` down to it as the module comment says. What does not exist yet is created one directory
 * at a time (0700) when `create` is set; otherwise null says it is missing. The directory
 * itself may be root's (not writable by others, or sticky) or the caller's; with `own` it
 * must be the caller's. The caller's own loose directory is tightened to 0700 (unless sticky:
 * a shared directory given as home is left alone): one others may write to always, one they
 * may only read by a command that creates there (`create`), never by a reader; with
 * `tighten: false` refused. `label` names it in messages ("the
 * store", "the ledger"). Refusals are UntrustedError: one line, exit 1.
 */
export function trustedDir(
  path: string,
  label: string,
  { create, own = false, tighten = true }: { create: boolean; own?: boolean; tighten?: boolean },
): string | null {
  const what = `Could not use ${label}`;
  if (WINDOWS) {
    if (!create) return lstat(path, what) === null ? null : path;
    try {
      Deno.mkdirSync(path, { recursive: true });
    } catch (err) {
      throw ioError(what, path, err);
    }
    return path;
  }
  const refuse = (dir: string, why: string) =>
    new UntrustedError(
      `Refusing ${label}: another user can rewrite a directory on its path (${why}): ${dir}`,
    );
  const queue = parts(path);
  let cur = SEP;
  const root = othersCanRewrite(Deno.lstatSync(SEP));
  if (root !== null) throw refuse(SEP, root);
  let links = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === "..") {
      cur = parentOf(cur); // already checked on the way down
      continue;
    }
    const next = under(cur, name);
    let entry = lstat(next, what);
    if (entry === null) {
      if (!create) return null;
      mkdirOne(next, what);
      entry = lstat(next, what);
      if (entry === null) {
        throw new UntrustedError(`${what}: it vanished while being created: ${next}`);
      }
    }
    // Every directory so far is root's or the caller's, and a writable one is sticky: then
    // only an entry of root's or the caller's own stays where it is.
    if (!trustedOwner(entry.uid)) throw refuse(next, `owned by uid ${entry.uid}`);
    if (entry.isSymlink) {
      if (++links > MAX_LINKS) throw new UntrustedError(`${what}: too many links: ${path}`);
      const target = Deno.readLinkSync(next);
      queue.unshift(...parts(target));
      if (target.startsWith(SEP)) cur = SEP;
      continue;
    }
    if (!entry.isDirectory) throw new UntrustedError(`${what}: not a directory: ${next}`);
    const last = queue.length === 0;
    const problem = othersCanRewrite(entry);
    if (last && own && entry.uid !== ME) {
      throw new UntrustedError(`${what}: it belongs to another user: ${next}`);
    }
    if (problem !== null && (!last || !tighten || entry.uid !== ME)) throw refuse(next, problem);
    // A home only others may read is tightened by a command that creates there, never by a
    // reader (`list`, `check`); one others may rewrite is tightened before any use.
    if (
      last && tighten && (create || problem !== null) && entry.uid === ME &&
      ((entry.mode ?? 0) & 0o077) !== 0 && !sticky(entry)
    ) {
      try {
        Deno.chmodSync(next, 0o700); // the caller's own loose directory: theirs to tighten
      } catch (err) {
        throw ioError("Could not tighten permissions", next, err);
      }
    }
    cur = next;
  }
  return cur;
}

/**
 * The directory `name` inside the checked directory `parent`: the caller's own real directory
 * (never a link), tightened to 0700 when looser. Created (0700) when `create` is set; null
 * when missing otherwise.
 */
export function privateChild(
  parent: string,
  name: string,
  create: boolean,
  label = "Store",
): string | null {
  const path = join(parent, name);
  const what = `Could not use the ${label.toLowerCase()}`;
  let info = lstat(path, what);
  if (info === null) {
    if (!create) return null;
    if (WINDOWS) {
      try {
        Deno.mkdirSync(path, { recursive: true });
      } catch (err) {
        throw ioError("Could not create the store", path, err);
      }
      return path;
    }
    mkdirOne(path, "Could not create the store");
    info = lstat(path, what);
    if (info === null) {
      throw new UntrustedError(`${what}: it vanished while being created: ${path}`);
    }
  }
  if (info.isSymlink) throw new UntrustedError(`${label} directory is a symbolic link: ${path}`);
  if (!info.isDirectory) throw new UntrustedError(`${label} path is not a directory: ${path}`);
  if (WINDOWS) return path;
  if (info.uid !== ME) {
    throw new UntrustedError(`${label} directory belongs to another user: ${path}`);
  }

  if (create && ((info.mode ?? 0) & 0o077) !== 0) {
    try {
      Deno.chmodSync(path, 0o700);
    } catch (err) {
      throw ioError("Could not tighten permissions", path, err);
    }
  }
  return path;
}
