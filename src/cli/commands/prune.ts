/**
 * `roster prune`: remove ended records no restore needs (unless a continuation holds them),
 * crashed ones a restore could bring back only past retention or with `--include-crashed`,
 * parked and unknown ones only past an explicit age; list what was removed. The removed rows
 * wait in order as text (../external_sort.ts), so a prune of any size reports every one of them in
 * memory bounded by a row.
 */
import { whyNotRestorable } from "../../registry/restorable.ts";
import type { Row } from "../../registry/row.ts";
import { prune } from "../../registry/scan.ts";
import { parseDuration } from "../../time.ts";
import type { Parsed } from "../args.ts";
import { readRetention } from "../retention.ts";
import type { Context } from "../context.ts";
import { ExternalSort } from "../external_sort.ts";
import { printable } from "../terminal.ts";
import { writeJsonElement } from "../json_element.ts";
import { sortKey } from "./list.ts";

/** A removed row's JSON element (in the report's "removed" array: two deep). */
const writeElement = (row: Row, buf: Uint8Array, at: number) => writeJsonElement(row, 2, buf, at);

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const older = args.get("older-than");
  const olderThanMs = older === undefined ? null : parseDuration(older, "--older-than", true);
  // Read first: a bad $ROSTER_RETENTION is a usage error before any removal.
  const retention = readRetention();
  const now = Date.now();
  // --include-crashed: no row is kept for a restore.
  const restorable = args.has("include-crashed")
    ? () => false
    : (row: Row) => whyNotRestorable(row, now, retention.retentionMs) === null;
  const dryRun = args.has("dry-run");
  const quiet = !ctx.json && args.has("quiet");
  using removed = new ExternalSort();
  const onRemoved = (r: Row) => {
    if (ctx.json) removed.addWritten(sortKey(r), r.path, writeElement, r);
    else {
      removed.add(
        sortKey(r),
        r.path,
        quiet ? "" : `  ${r.session_pid ?? "?"}  ${r.liveness} (${r.reason})  ${printable(r.path)}`,
      );
    }
  };
  await retention.load?.();
  const counts = await prune(
    ctx.home,
    await ctx.judge(),
    { olderThanMs },
    dryRun,
    retention.held,
    restorable,
    onRemoved,
    now,
  );
  const write = (bytes: Uint8Array) => ctx.stdout.bytes(bytes);
  if (ctx.json) {
    // The shape JSON.stringify(result, null, 2) had: removed first, then the counts.
    if (removed.size === 0) ctx.out('{\n  "removed": [],', true);
    else {
      ctx.out('{\n  "removed": [', true);
      removed.emit(write, ",\n");
      ctx.out("\n  ],", true);
    }
    const tail = JSON.stringify({ ...counts, ...(dryRun ? { dry_run: true } : {}) }, null, 2);
    ctx.out(tail.slice(2), true);
    return 0;
  }
  if (quiet) return 0;
  const verb = dryRun ? "Would remove" : "Removed";
  ctx.out(
    `${verb} ${removed.size} record${removed.size === 1 ? "" : "s"} ` +
      `(${counts.dead_removed} dead, ${counts.unknown_removed} unknown); kept ${counts.kept}` +
      (counts.held || counts.parked || counts.retained
        ? ` (${counts.held} held by a continuation, ${counts.parked} parked, ` +
          `${counts.retained} crashed kept for roster restore).`
        : "."),
  );
  if (removed.size > 0) {
    removed.emit(write, "\n");
    ctx.out("", true);
  }
  return 0;
}
