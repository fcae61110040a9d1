/**
 * Output in order without holding it: `list` and `prune` print rows newest first, which needs
 * every row's key before the first line, but not every row. Each row's text is added with its
 * sort key; past a small budget the texts go to an unlinked temp file and only the keys and
 * offsets stay in memory (about 24 bytes a row), so memory is bounded by a row, not the store.
 */

/** Bytes of text kept in memory up to this many; beyond it they spill to a temp file. */
const MEMORY_BUDGET = 2 * 1024 * 1024;
const FIRST_BUFFER = 64 * 1024;

const RECORD = /^([1-9][0-9]{0,9})\.json$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Newest first; on equal keys, by `tie` (the row's path) ascending: the registry's order.
 * Each text is encoded to UTF-8 as it is added, into one buffer (bytes, not strings: nothing
 * per row for the garbage collector to copy and promote); past the budget the buffer goes to
 * the temp file and serves as its write buffer from then on.
 */
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
  /** Bytes already in the temp file; the buffer holds what comes after them. */
  #spilled = 0;
  #buf = new Uint8Array(FIRST_BUFFER);
  #used = 0;

  /** `budget`: bytes of text held in memory before spilling (tests make it small). */
  constructor(readonly budget = MEMORY_BUDGET) {}

  get size(): number {
    return this.#n;
  }

  /** Adds one row's text; `key` is its time (NaN or -Infinity sorts last). */
  add(key: number, tie: string, text: string) {
    if (this.#n === this.#keys.length) this.#grow();
    const i = this.#n++;
    this.#keys[i] = Number.isNaN(key) ? -Infinity : key;
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
    let { read, written } = encoder.encodeInto(text, this.#buf.subarray(this.#used));
    if (read < text.length) {
      this.#makeRoom(text.length * 3);
      ({ written } = encoder.encodeInto(text, this.#buf.subarray(this.#used)));
    }
    this.#offsets[i] = this.#spilled + this.#used;
    this.#lengths[i] = written;
    this.#used += written;
    if (this.#spill === null && !this.#inMemory && this.#used > this.budget) this.#startSpill();
  }

  /** Room for `bytes` more in the buffer: a bigger buffer, or the temp file takes what is held. */
  #makeRoom(bytes: number) {
    if (this.#spill === null && !this.#inMemory && this.#used + bytes > this.budget) {
      this.#startSpill();
    }
    if (this.#spill !== null) this.#flush();
    if (this.#used + bytes > this.#buf.length) {
      let size = this.#buf.length * 2;
      while (size < this.#used + bytes) size *= 2;
      const bigger = new Uint8Array(size);
      bigger.set(this.#buf.subarray(0, this.#used));
      this.#buf = bigger;
    }
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

  #startSpill() {
    try {
      const path = Deno.makeTempFileSync({ prefix: "roster-rows-" });
      this.#spill = Deno.openSync(path, { read: true, write: true });
      // Unlinked at once: nothing is left behind, whatever happens to this process.
      Deno.removeSync(path);
    } catch {
      this.#inMemory = true; // no temp directory: keep the texts in memory, correct if larger
      return;
    }
    this.#flush();
  }

  #flush() {
    const bytes = this.#buf.subarray(0, this.#used);
    let off = 0;
    while (off < bytes.length) off += this.#spill!.writeSync(bytes.subarray(off));
    this.#spilled += this.#used;
    this.#used = 0;
  }

  /** Row `i`'s tie (its path), rebuilt. */
  #tie(i: number): string {
    return this.#dirs[this.#dirOf[i]] +
      (this.#pidOf[i] < 0 ? this.#otherNames.get(i)! : `${this.#pidOf[i]}.json`);
  }

  /** The order: indices sorted newest first, ties by path. */
  #order(): Uint32Array {
    const keys = this.#keys;
    const order = new Uint32Array(this.#n);
    for (let i = 0; i < order.length; i++) order[i] = i;
    const tie = (i: number) => this.#tie(i);
    return order.sort((a, b) => {
      const ka = keys[a];
      const kb = keys[b];
      if (ka !== kb) return ka < kb ? 1 : -1; // -Infinity (no time) last
      const ta = tie(a);
      const tb = tie(b);
      return ta < tb ? -1 : ta > tb ? 1 : 0;
    });
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
    const order = this.#order();
    const tie = (i: number) => this.#tie(i);
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
    let read: (i: number) => Uint8Array;
    if (this.#spill === null) {
      const held = this.#buf;
      read = (i) => held.subarray(this.#offsets[i], this.#offsets[i] + this.#lengths[i]);
    } else {
      this.#flush();
      const file = this.#spill;
      let buf = new Uint8Array(64 * 1024);
      read = (i) => {
        const length = this.#lengths[i];
        if (length > buf.length) buf = new Uint8Array(length);
        file.seekSync(this.#offsets[i], Deno.SeekMode.Start);
        let off = 0;
        while (off < length) {
          const n = file.readSync(buf.subarray(off, length));
          if (n === null || n === 0) throw new Error("The spilled rows were cut short");
          off += n;
        }
        return buf.subarray(0, length);
      };
    }
    for (let k = 0; k < order.length; k++) {
      if (k > 0 && sepBytes.length > 0) put(sepBytes);
      const bytes = read(order[k]);
      put(map ? encoder.encode(map(decoder.decode(bytes), tie(order[k]))) : bytes);
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
