/**
 * The registry as another feature sees it: reading rows and marking a row as held by a
 * continuation (kept until its key is finished). The continuation ledger plans from a
 * session's row, and metrics counts rows, through this entry point (scripts/layers.ts allows
 * no other import of the registry from outside it, below cli, but lookup.ts: a session's
 * lifecycle, which continuation-check asks on a hook's path).
 */
export { hostDirName } from "./layout.ts";
export { type Row, sortRows } from "./row.ts";
export { holdSession } from "./store_update.ts";
export { forEachRow } from "./scan.ts";
