/**
 * Output in order without holding it: `list` and `prune` print rows newest first, which needs
 * every row's key before the first line, but not every row. Each row's text is added with its
 * sort key and kept as UTF-8 in one buffer; past a small budget the buffer's rows are sorted
 * and written to an unlinked temp file as one sorted run, and only the keys and offsets stay in
 * memory (about 36 bytes a row), so memory is bounded by a row, not the store. The output
 * merges the runs, reading each one front to back in blocks: no seek and read per row.
 */

/** Bytes of text kept in memory up to this many; beyond it they go to the temp file. */
const MEMORY_BUDGET = 2 * 1024 * 1024;
const FIRST_BUFFER = 64 * 1024;
/** What each run's reader holds while the runs are merged (more only for a longer row). */
const RUN_BLOCK = 16 * 1024;
const STAGE = 64 * 1024;

const RECORD = /^([1-9][0-9]{0,9})\.json$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Newest first; on equal keys, by `tie` (the row's path) ascending: the registry's order. */
export class Ordered {
  #n = 0;
  #keys = new Float64Array(256);
  #offsets = new Float64Array(256);
  #lengths = new Uint32Array(256);
  /** The tie (a path) as its directory, interned, and its name: a record's pid, or text. */
  #dirOf = new Uint32Array(256);
  #pidOf = new Float64Array(256);
  #otherNames = new Map<number, string>();
  #dirs: string[] = [];
  #dirIndex = new Map<string, number>();
  #lastDir = "";
  #lastDirIndex = -1;
  #spill: Deno.FsFile | null = null;
  /** No temp file could be made: everything stays in memory (correct, if larger). */
  #inMemory = false;
  /** Bytes written to the temp file so far. */
  #spilled = 0;
  /** Each run in the temp file: its rows in order (offsets[] say where each one is). */
  #runs: Uint32Array[] = [];
  /** The first row not yet in a run: rows from here on are in the buffer. */
  #first = 0;
  #buf = new Uint8Array(FIRST_BUFFER);
  #used = 0;
  /** Where a run's rows are staged, in order, on their way to the temp file. */
  #stage = new Uint8Array(STAGE);

  /** `budget`: bytes of text held in memory before spilling (tests make it small). */
  constructor(readonly budget = MEMORY_BUDGET) {}

  get size(): number {
    return this.#n;
  }

  /** Adds one row's text; `key` is its time (NaN or -Infinity sorts last). */
  add(key: number, tie: string, text: string) {
    // The text first: a run written to make room must not take this row in.
    let { read, written } = encoder.encodeInto(text, this.#buf.subarray(this.#used));
    if (read < text.length) {
      // A run makes room before the buffer grows past the budget.
      const need = text.length * 3;
      if (this.#used > 0 && this.#used + need > this.budget && !this.#inMemory) this.#writeRun();
      this.#room(need);
      ({ written } = encoder.encodeInto(text, this.#buf.subarray(this.#used)));
    }
    if (this.#n === this.#keys.length) this.#grow();
    const i = this.#n++;
    this.#keys[i] = Number.isNaN(key) ? -Infinity : key;
    this.#offsets[i] = this.#used;
    this.#lengths[i] = written;
    this.#used += written;
    const cut = Math.max(tie.lastIndexOf("/"), tie.lastIndexOf("\\")) + 1;
    // Rows come a directory at a time: most share the previous row's directory.
    if (cut !== this.#lastDir.length || !tie.startsWith(this.#lastDir)) {
      const dir = tie.slice(0, cut);
      let d = this.#dirIndex.get(dir);
      if (d === undefined) this.#dirIndex.set(dir, d = this.#dirs.push(dir) - 1);
      this.#lastDir = dir;
      this.#lastDirIndex = d;
    }
    this.#dirOf[i] = this.#lastDirIndex;
    const name = tie.slice(cut);
    const m = RECORD.exec(name);
    this.#pidOf[i] = m ? Number(m[1]) : -1;
    if (!m) this.#otherNames.set(i, name);
    if (this.#used > this.budget && !this.#inMemory) this.#writeRun();
  }

  /** Room for `bytes` more in the buffer, which grows only when the rows do not fit it. */
  #room(bytes: number) {
    if (this.#used + bytes <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#used + bytes) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.#buf.subarray(0, this.#used));
    this.#buf = bigger;
  }

  #grow() {
    const size = this.#keys.length * 2;
    const keys = new Float64Array(size);
    keys.set(this.#keys);
    this.#keys = keys;
    const offsets = new Float64Array(size);
    offsets.set(this.#offsets);
    this.#offsets = offsets;
    const lengths = new Uint32Array(size);
    lengths.set(this.#lengths);
    this.#lengths = lengths;
    const dirOf = new Uint32Array(size);
    dirOf.set(this.#dirOf);
    this.#dirOf = dirOf;
    const pidOf = new Float64Array(size);
    pidOf.set(this.#pidOf);
    this.#pidOf = pidOf;
  }

  /** The rows in the buffer, sorted, appended to the temp file as one run. */
  #writeRun() {
    if (this.#spill === null) {
      try {
        const path = Deno.makeTempFileSync({ prefix: "roster-rows-" });
        this.#spill = Deno.openSync(path, { read: true, write: true });
        // Unlinked at once: nothing is left behind, whatever happens to this process.
        Deno.removeSync(path);
      } catch {
        this.#inMemory = true; // no temp directory: keep the texts in memory, correct if larger
        return;
      }
    }
    const run = this.#sorted(this.#first, this.#n);
    // Written through a small staging block, in order: a row longer than it goes by itself.
    const stage = this.#stage;
    let staged = 0;
    let at = this.#spilled;
    for (const i of run) {
      const from = this.#offsets[i];
      const length = this.#lengths[i];
      const bytes = this.#buf.subarray(from, from + length);
      if (staged + length > stage.length) {
        this.#writeAll(stage.subarray(0, staged));
        staged = 0;
      }
      if (length > stage.length) this.#writeAll(bytes);
      else {
        stage.set(bytes, staged);
        staged += length;
      }
      this.#offsets[i] = at;
      at += length;
    }
    this.#writeAll(stage.subarray(0, staged));
    this.#spilled = at;
    this.#runs.push(run);
    this.#first = this.#n;
    this.#used = 0;
  }

  #writeAll(bytes: Uint8Array) {
    let off = 0;
    while (off < bytes.length) off += this.#spill!.writeSync(bytes.subarray(off));
  }

  /** Row `i`'s tie (its path), rebuilt. */
  #tie(i: number): string {
    return this.#dirs[this.#dirOf[i]] +
      (this.#pidOf[i] < 0 ? this.#otherNames.get(i)! : `${this.#pidOf[i]}.json`);
  }

  /** Negative when row `a` comes before row `b`: newest first, ties by path. */
  #compare(a: number, b: number): number {
    const ka = this.#keys[a];
    const kb = this.#keys[b];
    if (ka !== kb) return ka < kb ? 1 : -1; // -Infinity (no time) last
    const ta = this.#tie(a);
    const tb = this.#tie(b);
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  }

  /** Rows `from` to `to` (exclusive), in order. */
  #sorted(from: number, to: number): Uint32Array {
    const order = new Uint32Array(to - from);
    for (let i = 0; i < order.length; i++) order[i] = from + i;
    return order.sort((a, b) => this.#compare(a, b));
  }

  /**
   * Writes every text in order through `write`, `sep` between two, each passed through `map`
   * (with its tie) first when given. Output goes in chunks of about 64 KiB.
   */
  emit(
    write: (bytes: Uint8Array) => void,
    sep = "",
    map?: (text: string, tie: string) => string,
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
    const emitRow = (i: number, bytes: Uint8Array) => {
      if (!first && sepBytes.length > 0) put(sepBytes);
      first = false;
      put(map ? encoder.encode(map(decoder.decode(bytes), this.#tie(i))) : bytes);
    };
    const held = this.#buf;
    const inBuffer = (i: number) =>
      held.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]);
    const last = this.#sorted(this.#first, this.#n);
    if (this.#runs.length === 0) {
      for (const i of last) emitRow(i, inBuffer(i));
    } else {
      const sources: Source[] = this.#runs.map((rows) => new RunReader(rows, this));
      if (last.length > 0) sources.push(new HeldRows(last, inBuffer));
      this.#merge(sources, emitRow);
    }
    if (used > 0) write(out.subarray(0, used));
  }

  /** Where row `i` is in the temp file, and how long it is (for the run readers). */
  place(i: number): [number, number] {
    return [this.#offsets[i], this.#lengths[i]];
  }

  /** Reads `into.length` bytes of the temp file from `offset`. */
  readAt(offset: number, into: Uint8Array) {
    const file = this.#spill!;
    file.seekSync(offset, Deno.SeekMode.Start);
    let off = 0;
    while (off < into.length) {
      const n = file.readSync(into.subarray(off));
      if (n === null || n === 0) break;
      off += n;
    }
    if (off < into.length) throw new Error("The spilled rows were cut short");
  }

  /** A k-way merge of sorted sources through a binary heap of their heads. */
  #merge(sources: Source[], emitRow: (i: number, bytes: Uint8Array) => void) {
    const heap = sources.filter((s) => s.head() !== -1);
    const less = (x: Source, y: Source) => this.#compare(x.head(), y.head()) < 0;
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
      emitRow(top.head(), top.bytes());
      if (top.advance() === -1) {
        const end = heap.pop()!;
        if (heap.length === 0) break;
        heap[0] = end;
      }
      down(0);
    }
  }

  close() {
    this.#spill?.close();
    this.#spill = null;
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/** Rows in order, one at a time: the current row's index (-1 at the end) and its text. */
interface Source {
  head(): number;
  bytes(): Uint8Array;
  advance(): number;
}

/** The rows still in the buffer, sorted. */
class HeldRows implements Source {
  #at = 0;
  constructor(readonly rows: Uint32Array, readonly text: (i: number) => Uint8Array) {}
  head = () => (this.#at < this.rows.length ? this.rows[this.#at] : -1);
  bytes = () => this.text(this.rows[this.#at]);
  advance = () => (++this.#at, this.head());
}

/** One run of the temp file, read front to back a block at a time. */
class RunReader implements Source {
  #at = 0;
  #block = new Uint8Array(RUN_BLOCK);
  /** The file offset of #block[0], and how many bytes of it are read. */
  #start = 0;
  #filled = 0;
  constructor(readonly rows: Uint32Array, readonly file: Ordered) {}
  head = () => (this.#at < this.rows.length ? this.rows[this.#at] : -1);
  advance = () => (++this.#at, this.head());
  bytes = (): Uint8Array => {
    const [offset, length] = this.file.place(this.rows[this.#at]);
    if (offset < this.#start || offset + length > this.#start + this.#filled) {
      // The rest of the run from this row, up to a block (or the row, if it is longer).
      const last = this.rows[this.rows.length - 1];
      const [lastOffset, lastLength] = this.file.place(last);
      const size = Math.max(length, Math.min(RUN_BLOCK, lastOffset + lastLength - offset));
      if (size > this.#block.length) this.#block = new Uint8Array(size);
      this.file.readAt(offset, this.#block.subarray(0, size));
      this.#start = offset;
      this.#filled = size;
    }
    return this.#block.subarray(offset - this.#start, offset - this.#start + length);
  };
}
