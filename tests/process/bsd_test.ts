import { assertEquals } from "../assert.ts";
import {
  cString,
  isBsdPid,
  judgeKinfo,
  kinfoMib,
  type KinfoProc,
  type KinfoScheme,
  kinfoToInfo,
  probeKinfo,
  readArgmax,
  type SysctlRead,
  sysctlReader,
} from "../../src/process/bsd.ts";

const enc = new TextEncoder();
// 2026-11-29T18:41:32Z
const SEC = 1795977692n;
const k: KinfoProc = { pid: 42, ppid: 1, startSec: SEC, startUsec: 123456, stat: 2, comm: "sh" };

Deno.test("cString stops at the first NUL, or takes a full field whole", () => {
  assertEquals(cString(enc.encode("abc\0def")), "abc");
  assertEquals(cString(enc.encode("abcd")), "abcd");
  assertEquals(cString(enc.encode("\0abc")), "");
  assertEquals(cString(enc.encode("é\0")), "é");
});

Deno.test("isBsdPid takes positive 32-bit pids only", () => {
  for (const pid of [1, 4242, 0x7fffffff]) assertEquals(isBsdPid(pid), true, `${pid}`);
  for (const pid of [0, -1, 0x80000000, 1.5, NaN, Infinity]) {
    assertEquals(isBsdPid(pid), false, `${pid}`);
  }
});

Deno.test("kinfoToInfo keeps the OS's token and zombie verdict", () => {
  assertEquals(kinfoToInfo(k, "x:1", true), {
    pid: 42,
    ppid: 1,
    startToken: "x:1",
    startedAtMs: Date.parse("2026-11-29T18:41:32.123Z"),
    zombie: true,
    name: "sh",
  });
});

Deno.test("judgeKinfo", async (t) => {
  const decode = (bytes: Uint8Array) => bytes[0] === 0xff ? null : { ...k, pid: bytes[0] };
  const toInfo = (d: KinfoProc) => kinfoToInfo(d, "x:1", false);
  const scheme: KinfoScheme = { size: 9, decode, token: () => "x:1", info: toInfo };
  await t.step("no bytes: the pid is gone", () => {
    assertEquals(judgeKinfo(42, new Uint8Array(0), scheme), { kind: "gone" });
  });
  await t.step("an undecodable struct or another pid proves nothing", () => {
    assertEquals(judgeKinfo(42, Uint8Array.of(0xff), scheme), { kind: "unsupported" });
    assertEquals(judgeKinfo(42, Uint8Array.of(7), scheme), { kind: "unsupported" });
  });
  await t.step("the asked pid exists", () => {
    assertEquals(judgeKinfo(42, Uint8Array.of(42), scheme), {
      kind: "exists",
      info: toInfo(k),
    });
  });
});

Deno.test("probeKinfo: never a group; a failed read is the OS's to settle", () => {
  const decode = (bytes: Uint8Array) => ({ ...k, pid: bytes[0] });
  const toInfo = (d: KinfoProc) => kinfoToInfo(d, "x:1", false);
  const scheme: KinfoScheme = { size: 9, decode, token: () => "x:1", info: toInfo };
  const asked: [number[], number][] = [];
  const read = (answer: Uint8Array | null): SysctlRead => (mib, size) => {
    asked.push([mib, size]);
    return answer;
  };
  const failed = (pid: number) => ({ kind: "exists", info: { ...toInfo(k), pid } }) as const;
  for (const pid of [0, -1]) {
    assertEquals(probeKinfo(read(Uint8Array.of(42)), pid, scheme, failed), { kind: "gone" });
  }
  assertEquals(asked, []);
  assertEquals(probeKinfo(read(null), 42, scheme, failed), failed(42));
  assertEquals(probeKinfo(read(Uint8Array.of(42)), 42, scheme, failed), {
    kind: "exists",
    info: toInfo(k),
  });
  assertEquals(asked, [[kinfoMib(42), 9], [kinfoMib(42), 9]]);
});

Deno.test("readArgmax", async (t) => {
  const answering = (bytes: Uint8Array | null): SysctlRead => (mib, size) => {
    assertEquals([mib, size], [[1, 8], 4]);
    return bytes;
  };
  const int32 = (n: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, n, true);
    return b;
  };
  await t.step("a positive little-endian int32", () => {
    assertEquals(readArgmax(answering(int32(1048576))), 1048576);
  });
  await t.step("a failed read, a short answer or a non-positive size is null", () => {
    assertEquals(readArgmax(answering(null)), null);
    assertEquals(readArgmax(answering(new Uint8Array(2))), null);
    assertEquals(readArgmax(answering(int32(0))), null);
    assertEquals(readArgmax(answering(int32(-1))), null);
  });
});

Deno.test("sysctlReader trims to the length sysctl wrote, and is null on failure", () => {
  const calls: number[][] = [];
  const read = sysctlReader((name, namelen, oldp, oldlenp, newp, newlen) => {
    const mib = Array.from(name as Int32Array);
    calls.push([...mib, namelen as number]);
    assertEquals([newp, newlen], [null, 0n]);
    if (mib[0] === 0) return -1;
    (oldp as Uint8Array).set([9, 8, 7]);
    const len = oldlenp as BigUint64Array;
    assertEquals(len[0], 16n);
    len[0] = 3n;
    return 0;
  });
  assertEquals(read(kinfoMib(42), 16), Uint8Array.of(9, 8, 7));
  assertEquals(read([0, 1], 16), null);
  assertEquals(calls, [[1, 14, 1, 42, 4], [0, 1, 2]]);
});
