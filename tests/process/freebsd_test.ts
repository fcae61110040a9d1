import { assert, assertEquals } from "../assert.ts";
import {
  compareFreebsdTokens,
  decodeFreebsdKinfoProc,
  freebsdBackend,
  freebsdProcessInfo,
  freebsdToken,
  parseFreebsdToken,
  parseProcArgs,
} from "../../src/process/freebsd.ts";
import {
  checkEveryField,
  DARWIN_TABLES,
  field,
  FREEBSD_NAMES,
  FREEBSD_TABLES,
  kinfoBytes,
  type KinfoValues,
} from "./kinfo_tables.ts";

// Every offset and width comes from the tables scripts/derive_offsets.ts derived from gopsutil's
// cgo output of <sys/user.h> (tests/process/kinfo_tables.ts), never from
// src/process/freebsd.ts: the test pins the layout instead of agreeing with itself.
const [AMD64] = FREEBSD_TABLES;

/** `structsize` is what ki_structsize says, the table's size unless a test changes it. */
function kinfo(v: KinfoValues, size?: number, structsize = AMD64.size): Uint8Array {
  return kinfoBytes(AMD64, FREEBSD_NAMES, v, { ki_structsize: structsize }, size);
}

const enc = new TextEncoder();
// 2026-11-29T18:41:32Z
const SEC = 1795977692n;
const live: KinfoValues = {
  pid: 777,
  ppid: 700,
  startSec: SEC,
  startUsec: 123456,
  stat: 3,
  comm: enc.encode("codex\0"),
};

Deno.test("decodeFreebsdKinfoProc reads every field where <sys/user.h> puts it", (t) =>
  checkEveryField(
    t,
    FREEBSD_TABLES,
    FREEBSD_NAMES,
    decodeFreebsdKinfoProc,
    (table) => ({ ki_structsize: table.size }),
  ));

Deno.test("decodeFreebsdKinfoProc", async (t) => {
  await t.step("a live process", () => {
    assertEquals(decodeFreebsdKinfoProc(kinfo(live)), {
      pid: 777,
      ppid: 700,
      startSec: SEC,
      startUsec: 123456,
      stat: 3,
      comm: "codex",
    });
  });
  await t.step("a view into a larger buffer is read at its own offset", () => {
    const big = new Uint8Array(AMD64.size + 8).fill(0xee);
    big.set(kinfo(live), 8);
    assertEquals(decodeFreebsdKinfoProc(big.subarray(8))?.ppid, 700);
  });
  await t.step("wrong lengths are null", () => {
    assertEquals(decodeFreebsdKinfoProc(new Uint8Array(0)), null);
    assertEquals(decodeFreebsdKinfoProc(kinfo(live, AMD64.size - 1)), null);
    assertEquals(decodeFreebsdKinfoProc(kinfo(live, AMD64.size + 1)), null);
    // The macOS struct must not be mistaken for this one.
    assertEquals(decodeFreebsdKinfoProc(kinfo(live, DARWIN_TABLES[0].size)), null);
  });
  await t.step(
    "a ki_structsize other than the struct's size is null (another ABI's layout)",
    () => {
      // 768 is KINFO_PROC_SIZE on i386 and 32-bit powerpc.
      assertEquals(decodeFreebsdKinfoProc(kinfo(live, undefined, 768)), null);
      assertEquals(decodeFreebsdKinfoProc(kinfo(live, undefined, 0)), null);
    },
  );
  await t.step("a 16-character comm is kept whole", () => {
    const comm = enc.encode("abcdefghijklmnop\0");
    assertEquals(decodeFreebsdKinfoProc(kinfo({ ...live, comm }))?.comm, "abcdefghijklmnop");
  });
  await t.step("a full comm field with no NUL stops at the field's end", () => {
    const { offset, size } = field(AMD64, "ki_comm");
    const name = "abcdefghijklmnopqrst".slice(0, size);
    const bytes = kinfo({ ...live, comm: enc.encode(name) });
    bytes[offset + size] = 0x58; // the byte after ki_comm must not leak into the name
    assertEquals(decodeFreebsdKinfoProc(bytes)?.comm, name);
  });
});

Deno.test("freebsdProcessInfo", async (t) => {
  await t.step("a live process", () => {
    const k = decodeFreebsdKinfoProc(kinfo(live));
    assert(k !== null);
    assertEquals(freebsdProcessInfo(k), {
      pid: 777,
      ppid: 700,
      startToken: "freebsd:1795977692.123456",
      startedAtMs: Date.parse("2026-11-29T18:41:32.123Z"),
      zombie: false,
      name: "codex",
    });
  });
  await t.step("ki_stat SZOMB (5) is a zombie, the other states are not", () => {
    for (const [stat, zombie] of [[1, false], [2, false], [3, false], [4, false], [5, true]]) {
      const k = decodeFreebsdKinfoProc(kinfo({ ...live, stat: stat as number }));
      assert(k !== null);
      assertEquals(freebsdProcessInfo(k).zombie, zombie, `ki_stat ${stat}`);
    }
  });
});

Deno.test("FreeBSD tokens", async (t) => {
  const at = (sec: bigint, usec: number) => freebsdToken(sec, usec);
  await t.step("format pads microseconds and parses back", () => {
    assertEquals(at(SEC, 7), "freebsd:1795977692.000007");
    assertEquals(parseFreebsdToken(at(SEC, 7)), SEC * 1_000_000n + 7n);
    assertEquals(parseFreebsdToken("freebsd:12.34"), null);
    assertEquals(parseFreebsdToken("darwin:1795977692.000007"), null);
  });
  await t.step("identical and within 2 seconds either way are the same", () => {
    const base = at(SEC, 500000);
    assertEquals(compareFreebsdTokens(base, base), "same");
    assertEquals(compareFreebsdTokens(base, at(SEC + 2n, 500000)), "same");
    assertEquals(compareFreebsdTokens(base, at(SEC - 2n, 500000)), "same");
    assertEquals(compareFreebsdTokens(base, at(SEC + 1n, 999999)), "same");
  });
  await t.step("just past 2 seconds is uncertain, not different", () => {
    const base = at(SEC, 500000);
    assertEquals(compareFreebsdTokens(base, at(SEC + 2n, 500001)), "uncertain");
    assertEquals(compareFreebsdTokens(base, at(SEC - 2n, 499999)), "uncertain");
  });
  await t.step("far apart or unreadable is still uncertain: reuse cannot be proven", () => {
    assertEquals(compareFreebsdTokens(at(SEC, 0), at(SEC + 86400n, 0)), "uncertain");
    assertEquals(compareFreebsdTokens(at(SEC, 0), "freebsd:garbage"), "uncertain");
    assertEquals(compareFreebsdTokens("1234", at(SEC, 0)), "uncertain");
    for (let d = -10n; d <= 10n; d++) {
      assert(compareFreebsdTokens(at(SEC, 0), at(SEC + d, 0)) !== "different");
    }
  });
});

Deno.test("parseProcArgs splits KERN_PROC_ARGS", () => {
  assertEquals(parseProcArgs(enc.encode("node\0/usr/local/bin/codex\0a b\0")), [
    "node",
    "/usr/local/bin/codex",
    "a b",
  ]);
  assertEquals(parseProcArgs(enc.encode("")), []);
});

Deno.test({
  name: "freebsdBackend is null where libc.so.7 cannot be opened",
  ignore: Deno.build.os === "freebsd",
  fn() {
    assertEquals(freebsdBackend(), null);
  },
});

Deno.test({
  name: "freebsdBackend on a real FreeBSD",
  ignore: Deno.build.os !== "freebsd",
  async fn(t) {
    const b = freebsdBackend();
    assert(b !== null);
    await t.step("this process exists with a freebsd token", () => {
      const p = b.probe(Deno.pid);
      assert(p.kind === "exists");
      assertEquals(p.info.ppid, Deno.ppid);
      assert(p.info.startToken !== null && /^freebsd:\d+\.\d{6}$/.test(p.info.startToken));
    });
  },
});
