/**
 * The ledger's audit log, `audit.ndjson`: one JSON line per claim, skip and lock reclaim. It
 * is appended to by every dispatcher and read whole only on the rare recovery path, so it is
 * not a small file: it is opened with the same care as one, but without a size cap.
 */
import { ioError } from "../errors.ts";
import { join } from "../registry/store.ts";
import { openRegular, readUpTo } from "./files.ts";
import { type AuditEvent, isObject } from "./schema.ts";

export const AUDIT_FILE = "audit.ndjson";

/**
 * Appends one JSON line to `audit.ndjson`. The file must be a regular file (never a link,
 * FIFO or device); one write of one short line, so concurrent appenders never interleave.
 */
export function appendAudit(dir: string, event: AuditEvent) {
  const path = join(dir, AUDIT_FILE);
  const line = JSON.stringify({ at: new Date().toISOString(), pid: Deno.pid, ...event }) + "\n";
  using file = openRegular(path, "Could not audit", { append: true, create: true, mode: 0o600 })!;
  try {
    const bytes = new TextEncoder().encode(line);
    let off = 0;
    while (off < bytes.length) off += file.writeSync(bytes.subarray(off));
  } catch (err) {
    throw ioError("Could not audit", path, err);
  }
}

/**
 * The whole audit log as text ("" when there is none). Only ever a regular file (a FIFO
 * would block), and only the file that was checked: this runs on the rare recovery path,
 * where a log of any length must be read.
 */
export function readAuditText(dir: string): string {
  const path = join(dir, AUDIT_FILE);
  using file = openRegular(path, "Could not read the audit", { read: true });
  if (file === null) return "";
  try {
    return new TextDecoder().decode(readUpTo((b) => file.readSync(b)));
  } catch (err) {
    throw ioError("Could not read the audit", path, err);
  }
}

/** Every line of the audit log that parses (for tests and tools). */
export function readAudit(dir: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(join(dir, AUDIT_FILE));
  } catch {
    return [];
  }
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
