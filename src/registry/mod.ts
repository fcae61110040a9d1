/**
 * The registry as another feature sees it: reading rows, and marking a row as held by a
 * continuation (kept until its key is finished). The continuation ledger plans from a
 * session's row, and metrics counts rows, through this one entry point (scripts/layers.ts
 * allows no other import of the registry from outside it, below cli).
 */
export { hostDirName } from "./layout.ts";
export { type Row, sortRows } from "./row.ts";
export { holdSession } from "./store_update.ts";
export { forEachRow } from "./scan.ts";
