/**
 * What register and prune keep of ended sessions: the retention window ($ROSTER_RETENTION),
 * and rows whose continuation is still open. The registry asks; the ledger answers. The
 * ledger's module is loaded only when a row names a continuation: a hook's `register` whose
 * cleanup meets none never pays for it.
 */
import { UsageError } from "../errors.ts";
import { lazyModule } from "../lazy.ts";
import { retentionMs } from "../registry/lifecycle.ts";
import type { Row } from "../registry/row.ts";
import type { Retention } from "../registry/store_write.ts";

const ledgerModule = lazyModule<typeof import("../continuation/ledger.ts")>(
  "../continuation/ledger.ts",
  (s) => import(s),
);
let ledger: Awaited<ReturnType<typeof ledgerModule>> | undefined;

/** Loads the ledger's module (once): heldByContinuation then answers for every row. */
export async function loadLedger(): Promise<void> {
  ledger ??= await ledgerModule();
}

/**
 * Whether an open continuation holds this row (its key is neither finished nor expired). The
 * ledger must be loaded first (loadLedger) for a row that names one: the registry loads it only
 * when it meets such a row.
 */
export function heldByContinuation(row: Row): boolean {
  if (row.continuation == null) return false;
  if (ledger === undefined) throw new Error("heldByContinuation before loadLedger");
  return ledger.isKeyOpen(row.continuation.ledger, row.continuation.key);
}

/** What is kept: ended rows for `ms` after they ended, and those a continuation holds. */
const keeping = (ms: number): Retention => ({
  retentionMs: ms,
  held: heldByContinuation,
  load: loadLedger,
});

/** Read from the environment: a bad $ROSTER_RETENTION is a usage error before any write. */
export function readRetention(): Retention {
  return keeping(retentionMs((n) => Deno.env.get(n)));
}

/**
 * For a session's own registration (register, exec): a bad $ROSTER_RETENTION must not cost the
 * session its record (unregistered, it could never be restored), so the record is written and
 * this time nothing ended is removed; `warn` says why, naming the variable.
 */
export function retentionOrKeepAll(warn: (message: string) => void): Retention {
  try {
    return readRetention();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    warn(`roster: ${err.message}: nothing ended was removed`);
    return keeping(Infinity);
  }
}
