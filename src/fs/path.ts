/**
 * Paths as text, for this OS: its separator, the separator of a PATH-like list, and the join,
 * parent and last component every module builds paths with. No I/O.
 */
import { isLetter } from "../chars.ts";

const WINDOWS = Deno.build.os === "windows";
/** Between a path's components. */
export const SEP = WINDOWS ? "\\" : "/";
/** Between the directories of a list such as $PATH. */
export const PATH_DELIMITER = WINDOWS ? ";" : ":";

/** Joins path parts with this OS's separator (no normalisation: parts are already clean). */
export const join = (...parts: string[]) => parts.join(SEP);
/** The directory holding `path` (`/` for a top-level one). */
export const parentOf = (path: string) => path.slice(0, Math.max(path.lastIndexOf(SEP), 1));
/** The last component of `path`. */
export const baseName = (path: string) => path.slice(path.lastIndexOf(SEP) + 1);

/** Whether `path` is absolute on either OS: `/x`, `\\x`, `C:/x`, `C:\\x` (`^([A-Za-z]:)?[\\/]`). */
export function isAbsolute(path: string): boolean {
  const at = isLetter(path.charCodeAt(0)) && path.charCodeAt(1) === 58 /* : */ ? 2 : 0;
  const c = path.charCodeAt(at);
  return c === 47 /* / */ || c === 92 /* \ */;
}
