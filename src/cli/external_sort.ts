/**
 * An external sort of the rows `list` and `prune` print: they print them newest first, which
 * needs every row's key before the first line, but not every row. Each row (its key, its mark,
 * its tie and its text as UTF-8) is appended to one buffer; past a small budget the buffer's rows are sorted and
 * written to an unlinked temp file as one sorted run, keys and ties included, so nothing of a
 * spilled row stays in memory: memory is bounded by the budget and a block per run, not by the
 * store. The output merges the runs, reading each one front to back in blocks.
 *
 * Over 400 lines: the buffer, its sorted runs on disk and their merge share one byte layout
 * of a row, kept in one place so writer and reader cannot drift apart.
 */
import { readFully, writeAll } from "../fs/io.ts";

/** Bytes of rows kept in memory up to this many; beyond it they go to the temp file. */
const MEMORY_BUDGET = 2 * 1024 * 1024;
const FIRST_BUFFER = 64 * 1024;
/** What each run's reader holds while the runs are merged (more only for a longer row). */
const RUN_BLOCK = 16 * 1024;
const STAGE = 64 * 1024;
/**
 * A row as stored: its key and its mark (f64 each), its tie's length and its text's length
 * (u32 each).
 */
const HEADER = 24;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One row's place in a block of bytes laid out as rows are stored (header, tie, text). */
interface At {
  bytes: Uint8Array;
  view: DataView;
  at: number;
}

const keyAt = (r: At) => r.view.getFloat64(r.at, true);
const markAt = (r: At) => r.view.getFloat64(r.at + 8, true);
const tieAt = (r: At) => {
  const from = r.at + HEADER;
  return decoder.decode(r.bytes.subarray(from, from + r.view.getUint32(r.at + 16, true)));
};
const textAt = (r: At) => {
  const from = r.at + HEADER + r.view.getUint32(r.at + 16, true);
  return r.bytes.subarray(from, from + r.view.getUint32(r.at + 20, true));
};
const sizeAt = (view: DataView, at: number) =>
  HEADER + view.getUint32(at + 16, true) + view.getUint32(at + 20, true);

/** Newest first (-Infinity, no time, last); 0 for equal keys. */
const byKey = (ka: number, kb: number) => (ka === kb ? 0 : ka < kb ? 1 : -1);
/** Equal keys: by the tie (the row's path) ascending, the registry's order. */
const byTie = (a: At, b: At) => {
  const ta = tieAt(a);
  const tb = tieAt(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
};

/**
 * Rows sorted newest first, on equal keys by `tie` (the row's path) ascending: the registry's
 * order; held in memory up to a budget, past it in sorted runs on disk merged as they print.
 */
export class ExternalSort {
  #n = 0;
  /** The rows in the buffer: how many, each one's key and where it starts. */
  #held = 0;
  #keys = new Float64Array(256);
  #starts = new Float64Array(256);
  #buf = new Uint8Array(FIRST_BUFFER);
  #view = new DataView(this.#buf.buffer);
  #used = 0;
  #spill: Deno.FsFile | null = null;
  /** No temp file could be made: everything stays in memory (correct, if larger). */
  #inMemory = false;
  /** Each run in the temp file: where it starts and ends. */
  #runs: { start: number; end: number }[] = [];
  /** Bytes written to the temp file so far. */
  #spilled = 0;
  /** Where a run's rows are staged, in order, on their way to the temp file. */
  #stage = new Uint8Array(STAGE);

  /**
   * `budget`: bytes of rows held in memory before spilling (tests make it small). `tempDir`:
   * where the spill file goes, the system's temp directory ($TMPDIR) unless given (a test's
   * own: setting $TMPDIR would move every other test's temp files of the process too).
   */
  constructor(readonly budget = MEMORY_BUDGET, readonly tempDir?: string) {}

  get size(): number {
    return this.#n;
  }

  /**
   * Adds one row's text; `key` is its time (NaN or -Infinity sorts last). `mark`: a number the
   * printing needs of the row besides its text (list: its pid), kept and spilled with it and
   * given back to emit's `map`.
   */
  add(key: number, tie: string, text: string, mark = NaN) {
    this.addWritten(key, tie, this.#writeText, text, mark, text.length * 3);
  }

  /**
   * Adds one row whose text `write` puts into the buffer itself: `write(value, buf, at)` writes
   * it as UTF-8 from `at` and returns the bytes written, or -1 when they do not fit before
   * `buf.length` (it is then asked again with more room). `size` is the room to try first.
   */
  addWritten<T>(
    key: number,
    tie: string,
    write: (value: T, buf: Uint8Array, at: number) => number,
    value: T,
    mark = NaN,
    size = 4096,
  ) {
    let tieBytes = this.#encode(tie, this.#used + HEADER);
    let textBytes = tieBytes < 0 ? -1 : write(value, this.#buf, this.#used + HEADER + tieBytes);
    for (let need = HEADER + tie.length * 3 + size; textBytes < 0; need *= 2) {
      // A run makes room before the buffer grows past the budget.
      if (this.#used > 0 && this.#used + need > this.budget && !this.#inMemory) this.#writeRun();
      this.#room(need);
      tieBytes = this.#encode(tie, this.#used + HEADER);
      textBytes = tieBytes < 0 ? -1 : write(value, this.#buf, this.#used + HEADER + tieBytes);
    }
    if (this.#held === this.#keys.length) this.#grow();
    const start = this.#used;
    const k = Number.isNaN(key) ? -Infinity : key;
    this.#view.setFloat64(start, k, true);
    this.#view.setFloat64(start + 8, mark, true);
    this.#view.setUint32(start + 16, tieBytes, true);
    this.#view.setUint32(start + 20, textBytes, true);
    this.#keys[this.#held] = k;
    this.#starts[this.#held++] = start;
    this.#n++;
    this.#used += HEADER + tieBytes + textBytes;
    if (this.#used > this.budget && !this.#inMemory) this.#writeRun();
  }

  #writeText = (text: string, _buf: Uint8Array, at: number) => this.#encode(text, at);

  /** `s` as UTF-8 at `at` in the buffer: the bytes written, or -1 where it does not fit. */
  #encode(s: string, at: number): number {
    const buf = this.#buf;
    if (at > buf.length) return -1;
    // ASCII (every path, most rows) byte by byte: encodeInto is an op call per string.
    if (s.length <= 512 && at + s.length <= buf.length) {
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        buf[at + i] = c;
      }
      if (i === s.length) return i;
    }
    const { read, written } = encoder.encodeInto(s, buf.subarray(at));
    return read < s.length ? -1 : written;
  }

  /** Room for `bytes` more in the buffer, which grows only when the rows do not fit it. */
  #room(bytes: number) {
    if (this.#used + bytes <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#used + bytes) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.#buf.subarray(0, this.#used));
    this.#buf = bigger;
    this.#view = new DataView(bigger.buffer);
  }

  #grow() {
    const keys = new Float64Array(this.#keys.length * 2);
    keys.set(this.#keys);
    this.#keys = keys;
    const starts = new Float64Array(this.#starts.length * 2);
    starts.set(this.#starts);
    this.#starts = starts;
  }

  /** The held rows, sorted, appended to the temp file as one run; the buffer is then empty. */
  #writeRun() {
    if (this.#spill === null) {
      try {
        this.#spill = spillFile(this.tempDir);
      } catch {
        this.#inMemory = true; // no temp directory: keep the rows in memory, correct if larger
        return;
      }
    }
    // Written through a small staging block, in order: a row longer than it goes by itself.
    const stage = this.#stage;
    let staged = 0;
    const start = this.#spilled;
    try {
      for (const i of this.#sorted()) {
        const from = this.#starts[i];
        const length = sizeAt(this.#view, from);
        const bytes = this.#buf.subarray(from, from + length);
        if (staged + length > stage.length) {
          writeAll(this.#spill!, stage.subarray(0, staged));
          staged = 0;
        }
        if (length > stage.length) writeAll(this.#spill!, bytes);
        else {
          stage.set(bytes, staged);
          staged += length;
        }
        this.#spilled += length;
      }
      writeAll(this.#spill!, stage.subarray(0, staged));
    } catch {
      // The temp file takes no more (its disk is full, a file size limit): this run's rows stay
      // in the buffer and the rest with them, as when no temp file can be made. prune has
      // removed these rows' records already: failing here would lose its report of them.
      this.#spilled = start;
      try {
        this.#spill.truncateSync(start);
      } catch { /* the runs before it are whole either way */ }
      this.#inMemory = true;
      return;
    }
    this.#runs.push({ start, end: this.#spilled });
    this.#held = 0;
    this.#used = 0;
  }

  /** The held rows' indexes, in order. */
  #sorted(): Uint32Array {
    const order = new Uint32Array(this.#held);
    for (let i = 0; i < order.length; i++) order[i] = i;
    const keys = this.#keys;
    const row = (i: number): At => ({ bytes: this.#buf, view: this.#view, at: this.#starts[i] });
    return order.sort((a, b) => byKey(keys[a], keys[b]) || byTie(row(a), row(b)));
  }

  /**
   * Writes every text in order through `write`, `sep` between two, each passed through `map`
   * (with its tie and its mark) first when given. Output goes in chunks of about 64 KiB.
   */
  emit(
    write: (bytes: Uint8Array) => void,
    sep = "",
    map?: (text: string, tie: string, mark: number) => string,
  ) {
    const out = new Uint8Array(64 * 1024);
    let used = 0;
    const put = (bytes: Uint8Array) => {
      if (used + bytes.length > out.length) {
        if (used > 0) write(out.subarray(0, used));
        used = 0;
        if (bytes.length > out.length) return write(bytes);
      }
      out.set(bytes, used);
      used += bytes.length;
    };
    const sepBytes = encoder.encode(sep);
    let first = true;
    const emitRow = (row: At) => {
      if (!first && sepBytes.length > 0) put(sepBytes);
      first = false;
      put(
        map
          ? encoder.encode(map(decoder.decode(textAt(row)), tieAt(row), markAt(row)))
          : textAt(row),
      );
    };
    const held = new HeldRows(this.#sorted(), this.#starts, this.#buf, this.#view);
    if (this.#runs.length === 0) {
      for (let row = held.row(); row !== null; row = held.next()) emitRow(row);
    } else {
      const sources: Source[] = this.#runs.map((r) => new RunReader(this.#spill!, r.start, r.end));
      sources.push(held);
      merge(sources, emitRow);
    }
    if (used > 0) write(out.subarray(0, used));
  }

  close() {
    this.#spill?.close();
    this.#spill = null;
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/**
 * A new temp file for the runs, read and written through its handle only and unlinked at once:
 * nothing is left behind, whatever happens to this process. Opened with O_EXCL and mode 0600:
 * Deno's temp file only reserves a fresh name, which is then made again as a new file, so that
 * in a shared temp directory no other user's file or link put in its place can be opened (the
 * file used to be opened again by name, which followed a link swapped in between).
 */
function spillFile(dir: string | undefined): Deno.FsFile {
  const path = Deno.makeTempFileSync({ prefix: "roster-rows-", dir });
  Deno.removeSync(path);
  const file = Deno.openSync(path, { read: true, write: true, createNew: true, mode: 0o600 });
  try {
    Deno.removeSync(path);
  } catch { /* moved away by someone else: still ours to use through the handle */ }
  return file;
}

/** Rows in order, one at a time: the current row (null at the end), and the next. */
interface Source {
  row(): At | null;
  next(): At | null;
}

/** A k-way merge of sorted sources through a binary heap of their current rows. */
function merge(sources: Source[], emitRow: (row: At) => void) {
  const heap = sources.filter((s) => s.row() !== null);
  const less = (x: Source, y: Source) => {
    const a = x.row()!;
    const b = y.row()!;
    return (byKey(keyAt(a), keyAt(b)) || byTie(a, b)) < 0;
  };
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let min = at;
      if (l < heap.length && less(heap[l], heap[min])) min = l;
      if (r < heap.length && less(heap[r], heap[min])) min = r;
      if (min === at) return;
      [heap[at], heap[min]] = [heap[min], heap[at]];
      at = min;
    }
  };
  for (let at = (heap.length >> 1) - 1; at >= 0; at--) down(at);
  while (heap.length > 0) {
    const top = heap[0];
    emitRow(top.row()!);
    if (top.next() === null) {
      const end = heap.pop()!;
      if (heap.length === 0) break;
      heap[0] = end;
    }
    down(0);
  }
}

/** The rows still in the buffer, sorted. */
class HeldRows implements Source {
  #i = 0;
  #at: At;
  constructor(
    readonly order: Uint32Array,
    readonly starts: Float64Array,
    bytes: Uint8Array,
    view: DataView,
  ) {
    this.#at = { bytes, view, at: 0 };
  }
  row(): At | null {
    if (this.#i >= this.order.length) return null;
    this.#at.at = this.starts[this.order[this.#i]];
    return this.#at;
  }
  next(): At | null {
    this.#i++;
    return this.row();
  }
}

/** One run of the temp file, read front to back a block at a time. */
class RunReader implements Source {
  /** The file offset of the current row. */
  #pos: number;
  /** The file offset of #block[0], and how many bytes of it are read. */
  #start = 0;
  #filled = 0;
  #block = new Uint8Array(RUN_BLOCK);
  #at: At;

  constructor(readonly file: Deno.FsFile, start: number, readonly end: number) {
    this.#pos = start;
    this.#at = { bytes: this.#block, view: new DataView(this.#block.buffer), at: 0 };
    this.#load();
  }

  row(): At | null {
    return this.#pos < this.end ? this.#at : null;
  }

  next(): At | null {
    this.#pos += sizeAt(this.#at.view, this.#at.at);
    this.#load();
    return this.row();
  }

  /** Makes the row at #pos whole in the block: from the block when it is there, else read. */
  #load() {
    if (this.#pos >= this.end) return;
    let at = this.#pos - this.#start;
    if (at + HEADER > this.#filled) at = this.#fill(HEADER);
    const size = sizeAt(this.#at.view, at);
    if (at + size > this.#filled) at = this.#fill(size);
    this.#at.at = at;
  }

  /** Reads the run from #pos: a block, or `least` bytes where the row is longer. */
  #fill(least: number): number {
    const size = Math.max(least, Math.min(RUN_BLOCK, this.end - this.#pos));
    if (size > this.#block.length) {
      this.#block = new Uint8Array(size);
      this.#at.bytes = this.#block;
      this.#at.view = new DataView(this.#block.buffer);
    }
    const into = this.#block.subarray(0, size);
    this.file.seekSync(this.#pos, Deno.SeekMode.Start);
    if (readFully(this.file, into) < size) throw new Error("The spilled rows were cut short");
    this.#start = this.#pos;
    this.#filled = size;
    return 0;
  }
}
