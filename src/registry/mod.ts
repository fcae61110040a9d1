/**
 * The registry as another feature sees it: reading rows, marking a row as held by a
 * continuation (kept until its key is finished), and a session's lifecycle. The continuation
 * ledger plans from a session's row and asks whether it was parked or resumed before a
 * continue, and metrics counts rows, through this one entry point (scripts/layers.ts allows no
 * other import of the registry from outside it, below cli).
 */
export { hostDirName } from "./layout.ts";
export { type Row, sortRows } from "./row.ts";
export { holdSession } from "./store_update.ts";
export { forEachRow } from "./scan.ts";
export { type ProcessSession, type SessionLifecycle, sessionLifecycle } from "./lookup.ts";
