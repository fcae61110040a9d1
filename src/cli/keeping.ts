/**
 * What register and prune keep of ended sessions: the retention window ($ROSTER_RETENTION),
 * and rows whose continuation is still open. The registry asks; the ledger answers.
 */
import { isKeyOpen } from "../continuation/ledger.ts";
import { retentionMs } from "../registry/lifecycle.ts";
import type { Row } from "../registry/row.ts";
import type { Keeping } from "../registry/store.ts";

/** Whether an open continuation holds this row (its key is neither finished nor expired). */
export function heldByContinuation(row: Row): boolean {
  return row.continuation != null && isKeyOpen(row.continuation.ledger, row.continuation.key);
}

/** Read from the environment: a bad $ROSTER_RETENTION is a usage error before any write. */
export function keeping(): Keeping {
  return { retentionMs: retentionMs((n) => Deno.env.get(n)), held: heldByContinuation };
}
