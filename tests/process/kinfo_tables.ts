/**
 * The `struct kinfo_proc` layouts derived from golang/sys and gopsutil by
 * scripts/derive_offsets.ts, and a builder that lays a record out by them. The decoder tests
 * take every offset and width from these tables, never from src/process/, so a wrong constant
 * in the code cannot agree with its own test.
 */
import darwinAmd64 from "../fixtures/offsets/darwin-amd64.json" with { type: "json" };
import darwinArm64 from "../fixtures/offsets/darwin-arm64.json" with { type: "json" };
import freebsdAmd64 from "../fixtures/offsets/freebsd-amd64.json" with { type: "json" };
import freebsdArm64 from "../fixtures/offsets/freebsd-arm64.json" with { type: "json" };

export interface KinfoTable {
  os: string;
  arch: string;
  size: number;
  source: { repo: string; commit: string; path: string };
  fields: Record<string, { offset: number; size: number; type: string }>;
}

export const DARWIN_TABLES: readonly KinfoTable[] = [darwinAmd64, darwinArm64];
export const FREEBSD_TABLES: readonly KinfoTable[] = [freebsdAmd64, freebsdArm64];

/** A field's place in `table`; throws for a field the table does not have. */
export function field(table: KinfoTable, name: string): { offset: number; size: number } {
  const f = table.fields[name];
  if (f === undefined) throw new Error(`${table.os}-${table.arch} table has no ${name}`);
  return f;
}

/**
 * A record of `size` bytes (the table's by default) with each value written at its field's
 * offset and at its field's width. Every other byte is a varying non-zero pattern, so a decoder
 * that reads one byte off, or a field too wide, reads noise instead of the value.
 */
export function layOut(
  table: KinfoTable,
  values: Record<string, number | bigint | Uint8Array>,
  size = table.size,
): Uint8Array {
  const bytes = new Uint8Array(size).map((_, i) => ((i * 151 + 7) & 0xff) | 0x01);
  const view = new DataView(bytes.buffer);
  for (const [name, value] of Object.entries(values)) {
    const { offset, size: width } = field(table, name);
    if (value instanceof Uint8Array) {
      if (value.length > width) throw new Error(`${name}: ${value.length} bytes > ${width}`);
      bytes.set(value, offset);
      continue;
    }
    const n = BigInt(value);
    // Both OSes run only little-endian on amd64 and arm64.
    if (width === 8) view.setBigInt64(offset, n, true);
    else if (width === 4) view.setInt32(offset, Number(n), true);
    else if (width === 2) view.setInt16(offset, Number(n), true);
    else if (width === 1) view.setInt8(offset, Number(n));
    else throw new Error(`${name}: no integer is ${width} bytes wide`);
  }
  return bytes;
}
