/**
 * The byte loops under every read and write: a write is done only when all of it is written,
 * a read only when its buffer is full, the file ends, or enough is in. Only the base's encoder
 * imported: main.ts writes its errors through it on every call.
 */
import { encodeUtf8 } from "../utf8.ts";

/** Anything bytes are written to: a file, stdout, stderr. */
export interface ByteSink {
  writeSync(p: Uint8Array): number;
}

/** Anything bytes are read from: a file, stdin. */
export interface ByteSource {
  readSync(p: Uint8Array): number | null;
}

/** Writes all of `data` (text as UTF-8): a short write is followed by the rest. */
export function writeAll(sink: ByteSink, data: Uint8Array | string) {
  const bytes = typeof data === "string" ? encodeUtf8(data) : data;
  let off = 0;
  while (off < bytes.length) off += sink.writeSync(bytes.subarray(off));
}

/**
 * Reads into `into` until it is full or the source ends, or once at least `enough` bytes are
 * in (a file's size from fstat: no read more to see the end); returns how many bytes came.
 */
export function readFully(source: ByteSource, into: Uint8Array, enough = into.length): number {
  let off = 0;
  while (off < into.length) {
    const n = source.readSync(into.subarray(off));
    if (n === null || n === 0) break;
    off += n;
    if (off >= enough) break;
  }
  return off;
}

/**
 * Reads until the source ends or until more than `limit` bytes are in, so that a caller with
 * a cap sees that it was exceeded without reading all of an endless stream.
 */
export function readUpTo(
  read: (buf: Uint8Array) => number | null,
  limit = Infinity,
): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total <= limit) {
    const buf = new Uint8Array(Math.min(1 << 16, limit + 1 - total));
    const n = read(buf);
    if (n === null || n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
  }
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return all;
}
