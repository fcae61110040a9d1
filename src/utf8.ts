/**
 * Bytes as text, for what a hook's call reads, and text as bytes. A process's first TextDecoder
 * costs it about 0.25 ms of CPU to build and first decode with (Deno compiles their WebIDL glue
 * on first use), and a JavaScript loop over the bytes costs more (V8 compiles a hot loop), so the
 * ASCII a hook reads (/proc files, the machine id, a record) is made a string by builtins; any
 * other text, and all text once a process has decoded ASCII_BUDGET bytes (list, prune), by a
 * TextDecoder.
 */

/** What a hook decodes is far less (about 5 KiB for `activity`); `list` passes it at once. */
const ASCII_BUDGET = 64 * 1024;
/** The most arguments one Function.prototype.apply is given. */
const SLICE = 4096;

let asciiLeft = ASCII_BUDGET;
const decoders = new Map<string, TextDecoder>();

/**
 * `bytes` as UTF-8, as `new TextDecoder("utf-8", options).decode(bytes)` gives it: invalid
 * sequences replaced (or a TypeError when `fatal`), a leading BOM dropped unless `ignoreBOM`.
 */
export function decodeUtf8(bytes: Uint8Array, options: TextDecoderOptions = {}): string {
  // ASCII has no BOM and no invalid sequence: every option gives the same text.
  if (bytes.length <= asciiLeft && isAscii(bytes)) {
    asciiLeft -= bytes.length;
    return asciiText(bytes);
  }
  const fatal = options.fatal === true, ignoreBOM = options.ignoreBOM === true;
  const key = `${fatal} ${ignoreBOM}`;
  let decoder = decoders.get(key);
  if (decoder === undefined) {
    decoders.set(key, decoder = new TextDecoder("utf-8", { fatal, ignoreBOM }));
  }
  return decoder.decode(bytes);
}

let encoder: TextEncoder | undefined;

/** `text` as UTF-8 bytes: one TextEncoder a process, made on first use. */
export function encodeUtf8(text: string): Uint8Array {
  return (encoder ??= new TextEncoder()).encode(text);
}

// Typed arrays are array-likes: apply takes them as they are.
type Codes = number[];

function isAscii(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i += SLICE) {
    if (Math.max.apply(null, bytes.subarray(i, i + SLICE) as unknown as Codes) > 127) return false;
  }
  return true;
}

function asciiText(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += SLICE) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + SLICE) as unknown as Codes);
  }
  return text;
}
