/**
 * The readers of Linux's /proc files, pure: each takes a file's text or bytes and returns what
 * roster needs of it, or null for anything of another shape. Tested alone, on fixtures
 * (tests/process/linux_test.ts); the backend that reads /proc with them is ./linux.ts.
 */
import { decodeUtf8, encodeUtf8 } from "../utf8.ts";
import { every, isBlank, isDigit, isDigits, lineValue, runEnd, splitBlanks } from "../chars.ts";

/** Clock ticks per second as seen by user space (USER_HZ): 100 on every mainstream arch. */
export const CLK_TCK = 100;

export interface StatFields {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  /** Clock ticks since boot, kept as the decimal text the kernel wrote. */
  starttime: string;
}

/**
 * Parses /proc/<pid>/stat as text: parseStatBytes of its UTF-8 bytes (the one parser; tests and
 * the bench hold text). Returns null for anything that does not have the expected shape.
 */
export function parseStat(text: string): StatFields | null {
  const bytes = encodeUtf8(text);
  return parseStatBytes(bytes, bytes.length);
}

const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Parses the `btime` line of /proc/stat: boot time in epoch seconds. */
export function parseBtime(text: string): number | null {
  const m = /(?:^|\n)btime (\d+)(?:\n|$)/.exec(text);
  return m ? Number(m[1]) : null;
}

/** Splits /proc/<pid>/cmdline (NUL-separated, usually NUL-terminated). */
export function parseCmdline(bytes: Uint8Array): string[] {
  const parts = decodeUtf8(bytes).split("\0");
  if (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * Whether the proc mount at `mountPoint` has a hidepid= option that hides other users'
 * processes (2, invisible, 4, ptraceable), from /proc/self/mountinfo. Unknown: true.
 */
export function procMayHide(mountinfo: string, mountPoint = "/proc"): boolean {
  // The last mount on a point is the one in effect (a sandbox may mount a fresh proc over it).
  let verdict = true;
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    if (fields[4] !== mountPoint) continue;
    const dash = fields.indexOf("-");
    if (dash < 0 || fields[dash + 1] !== "proc") {
      verdict = true;
      continue;
    }
    const m = /(?:^|,)hidepid=([^,]*)/.exec(`${fields[dash + 3] ?? ""},${fields[5] ?? ""}`);
    verdict = m !== null && !["0", "off", "1", "noaccess"].includes(m[1]);
  }
  return verdict;
}

/**
 * Pure: whether a /proc shows the reader's own pid namespace, from what it says of the reader
 * (`pid`, getpid(2)): `self`, the link /proc/self (the reader's pid in the namespace the proc
 * was mounted for; null where the reader is not in that namespace at all, which a proc mounted
 * for a child namespace shows), and /proc/self/status (null: unreadable). Its NSpid line lists
 * the reader's pid in each namespace from the mount's down to the reader's own, so one entry
 * proves the mount is the reader's: more is an ancestor's (`nsenter -p` or `unshare -p` without
 * a /proc of its own). A kernel before 4.1 writes no NSpid: then `self` is all there is.
 * Anything else proves nothing, and a /proc that is not proven the reader's is not trusted.
 */
export function procShowsOwnNs(self: string | null, status: string | null, pid: number): boolean {
  if (self !== String(pid) || status === null) return false;
  const nsPid = lineValue(status, "NSpid");
  if (nsPid === null) {
    // `Pid:` and its number alone, blanks after it allowed.
    const pidLine = lineValue(status, "Pid") ?? "";
    const end = runEnd(pidLine, isDigit);
    return end > 0 && pidLine.slice(0, end) === self && every(pidLine, isBlank, end);
  }
  const ids = splitBlanks(nsPid.trim());
  return ids.length === 1 && ids[0] === self;
}

/** Tgid and Threads from /proc/<pid>/status; null fields where absent. */
export function parseStatus(text: string): { tgid: number | null; threads: number | null } {
  const count = (key: string) => {
    const v = lineValue(text, key);
    return v !== null && isDigits(v) ? Number(v) : null;
  };
  return { tgid: count("Tgid"), threads: count("Threads") };
}

/**
 * The reader's boottime offset in clock ticks, from /proc/self/timens_offsets (`boottime <s>
 * <ns>`): 0 outside a time namespace, or when the file is missing (kernels before 5.6).
 */
export function parseBoottimeOffset(text: string): bigint {
  for (const line of text.split("\n")) {
    if (!line.startsWith("boottime") || !isBlank(line.charCodeAt(8))) continue;
    const [s, ns, ...more] = splitBlanks(line.slice(8).trim());
    if (more.length > 0 || !isDigits(s, true) || ns === undefined || !isDigits(ns)) continue;
    return BigInt(s) * BigInt(CLK_TCK) + BigInt(ns) * BigInt(CLK_TCK) / 1_000_000_000n;
  }
  return 0n;
}

/**
 * A start token comparable across time namespaces: the kernel shows starttime shifted by the
 * READER's boottime offset, so the offset comes off again (the same process, the same token,
 * whichever namespace reads it).
 */
export function normaliseStartTime(starttime: string, offsetTicks: bigint): string | null {
  if (offsetTicks === 0n) return starttime;
  // The kernel adds the reader's offset in u64: a process that started before a negative
  // offset's zero shows (start + offset) wrapped past 2^64 ns, about 1.8e12 ticks. Nothing
  // takes the wrap off exactly (2^64 ns is no whole number of ticks), so there is no token.
  if (offsetTicks < 0n && starttime.length >= 12 && BigInt(starttime) > WRAPPED_TICKS) return null;
  return String(BigInt(starttime) - offsetTicks);
}

/** 2^63 ns in clock ticks: no start time of a real boot (292 years) comes near it. */
const WRAPPED_TICKS = 922_337_203_685n;

/**
 * /proc/uptime's first field ("350.12 ...": seconds since boot, two decimals) in clock ticks,
 * rounded down as the kernel rounds a start time; null for any other shape.
 */
export function parseUptimeTicks(text: string): number | null {
  const dot = text.indexOf(".");
  if (
    dot < 1 || dot > 12 || !every(text, isDigit, 0, dot) || !every(text, isDigit, dot + 1, dot + 3)
  ) {
    return null;
  }
  const after = text.charCodeAt(dot + 3);
  if (after !== 32 && after !== 10) return null;
  return Number(text.slice(0, dot)) * CLK_TCK + Number(text.slice(dot + 1, dot + 3));
}

/** /proc/loadavg's task count ("0.20 0.18 0.12 1/80 11206": 80); null for any other shape. */
export function parseLoadavgTasks(text: string): number | null {
  const fields = text.split(" ");
  const slash = fields.length < 5 ? -1 : fields[3].indexOf("/");
  if (slash < 1) return null;
  const total = fields[3].slice(slash + 1);
  return total.length <= 15 && isDigits(total) ? Number(total) : null;
}

/** A Linux start token (normalised clock ticks: 1 to 15 digits) as a number; null otherwise. */
export function tokenTicks(token: string): number | null {
  if (token.length > 15 || !isDigits(token)) return null;
  return Number(token);
}

/** Zombie (Z) or dead (X, and x on 2.6.33 to 3.13). */
export function isDeadState(state: string): boolean {
  return state === "Z" || state === "X" || state === "x";
}

const SPACE = 32;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const isDigitByte = (b: number) => b >= 48 && b <= 57;

/** Whether buf[from, to) is 1 to 15 ASCII digits: a number that Number() reads exactly. */
function shortDigits(buf: Uint8Array, from: number, to: number): boolean {
  if (to <= from || to - from > 15) return false;
  for (let i = from; i < to; i++) if (!isDigitByte(buf[i])) return false;
  return true;
}

function digitsValue(buf: Uint8Array, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) v = v * 10 + buf[i] - 48;
  return v;
}

/**
 * Parses the first `n` bytes of `buf`, a /proc/<pid>/stat line as read: the pid, the command
 * name (which may hold spaces and ")", so it ends at the LAST ")"), the state, the ppid and
 * the start time (field 22); null for anything that does not have that shape. The answer is
 * that of the line decoded as UTF-8 and read as text (tests/process/linux_test.ts holds it to a
 * text reference on mangled lines), without decoding the line: `list` reads one line per live
 * pid, and the decode of the whole line cost an op call and some 300 bytes of string, which the
 * command name, a slice of it, kept alive in the judge's cache. Only the command name and the
 * start time become strings, and a pid or ppid only when it is not plain digits.
 */
export function parseStatBytes(buf: Uint8Array, n: number): StatFields | null {
  // A decode drops a leading byte order mark: the line starts after it.
  const start = n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  // The pid: up to the first " (", and not empty.
  let open = start;
  while (open + 1 < n && !(buf[open] === SPACE && buf[open + 1] === OPEN_PAREN)) open++;
  if (open === start || open + 1 >= n) return null;
  // The last ")". Bytes past n are an earlier read's: not this line.
  const close = buf.lastIndexOf(CLOSE_PAREN, n - 1);
  if (close < open) return null;
  const pid = numberAt(buf, start, open);
  // One character after ")" is stepped over: a byte where it is ASCII, else the bytes that
  // decode to it; bytes that decode to more than one UTF-16 unit leave no state to read.
  let at = close + 2;
  if (close + 1 < n && buf[close + 1] > 0x7f) {
    at = close + 1;
    while (at < n && buf[at] > 0x7f) at++;
    if (fieldText(buf, close + 1, at).length !== 1) return null;
  }
  let e0 = 0, e1 = 0, e18 = 0, e19 = 0;
  let count = 0;
  for (let from = at; count < 20;) {
    let space = from >= n ? -1 : buf.indexOf(SPACE, from);
    if (space >= n) space = -1;
    const last = space === -1;
    if (last) space = n;
    if (count === 0) e0 = space;
    else if (count === 1) e1 = space;
    else if (count === 18) e18 = space;
    else if (count === 19) e19 = space;
    count++;
    if (last) break;
    from = space + 1;
  }
  if (count < 20 || !Number.isSafeInteger(pid)) return null;
  if (e0 - at !== 1 || !isAsciiLetter(buf[at])) return null;
  const ppid = numberAt(buf, e0 + 1, e1);
  if (!Number.isSafeInteger(ppid)) return null;
  if (e19 === e18 + 1) return null;
  for (let i = e18 + 1; i < e19; i++) if (!isDigitByte(buf[i])) return null;
  return {
    pid,
    comm: fieldText(buf, open + 2, close),
    state: String.fromCharCode(buf[at]),
    ppid,
    starttime: e19 - e18 - 1 <= 15 && (buf[e18 + 1] !== 48 || e19 === e18 + 2)
      ? String(digitsValue(buf, e18 + 1, e19))
      : fieldText(buf, e18 + 1, e19),
  };
}

/** buf[from, to) as Number() reads its text: straight from the bytes when it is plain digits. */
function numberAt(buf: Uint8Array, from: number, to: number): number {
  return shortDigits(buf, from, to) ? digitsValue(buf, from, to) : Number(fieldText(buf, from, to));
}

/** buf[from, to) as text; a field keeps a leading BOM, as a decode of the whole line does. */
function fieldText(buf: Uint8Array, from: number, to: number): string {
  return decodeUtf8(buf.subarray(from, to), { ignoreBOM: true });
}
