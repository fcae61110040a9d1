/**
 * The reading half of `roster metrics`: walks the store and the continuation ledger, one file
 * at a time, and feeds a MetricsTally. It only reads, through the same safe readers as `list`
 * and `continuation-check`, so a hostile file is counted (malformed, damaged), never trusted.
 */
import { AUDIT_FILE } from "../continuation/audit.ts";
import {
  claimPath,
  HOLD_FILE,
  outcomePath,
  readMode,
  readPlan,
  readSkip,
  skipPath,
} from "../continuation/ledger.ts";
import { isObject, isValidKey } from "../continuation/schema.ts";
import { ioError } from "../errors.ts";
import { join } from "../fs/dir.ts";
import { exists, openRegular, readJson } from "../fs/read.ts";
import type { LivenessJudge } from "../identity/liveness.ts";
import { forEachRow } from "../registry/mod.ts";
import type { LedgerKey, LedgerSummary, MetricsTally } from "./tally.ts";

/** Every record of every host directory, judged now, one at a time. */
export function tallyStore(home: string, judge: LivenessJudge, tally: MetricsTally) {
  forEachRow(home, judge, (row) => tally.addRow(row));
}

const KEY_FILE = /^(.+)\.(plan\.json|claim|skip)$/;

/**
 * Every continuation key of the ledger at `dir`, each counted once: by its claim when it has
 * one, else by its skip, else by its plan. A missing ledger is an empty one (mode off).
 */
export function tallyLedger(dir: string, tally: MetricsTally): LedgerSummary {
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { mode: "off", hold: false };
    throw ioError("Could not read the ledger", dir, err);
  }
  for (const e of entries) {
    const m = KEY_FILE.exec(e.name);
    if (!m || !isValidKey(m[1])) continue;
    const key = keyOf(dir, m[1], m[2]);
    if (key !== null) tally.addKey(key);
  }
  tallyAudit(dir, tally);
  return { mode: readMode(dir).mode, hold: exists(join(dir, HOLD_FILE)) };
}

/** The state of `key` as seen from one of its files; null when another file counts it. */
function keyOf(dir: string, key: string, file: string): LedgerKey | null {
  if (file === "claim") {
    const read = readJson(outcomePath(dir, key));
    const outcome = read?.ok && isObject(read.value) ? read.value.outcome : undefined;
    return { state: outcome === "dispatched" || outcome === "lost" ? outcome : "claimed" };
  }
  if (exists(claimPath(dir, key))) return null;
  if (file === "skip") {
    const skip = readSkip(dir, key);
    if (skip === null) return null; // removed just now
    return {
      state: "skipped",
      skip: "damaged" in skip ? { class: null, reason: "skip-damaged" } : skip,
    };
  }
  if (exists(skipPath(dir, key))) return null;
  const plan = readPlan(dir, key);
  if (plan === null) return null;
  return { state: plan.ok ? plan.plan.state : "damaged" };
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
