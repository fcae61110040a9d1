import { assert, assertEquals } from "../assert.ts";
import { linuxBackend } from "../../src/process/linux.ts";
import {
  isDeadState,
  normaliseStartTime,
  parseBoottimeOffset,
  parseBtime,
  parseCmdline,
  parseStat,
  parseStatBytes,
  parseStatus,
  procMayHide,
} from "../../src/process/linux_proc.ts";
import { spawnSleeper, tempDir } from "../helpers.ts";

const tail = "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21";

/**
 * What a /proc/<pid>/stat line says, read as text with split and regex: the parser before the
 * byte walk, kept as the reference for what parseStat and parseStatBytes accept.
 */
function reference(text: string) {
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open));
  const at = close + 2;
  const ends: number[] = [];
  for (let from = at; ends.length < 20;) {
    const space = text.indexOf(" ", from);
    if (space === -1) {
      ends.push(text.length);
      break;
    }
    ends.push(space);
    from = space + 1;
  }
  if (ends.length < 20 || !Number.isSafeInteger(pid)) return null;
  const state = text.slice(at, ends[0]);
  const ppid = Number(text.slice(ends[0] + 1, ends[1]));
  const starttime = text.slice(ends[18] + 1, ends[19]);
  if (!/^[A-Za-z]$/.test(state) || !Number.isSafeInteger(ppid) || !/^\d+$/.test(starttime)) {
    return null;
  }
  return { pid, comm: text.slice(open + 2, close), state, ppid, starttime };
}

Deno.test("parseStat", async (t) => {
  await t.step("plain name", () => {
    const s = parseStat(`123 (bash) ${tail}`);
    assertEquals(s, { pid: 123, comm: "bash", state: "S", ppid: 1, starttime: "424242" });
  });
  await t.step("name with spaces and parentheses splits at the last paren", () => {
    const s = parseStat(`77 (a) b (c)) ) ${tail.replace(/^S 1/, "Z 9")}`);
    assertEquals(s?.comm, "a) b (c)) ");
    assertEquals(s?.state, "Z");
    assertEquals(s?.ppid, 9);
    assertEquals(s?.starttime, "424242");
  });
  await t.step("name that looks like fields", () => {
    const s = parseStat(`5 (x 1 2 3) ${tail}`);
    assertEquals(s?.comm, "x 1 2 3");
    assertEquals(s?.starttime, "424242");
  });
  await t.step("garbage is null", () => {
    assertEquals(parseStat(""), null);
    assertEquals(parseStat("123 bash S 1"), null);
    assertEquals(parseStat("123 (bash) S 1 2"), null);
    assertEquals(parseStat(`abc (bash) ${tail}`), null);
    assertEquals(parseStat(`1 (b) ${tail.replace("424242", "-5")}`), null);
  });
  await t.step("agrees with the split-and-regex parser it replaced, on mangled lines", () => {
    const base = `123 (bash) ${tail}\n`;
    const pieces = [" ", "", "x", "(", ")", "Z", "9", "-", "\n", "0x1", "١", "  ", "1e3", "é"];
    let seed = 11;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const lines = [base, base.trimEnd(), `${base} `, "1 (a)  S", "1 (a) S  1"];
    let accepted = 0;
    for (let i = 0; i < 20000; i++) {
      let text = lines[random(lines.length)];
      for (let k = 1 + random(3); k > 0; k--) {
        const at = random(text.length + 1);
        const cut = random(3);
        text = text.slice(0, at) + pieces[random(pieces.length)] + text.slice(at + cut);
      }
      const parsed = parseStat(text);
      if (parsed !== null) accepted++;
      assertEquals(parsed, reference(text), JSON.stringify(text));
    }
    // Both outcomes well represented: the mangling keeps many lines parseable.
    assert(accepted > 2000 && accepted < 18000, `${accepted} accepted`);
  });
});

Deno.test("procMayHide reads hidepid from mountinfo", async (t) => {
  const line = (opts: string) => `22 27 0:21 / /proc rw,relatime - proc proc ${opts}`;
  const other = "30 22 0:5 / /dev rw - devtmpfs udev rw";
  await t.step(
    "no hidepid: a missing /proc/<pid> is proof",
    () => assertEquals(procMayHide(`${other}\n${line("rw")}\n`), false),
  );
  await t.step("hidepid=0/off and 1/noaccess hide nothing", () => {
    for (const v of ["0", "off", "1", "noaccess"]) {
      assertEquals(procMayHide(line(`rw,hidepid=${v}`)), false, v);
    }
  });
  await t.step("hidepid=2/invisible/4/ptraceable may hide", () => {
    for (const v of ["2", "invisible", "4", "ptraceable"]) {
      assertEquals(procMayHide(line(`rw,hidepid=${v},gid=5`)), true, v);
    }
  });
  await t.step("the last mount on /proc is the one in effect", () => {
    assertEquals(procMayHide(`${line("rw")}\n${line("rw,hidepid=2")}`), true);
    assertEquals(procMayHide(`${line("rw,hidepid=2")}\n${line("rw")}`), false);
  });
  await t.step("no proc mount found, or not procfs: assume it may hide", () => {
    assertEquals(procMayHide(other), true);
    assertEquals(procMayHide("22 27 0:21 / /proc rw - tmpfs tmpfs rw"), true);
    assertEquals(procMayHide(line("rw"), "/elsewhere"), true);
  });
});

Deno.test("parseStatus", () => {
  const text = "Name:\tdeno\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4250\nThreads:\t7\n";
  assertEquals(parseStatus(text), { tgid: 4242, threads: 7 });
  assertEquals(parseStatus("Name: x\n"), { tgid: null, threads: null });
  // Line by line: a value with more than digits is none, and PTgid: is not Tgid:.
  assertEquals(parseStatus("PTgid:\t1\nTgid:  12\nThreads:\t7 x\n"), { tgid: 12, threads: null });
  assertEquals(parseStatus("Tgid:\t\nThreads:\t-1"), { tgid: null, threads: null });
});

Deno.test("small /proc parsers", async (t) => {
  await t.step("btime", () => {
    assertEquals(parseBtime("cpu 1 2\nbtime 1764441692\nprocesses 5\n"), 1764441692);
    assertEquals(parseBtime("cpu 1 2\n"), null);
  });
  await t.step("cmdline", () => {
    const enc = new TextEncoder();
    assertEquals(parseCmdline(enc.encode("node\0/usr/bin/claude\0--x\0")), [
      "node",
      "/usr/bin/claude",
      "--x",
    ]);
    assertEquals(parseCmdline(enc.encode("")), []);
  });
  await t.step("dead states", () => {
    assert(isDeadState("Z") && isDeadState("X") && isDeadState("x"));
    assert(!isDeadState("S") && !isDeadState("R") && !isDeadState("D"));
  });
});

/** The real-/proc tests need Linux: elsewhere there is no /proc to read. */
const NOT_LINUX = Deno.build.os !== "linux";

Deno.test({ name: "linuxBackend on the real /proc", ignore: NOT_LINUX }, async (t) => {
  const b = linuxBackend();
  await t.step("this process exists with a token and a sane start time", () => {
    const p = b.probe(Deno.pid);
    assert(p.kind === "exists");
    assert(p.info.startToken !== null && /^\d+$/.test(p.info.startToken));
    assertEquals(p.info.ppid, Deno.ppid);
    assert(p.info.startedAtMs !== null && Math.abs(p.info.startedAtMs - Date.now()) < 3_600_000);
    assert(!p.info.zombie);
  });
  await t.step("a killed and reaped child is gone", async () => {
    const s = spawnSleeper();
    assertEquals(b.probe(s.pid).kind, "exists");
    await s.kill();
    assertEquals(b.probe(s.pid).kind, "gone");
  });
  await t.step("boot id is a UUID and read once", () => {
    const id = b.bootId();
    assert(id !== null && /^[0-9a-f-]{36}$/.test(id));
    assertEquals(b.bootId(), id);
  });
  await t.step("command of this process names deno", () => {
    const c = b.command(Deno.pid);
    assert(c.exe?.endsWith("deno"));
    assert(c.argv && c.argv.length > 1);
  });
});

Deno.test("linuxBackend with an injected /proc root", async (t) => {
  await using root = await tempDir();
  const p = root.path;
  Deno.mkdirSync(`${p}/4242`);
  Deno.writeTextFileSync(`${p}/4242/stat`, `4242 (my (odd) name) ${tail}`);
  Deno.mkdirSync(`${p}/4343`);
  Deno.writeTextFileSync(`${p}/4343/stat`, `4343 (zz) ${tail.replace(/^S/, "Z")}`);
  Deno.writeTextFileSync(`${p}/stat`, "btime 1000\n");
  Deno.mkdirSync(`${p}/sys/kernel/random`, { recursive: true });
  Deno.writeTextFileSync(`${p}/sys/kernel/random/boot_id`, "abc\n");
  const b = linuxBackend(p, () => true);
  await t.step("decodes a fixture process", () => {
    const r = b.probe(4242);
    assert(r.kind === "exists");
    assertEquals(r.info.startToken, "424242");
    assertEquals(r.info.name, "my (odd) name");
    assertEquals(r.info.startedAtMs, 1000 * 1000 + 4242420);
  });
  await t.step("zombie state", () => {
    const r = b.probe(4343);
    assert(r.kind === "exists" && r.info.zombie);
  });
  await t.step("a stat whose pid differs is not trusted", () => {
    Deno.mkdirSync(`${p}/4444`);
    Deno.writeTextFileSync(`${p}/4444/stat`, `4445 (x) ${tail}`);
    assertEquals(b.probe(4444).kind, "unsupported");
  });
  await t.step("boot id from the injected root", () => assertEquals(b.bootId(), "abc"));
});

Deno.test({
  name: "threads are not processes, and a leader with live threads is not a zombie",
  ignore: NOT_LINUX,
}, async (t) => {
  const b = linuxBackend();
  await t.step("a thread id of this process reads as a thread", () => {
    const tids = [...Deno.readDirSync(`/proc/${Deno.pid}/task`)].map((e) => Number(e.name));
    const tid = tids.find((x) => x !== Deno.pid);
    assert(tid !== undefined, "deno runs more than one thread");
    const p = b.probe(tid);
    assert(p.kind === "exists" && p.info.isThread === true);
    const me = b.probe(Deno.pid);
    assert(me.kind === "exists" && me.info.isThread === false);
  });
  const cc = ["cc", "gcc"].find((c) => {
    try {
      return new Deno.Command(c, { args: ["--version"], stdout: "null", stderr: "null" })
        .outputSync().success;
    } catch {
      return false;
    }
  });
  await t.step({
    name: "main thread exited, another still running: alive, not a zombie",
    ignore: cc === undefined,
    fn: async () => {
      await using dir = await tempDir();
      Deno.writeTextFileSync(
        `${dir.path}/lz.c`,
        `#include <pthread.h>
#include <unistd.h>
static void *run(void *a) { (void)a; sleep(30); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_exit(0); }
`,
      );
      const built = new Deno.Command(cc!, {
        args: ["-pthread", "-o", `${dir.path}/lz`, `${dir.path}/lz.c`],
        stderr: "piped",
      }).outputSync();
      assert(built.success, new TextDecoder().decode(built.stderr));
      const child = new Deno.Command(`${dir.path}/lz`, { stdout: "null", stderr: "null" }).spawn();
      try {
        let state = "";
        for (let i = 0; i < 100 && state !== "Z"; i++) {
          await new Promise((r) => setTimeout(r, 20));
          const st = parseStat(Deno.readTextFileSync(`/proc/${child.pid}/stat`));
          state = st?.state ?? "";
        }
        assertEquals(state, "Z", "the leader shows Z while its thread runs");
        const p = b.probe(child.pid);
        assert(p.kind === "exists" && !p.info.zombie, "a process with a live thread is alive");
      } finally {
        child.kill("SIGKILL");
        await child.status;
      }
    },
  });
  if (cc === undefined) console.log("skipped: no C compiler to build a thread-leader test");
});

Deno.test("time namespaces: the reader's boottime offset comes off the start token", () => {
  const offsets = "monotonic         500         0\nboottime         1000         0\n";
  assertEquals(parseBoottimeOffset(offsets), 100_000n);
  assertEquals(parseBoottimeOffset("boottime -2 500000000\n"), -150n);
  assertEquals(parseBoottimeOffset("monotonic 0 0\nboottime 0 0\n"), 0n);
  assertEquals(parseBoottimeOffset(""), 0n);
  assertEquals(parseBoottimeOffset("boottime\t 3 \t0  \n"), 300n);
  assertEquals(parseBoottimeOffset("boottime 1 2 3\nboottime 2 0\n"), 200n); // the first whole line
  assertEquals(parseBoottimeOffset("boottimex 1 0\nboottime -x 0\nboottime 1 -1\n"), 0n);
  assertEquals(normaliseStartTime("491425", 100_000n), "391425");
  assertEquals(normaliseStartTime("391425", 0n), "391425");
  // Read in a namespace whose negative offset passes the process's start: wrapped, no token.
  assertEquals(normaliseStartTime("1844674407360", -343_200n), null);
  assertEquals(normaliseStartTime("491425", -100_000n), "591425");
});

Deno.test("parseStat agrees with a split of every field after comm", () => {
  // The reference: what parseStat computed before it walked the fields with indexOf.
  const bySplit = (text: string) => {
    const open = text.indexOf(" (");
    const close = text.lastIndexOf(")");
    if (open < 1 || close < open) return null;
    const rest = text.slice(close + 2).split(" ");
    const pid = Number(text.slice(0, open));
    if (rest.length < 20 || !Number.isSafeInteger(pid)) return null;
    if (!/^[A-Za-z]$/.test(rest[0]) || !Number.isSafeInteger(Number(rest[1]))) return null;
    if (!/^\d+$/.test(rest[19])) return null;
    return {
      pid,
      comm: text.slice(open + 2, close),
      state: rest[0],
      ppid: Number(rest[1]),
      starttime: rest[19],
    };
  };
  const fields = tail.split(" ");
  const cases = [
    `1 (a) ${tail}`,
    `1 (a) ${tail}\n`,
    `1 (a) ${fields.slice(0, 20).join(" ")}`,
    `1 (a) ${fields.slice(0, 19).join(" ")}`,
    `1 (a) ${fields.slice(0, 19).join(" ")} `,
    `1 (a)  ${tail}`,
    `1 (a) ${tail.replace(" 5 ", "  ")}`,
    `1 (a)${tail}`,
    `1 (a)`,
    `1 (a) `,
    `(a) ${tail}`,
    `x (a) ${tail}`,
    `1 (a) S x ${fields.slice(2).join(" ")}`,
    `1 (a) ${tail.replace("424242", "42a")}`,
  ];
  for (const text of cases) assertEquals(parseStat(text), bySplit(text), JSON.stringify(text));
});

Deno.test("parseStatBytes answers what the text reference answers for the decoded line", async (t) => {
  const encoder = new TextEncoder();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  // A buffer reused from read to read, as the probe's is: bytes past the line are an earlier
  // line's, and must not count.
  const buf = new Uint8Array(4096);
  const check = (bytes: Uint8Array) => {
    buf.fill(32);
    buf.set(bytes);
    const got = parseStatBytes(buf, bytes.length);
    assertEquals(got, reference(decode(bytes)), JSON.stringify(decode(bytes)));
    assertEquals(parseStat(decode(bytes)), got, JSON.stringify(decode(bytes)));
    return got;
  };
  await t.step("the kernel's lines", () => {
    assertEquals(check(encoder.encode(`123 (bash) ${tail}\n`)), {
      pid: 123,
      comm: "bash",
      state: "S",
      ppid: 1,
      starttime: "424242",
    });
    check(encoder.encode(`77 (a) b (c)) ) ${tail.replace(/^S 1/, "Z 9")}`));
    check(encoder.encode(`5 (x 1 2 3) ${tail}`));
    check(encoder.encode(`5 (é ☃) ${tail}`));
    check(encoder.encode(`5 (\uFEFFx) ${tail}`));
    check(encoder.encode(`5 () ${tail.replace("424242", "0")}`));
    check(encoder.encode(`5 (a) ${tail.replace("424242", "0042")}`));
    check(encoder.encode(`5 (a) ${tail.replace("424242", "12345678901234567890")}`));
    check(encoder.encode(`123456789012345678 (a) ${tail}`));
    check(new Uint8Array(0));
  });
  await t.step("odd bytes where the kernel writes none", () => {
    const bytes = (...parts: (string | number[])[]) =>
      new Uint8Array(parts.flatMap((p) => typeof p === "string" ? [...encoder.encode(p)] : p));
    const rest = tail.slice(1);
    assertEquals(check(bytes([0xef, 0xbb, 0xbf], `9 (a) ${tail}`))?.pid, 9);
    assertEquals(check(bytes([0xef, 0xbb, 0xbf], ` (a) ${tail}`)), null);
    assertEquals(check(bytes(`5 (a)éS${rest}`))?.state, "S");
    assertEquals(check(bytes(`5 (a)😀S${rest}`)), null);
    assertEquals(check(bytes("5 (a)", [0xff], `S${rest}`))?.state, "S");
    assertEquals(check(bytes("5 (a)", [0xf0, 0x9f], `S${rest}`))?.state, "S");
    assertEquals(check(bytes("5 (a)", [0xc3, 0xa9, 0xff], `S${rest}`)), null);
    assertEquals(check(bytes(`+5 (a) ${tail}`))?.pid, 5);
    assertEquals(check(bytes(`0x10 (a) ${tail}`))?.pid, 16);
    assertEquals(check(bytes(`5 (a) S 1e3${rest.slice(2)}`))?.ppid, 1000);
    assertEquals(check(bytes(`5 (a) S ${rest.slice(2)}`))?.ppid, 0);
  });
  await t.step("mangled lines, bytes that are not UTF-8 included", () => {
    const base = encoder.encode(`123 (bash) ${tail}\n`);
    const pieces = [
      " ",
      "",
      "x",
      "(",
      ")",
      "Z",
      "9",
      "-",
      "+",
      "\n",
      "0x1",
      "١",
      "  ",
      "1e3",
      "é",
      "\uFEFF",
      "0",
    ].map((p) => encoder.encode(p));
    const raw = [[0xff], [0xc3], [0xe2, 0x98], [0xef, 0xbb, 0xbf], [0x80]].map((b) =>
      new Uint8Array(b)
    );
    const all = [...pieces, ...raw];
    let seed = 17;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    // A line as the kernel writes it (this process's, fields as a live one has them).
    const real = encoder.encode(
      "40123 (deno) S 39876 40123 39876 34816 40123 4194304 2254 0 0 0 7 3 0 0 20 0 9 0 " +
        "1234567 1104130048 13113 18446744073709551615 1 1 0 0 0 0 0 4096 17922 0 0 0 17 1 0 0 " +
        "0 0 0 0 0 0 0 0 0 0 0\n",
    );
    const lines = [
      base,
      real,
      real,
      base.subarray(0, base.length - 1),
      encoder.encode("1 (a)  S"),
    ];
    let accepted = 0;
    for (let i = 0; i < 30000; i++) {
      let line = lines[random(lines.length)];
      for (let k = 1 + random(3); k > 0; k--) {
        const at = random(line.length + 1);
        const cut = random(3);
        const piece = all[random(all.length)];
        const next = new Uint8Array(Math.max(at, line.length - cut) + piece.length);
        next.set(line.subarray(0, at));
        next.set(piece, at);
        next.set(line.subarray(Math.min(line.length, at + cut)), at + piece.length);
        line = next.subarray(0, at + piece.length + Math.max(0, line.length - at - cut));
      }
      if (check(line) !== null) accepted++;
    }
    assert(accepted > 3000 && accepted < 27000, `${accepted} accepted`);
  });
});
