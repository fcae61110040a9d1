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

// Offsets are written out here, from the reference sheet, rather than imported: the test
// pins the layout instead of agreeing with itself.
interface KinfoFixture {
  structsize: number;
  pid: number;
  ppid: number;
  sec: bigint;
  usec: bigint;
  stat: number;
  comm: Uint8Array;
}

function kinfo(f: KinfoFixture, size = 1088): Uint8Array {
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  v.setInt32(0, f.structsize, true);
  v.setInt32(72, f.pid, true);
  v.setInt32(76, f.ppid, true);
  v.setBigInt64(336, f.sec, true);
  v.setBigInt64(344, f.usec, true);
  v.setInt8(388, f.stat);
  bytes.set(f.comm, 447);
  return bytes;
}

const enc = new TextEncoder();
// 2026-11-29T18:41:32Z
const SEC = 1795977692n;
const live: KinfoFixture = {
  structsize: 1088,
  pid: 777,
  ppid: 700,
  sec: SEC,
  usec: 123456n,
  stat: 3,
  comm: enc.encode("codex\0"),
};

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
    const big = new Uint8Array(1088 + 8).fill(0xee);
    big.set(kinfo(live), 8);
    assertEquals(decodeFreebsdKinfoProc(big.subarray(8))?.ppid, 700);
  });
  await t.step("wrong lengths are null", () => {
    assertEquals(decodeFreebsdKinfoProc(new Uint8Array(0)), null);
    assertEquals(decodeFreebsdKinfoProc(kinfo(live, 1087)), null);
    assertEquals(decodeFreebsdKinfoProc(kinfo(live, 1089)), null);
    assertEquals(decodeFreebsdKinfoProc(kinfo(live, 648)), null);
  });
  await t.step("a ki_structsize other than 1088 is null (another ABI's layout)", () => {
    assertEquals(decodeFreebsdKinfoProc(kinfo({ ...live, structsize: 768 })), null);
    assertEquals(decodeFreebsdKinfoProc(kinfo({ ...live, structsize: 0 })), null);
  });
  await t.step("a 16-character comm is kept whole", () => {
    const comm = enc.encode("abcdefghijklmnop\0");
    assertEquals(decodeFreebsdKinfoProc(kinfo({ ...live, comm }))?.comm, "abcdefghijklmnop");
  });
  await t.step("a full comm field with no NUL stops at the field's end", () => {
    const bytes = kinfo({ ...live, comm: enc.encode("abcdefghijklmnopqrst") });
    bytes[467] = 0x58; // the byte after ki_comm[20] must not leak into the name
    assertEquals(decodeFreebsdKinfoProc(bytes)?.comm, "abcdefghijklmnopqrst");
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
