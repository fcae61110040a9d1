/**
 * The ledger's audit log, `audit.ndjson`: one JSON line per claim, skip and lock reclaim. It
 * is appended to by every dispatcher and read (its end only) on the rare recovery path, so it
 * is not a small file: it is opened with the same care as one, but without a size cap.
 */
import { ioError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { readUpTo, writeAll } from "../fs/io.ts";
import { openRegular } from "../fs/read.ts";
import { readRegularText } from "../open_file.ts";
import { isObject } from "../format/result.ts";
import { pause } from "../pause.ts";
import type { AuditEvent } from "./schema.ts";

export const AUDIT_FILE = "audit.ndjson";
/** How much of the audit's end recovery reads: some thousands of lines. */
const AUDIT_TAIL_BYTES = 1 << 20;

/**
 * Appends one JSON line to `audit.ndjson`. The file must be a regular file (never a link,
 * FIFO or device); one write of one short line, so concurrent appenders never interleave.
 */
export function appendAudit(dir: string, event: AuditEvent) {
  const path = join(dir, AUDIT_FILE);
  const line = JSON.stringify({ at: new Date().toISOString(), pid: Deno.pid, ...event }) + "\n";
  const opts = { append: true, create: true, mode: 0o600 };
  using file = openRegular(path, "Could not audit", opts, () => pause("read:before-open", dir))!;
  try {
    writeAll(file, line);
  } catch (err) {
    throw ioError("Could not audit", path, err);
  }
}

/**
 * The end of the audit log as text ("" when there is none): at most `maxBytes`, enough to
 * hold the lines of any recent claim. Bounded because it runs while holding dispatch.lock; a
 * line older than that is only ever re-added as `recovered`, which loses nothing. Only ever
 * a regular file (a FIFO would block), and only the file that was checked.
 */
export function readAuditText(dir: string, maxBytes = AUDIT_TAIL_BYTES): string {
  const path = join(dir, AUDIT_FILE);
  using file = openRegular(path, "Could not read the audit", { read: true });
  if (file === null) return "";
  try {
    const size = file.statSync().size;
    if (size > maxBytes) file.seekSync(size - maxBytes, Deno.SeekMode.Start);
    const text = new TextDecoder().decode(readUpTo((b) => file.readSync(b), maxBytes));
    // Starting mid-file, the first line is a fragment: drop it rather than misread it.
    return size > maxBytes ? text.slice(text.indexOf("\n") + 1) : text;
  } catch (err) {
    throw ioError("Could not read the audit", path, err);
  }
}

/** Every line of the audit log that parses (for tests and tools). */
export function readAudit(dir: string): Record<string, unknown>[] {
  // Never blocking on a FIFO in its place, and bounded (a whole log, for tests and tools).
  const text = readRegularText(join(dir, AUDIT_FILE), 1 << 28);
  if (text === null) return [];
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

/** Pure: whether audit text holds a `claim` line for `continuationId` (torn lines skipped). */
export function auditHasClaim(text: string, continuationId: string): boolean {
  for (const line of text.split("\n")) {
    if (!line.includes(continuationId)) continue;
    try {
      const v = JSON.parse(line);
      if (isObject(v) && v.event === "claim" && v.continuation_id === continuationId) return true;
    } catch { /* a torn line vouches for nothing */ }
  }
  return false;
}
