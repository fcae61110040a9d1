/**
 * Paths and private directories: a join for this OS, and directories created 0700 and
 * tightened when looser, never through a symbolic link.
 */
import { ioError, RosterError } from "../errors.ts";

const SEP = Deno.build.os === "windows" ? "\\" : "/";
/** Joins path parts with this OS's separator (no normalisation: parts are already clean). */
export const join = (...parts: string[]) => parts.join(SEP);

const uid = Deno.build.os === "windows" ? null : Deno.uid();

/** Whether `dir` is already a directory of ours that no one else may enter (no syscall more). */
export function isPrivateDir(dir: string): boolean {
  try {
    const info = Deno.lstatSync(dir);
    return info.isDirectory && ((info.mode ?? 0) & 0o077) === 0 && info.uid === uid;
  } catch {
    return false;
  }
}

/**
 * Makes `path` 0700 when it is looser. A `shared` directory (the user's home for roster's
 * files, say) is followed through a link and left alone when it is not ours or is a sticky
 * directory such as /tmp; any other directory must be ours and no link.
 */
export function tighten(path: string, shared: boolean) {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (err) {
    throw ioError("Could not use the store", path, err);
  }
  if (info.isSymlink && shared) info = Deno.statSync(path);
  if (!info.isDirectory) throw new RosterError(`Store path is not a directory: ${path}`);
  const mode = info.mode ?? 0;
  if ((mode & 0o077) === 0) return;
  if (shared && (info.uid !== uid || (mode & 0o1000) !== 0)) return;
  if (info.uid !== uid) {
    throw new RosterError(`Store directory belongs to another user: ${path}`);
  }
  try {
    Deno.chmodSync(path, 0o700);
  } catch (err) {
    throw ioError("Could not tighten permissions", path, err);
  }
}

/** Creates a directory and its parents (0700), tightening it when looser; never a symlink. */
export function ensurePrivateDir(dir: string): string {
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw ioError("Could not create the directory", dir, err);
  }
  if (Deno.build.os !== "windows") tighten(dir, false);
  return dir;
}

/**
 * The names of the directories in `dir` ([] when it does not exist). `dir` itself must be a
 * real directory: a link there could lead out of the tree. `what` names the tree in errors
 * ("store": "Store directory is a symbolic link", "Could not read the store").
 */
export function listDirs(dir: string, what: string): string[] {
  const names: string[] = [];
  try {
    if (Deno.lstatSync(dir).isSymlink) {
      throw new RosterError(
        `${what[0].toUpperCase()}${what.slice(1)} directory is a symbolic link: ${dir}`,
      );
    }
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw ioError(`Could not read the ${what}`, dir, err);
  }
  return names.sort();
}
