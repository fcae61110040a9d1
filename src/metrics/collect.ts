/**
 * The reading half of `roster metrics`: walks the store and the continuation ledger, one file
 * at a time, and feeds a MetricsTally. It only reads, through the same safe readers as `list`
 * and `continuation-check`, so a hostile file is counted (malformed, damaged), never trusted.
 */
import { AUDIT_FILE } from "../continuation/audit.ts";
import {
  countedState,
  KeyFiles,
  keyState,
  ledgerKeys,
  skipClassReason,
} from "../continuation/keys.ts";
import { HOLD_FILE, readMode } from "../continuation/ledger.ts";
import { ioError } from "../errors.ts";
import { join } from "../fs/path.ts";
import { exists, openRegular } from "../fs/read.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { forEachRow } from "../registry/mod.ts";
import type { LedgerSummary, MetricsTally } from "./tally.ts";

/** Every record of every host directory, judged now, one at a time. */
export function tallyStore(home: string, judge: LivenessJudge, tally: MetricsTally) {
  forEachRow(home, judge, (row) => tally.addRow(row));
}

/**
 * Every continuation key of the ledger at `dir`, each counted once, in the state
 * `continuation-list` decides for it (continuation/keys.ts). A missing ledger is an empty one
 * (mode off).
 */
export function tallyLedger(dir: string, tally: MetricsTally, now = Date.now()): LedgerSummary {
  let keys: Set<string> | null;
  try {
    keys = ledgerKeys(dir);
  } catch (err) {
    throw ioError("Could not read the ledger", dir, err);
  }
  if (keys === null) return { mode: "off", hold: false };
  for (const key of keys) {
    const files = new KeyFiles(dir, key);
    const state = countedState(keyState(files, now), files);
    if (state === null) continue;
    tally.addKey(
      state === "skipped" && files.skip !== null
        ? { state, skip: skipClassReason(files.skip) }
        : { state },
    );
  }
  tallyAudit(dir, tally);
  return { mode: readMode(dir).mode, hold: exists(join(dir, HOLD_FILE)) };
}

/** A line longer than this is not one roster wrote: it is counted unreadable, not buffered. */
const MAX_AUDIT_LINE = 64 * 1024;

/** Feeds the audit log to the tally line by line, reading it in fixed chunks. */
function tallyAudit(dir: string, tally: MetricsTally) {
  const path = join(dir, AUDIT_FILE);
  using file = openRegular(path, "Could not read the audit", { read: true });
  if (file === null) return;
  const decoder = new TextDecoder();
  const buf = new Uint8Array(1 << 16);
  let carry = "";
  let overlong = false;
  try {
    for (;;) {
      const n = file.readSync(buf);
      if (n === null || n === 0) break;
      const lines = (carry + decoder.decode(buf.subarray(0, n), { stream: true })).split("\n");
      carry = lines.pop()!;
      for (const line of lines) {
        if (overlong) {
          overlong = false;
          tally.addAuditLine(null);
        } else tally.addAuditLine(line);
      }
      if (carry.length > MAX_AUDIT_LINE) {
        overlong = true;
        carry = "";
      }
    }
  } catch (err) {
    throw ioError("Could not read the audit", path, err);
  }
  carry += decoder.decode();
  if (overlong) tally.addAuditLine(null);
  else tally.addAuditLine(carry);
}
