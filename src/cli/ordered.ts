/**
 * Output in order without holding it: `list` and `prune` print rows newest first, which needs
 * every row's key before the first line, but not every row. Each row's text is added with its
 * sort key; past a small budget the texts go to an unlinked temp file and only the keys and
 * offsets stay in memory (about 24 bytes a row), so memory is bounded by a row, not the store.
 */

/** Texts kept in memory up to this many characters; beyond it they spill to a temp file. */
const MEMORY_BUDGET = 2 * 1024 * 1024;
const CHUNK = 1024 * 1024;

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
  #texts: string[] | null = [];
  #chars = 0;
  #spill: Deno.FsFile | null = null;
  #spilled = 0;
  #chunk = new Uint8Array(CHUNK);
  #used = 0;

  /** `budget`: characters of text held in memory before spilling (tests make it small). */
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
    const dir = tie.slice(0, cut);
    let d = this.#dirIndex.get(dir);
    if (d === undefined) this.#dirIndex.set(dir, d = this.#dirs.push(dir) - 1);
    this.#dirOf[i] = d;
    const name = tie.slice(cut);
    const m = RECORD.exec(name);
    this.#pidOf[i] = m ? Number(m[1]) : -1;
    if (!m) this.#otherNames.set(i, name);
    if (this.#texts !== null) {
      this.#texts.push(text);
      this.#chars += text.length;
      if (this.#chars > this.budget) this.#startSpill();
      return;
    }
    this.#append(i, text);
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
    let file: Deno.FsFile;
    try {
      const path = Deno.makeTempFileSync({ prefix: "roster-rows-" });
      file = Deno.openSync(path, { read: true, write: true });
      // Unlinked at once: nothing is left behind, whatever happens to this process.
      Deno.removeSync(path);
    } catch {
      return; // no temp directory: keep the texts in memory, correct if larger
    }
    this.#spill = file;
    const texts = this.#texts!;
    this.#texts = null;
    for (let i = 0; i < texts.length; i++) this.#append(i, texts[i]);
  }

  #append(i: number, text: string) {
    let { read, written } = encoder.encodeInto(text, this.#chunk.subarray(this.#used));
    if (read < text.length) {
      this.#flush();
      if (text.length * 3 > this.#chunk.length) this.#chunk = new Uint8Array(text.length * 3);
      ({ written } = encoder.encodeInto(text, this.#chunk));
    }
    this.#offsets[i] = this.#spilled + this.#used;
    this.#lengths[i] = written;
    this.#used += written;
  }

  #flush() {
    const bytes = this.#chunk.subarray(0, this.#used);
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
    let read: (i: number) => string | Uint8Array;
    if (this.#texts !== null) {
      const texts = this.#texts;
      read = (i) => texts[i];
    } else {
      this.#flush();
      const file = this.#spill!;
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
        const bytes = buf.subarray(0, length);
        return map ? decoder.decode(bytes) : bytes;
      };
    }
    for (let k = 0; k < order.length; k++) {
      if (k > 0 && sepBytes.length > 0) put(sepBytes);
      const text = read(order[k]);
      if (typeof text === "string") put(encoder.encode(map ? map(text, tie(order[k])) : text));
      else put(text);
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
