/**
 * What "private" means for roster's files on each OS: the one rule the store and the ledger
 * apply before trusting a file's contents. Pure: the FileInfo, the OS and our uid are given.
 */

/** The two FileInfo fields the rule reads. */
export interface Ownership {
  readonly mode: number | null;
  readonly uid: number | null;
}

/**
 * Why a file (or the ledger's directory) may not be trusted as this user's own, or null.
 * Unix: owned by this user (`uid`; null skips the check) and not writable by group or others.
 * Windows: neither check applies. Deno reports every writable file as mode 0o666 and uid null,
 * and chmod changes nothing, so a mode says nothing there; a file is as private as the ACL it
 * inherits (under %LOCALAPPDATA%: the user, SYSTEM and Administrators only), which roster does
 * not read. The other checks (no links, regular file, size, same file after open) still apply.
 * docs/platforms.md says so.
 */
export function untrustedFile(
  info: Ownership,
  os: typeof Deno.build.os,
  uid: number | null,
): string | null {
  if (os === "windows") return null;
  if (uid !== null && info.uid !== uid) return "owned by another user";
  if (info.mode !== null && (info.mode & 0o022) !== 0) return "writable by group or others";
  return null;
}
