/**
 * The `struct kinfo_proc` layouts derived from golang/sys and gopsutil by
 * scripts/derive_offsets.ts, and a builder that lays a record out by them. The decoder tests
 * take every offset and width from these tables, never from src/process/, so a wrong constant
 * in the code cannot agree with its own test.
 */
import { assertEquals } from "../assert.ts";
import type { KinfoProc } from "../../src/process/bsd.ts";
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

/** The C field each part of a decoded `KinfoProc` comes from, on one OS. */
export type KinfoFields = Record<keyof KinfoProc, string>;

/** Where roster's macOS decoder reads each value. */
export const DARWIN_NAMES: KinfoFields = {
  pid: "p_pid",
  ppid: "e_ppid",
  startSec: "p_starttime.tv_sec",
  startUsec: "p_starttime.tv_usec",
  stat: "p_stat",
  comm: "p_comm",
};

/** Where roster's FreeBSD decoder reads each value. */
export const FREEBSD_NAMES: KinfoFields = {
  pid: "ki_pid",
  ppid: "ki_ppid",
  startSec: "ki_start.tv_sec",
  startUsec: "ki_start.tv_usec",
  stat: "ki_stat",
  comm: "ki_comm",
};

/** What to lay out: a decoded `KinfoProc`'s values, with comm as the field's raw bytes. */
export type KinfoValues = Omit<KinfoProc, "comm"> & { comm: Uint8Array };

/** `layOut` by roster's names; `extra` holds fields the decoder checks but does not return. */
export function kinfoBytes(
  table: KinfoTable,
  names: KinfoFields,
  v: KinfoValues,
  extra: Record<string, number> = {},
  size?: number,
): Uint8Array {
  return layOut(table, {
    ...extra,
    [names.pid]: v.pid,
    [names.ppid]: v.ppid,
    [names.startSec]: v.startSec,
    [names.startUsec]: v.startUsec,
    [names.stat]: v.stat,
    [names.comm]: v.comm,
  }, size);
}

/**
 * One step per table: a record with every field laid out by the table decodes to exactly the
 * values put there, and one byte shorter or longer is refused. The comm fills its whole field
 * and the numbers differ in every byte, so a constant one byte off, a field read too wide or
 * too narrow, or two fields swapped all decode to something else. `extra` adds fields the
 * decoder checks but does not return (FreeBSD's ki_structsize).
 */
export async function checkEveryField(
  t: Deno.TestContext,
  tables: readonly KinfoTable[],
  names: KinfoFields,
  decode: (bytes: Uint8Array) => KinfoProc | null,
  extra: (table: KinfoTable) => Record<string, number> = () => ({}),
): Promise<void> {
  for (const table of tables) {
    const from = `${table.source.repo}@${table.source.commit.slice(0, 12)} ${table.source.path}`;
    await t.step(`${table.os}-${table.arch} (${from})`, () => {
      const comm = "abcdefghijklmnopqrstuvwxyz".slice(0, field(table, names.comm).size);
      const want: KinfoProc = {
        pid: 0x1234567,
        ppid: 0x2345678,
        startSec: 0x123456789an,
        startUsec: 987654,
        stat: 5,
        comm,
      };
      const raw = new TextEncoder().encode(comm);
      const bytes = kinfoBytes(table, names, { ...want, comm: raw }, extra(table));
      assertEquals(decode(bytes), want);
      assertEquals(decode(bytes.subarray(1)), null, "one byte short");
      const longer = new Uint8Array(table.size + 1);
      longer.set(bytes);
      assertEquals(decode(longer), null, "one byte long");
    });
  }
}
