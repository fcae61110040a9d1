import { assert, assertEquals } from "../assert.ts";
import {
  darwinBackend,
  darwinProcessInfo,
  darwinToken,
  decodeDarwinKinfoProc,
  formatHostUuid,
  parseProcArgs2,
} from "../../src/process/darwin.ts";
import {
  checkEveryField,
  DARWIN_NAMES,
  DARWIN_TABLES,
  field,
  FREEBSD_TABLES,
  kinfoBytes,
  type KinfoValues,
} from "./kinfo_tables.ts";

// Every offset and width comes from the tables scripts/derive_offsets.ts derived from golang/sys
// (tests/process/kinfo_tables.ts), never from src/process/darwin.ts: the test pins the layout
// instead of agreeing with itself.
const [AMD64] = DARWIN_TABLES;

function kinfo(v: KinfoValues, size?: number): Uint8Array {
  return kinfoBytes(AMD64, DARWIN_NAMES, v, {}, size);
}

const enc = new TextEncoder();
// 2026-11-29T18:41:32Z
const SEC = 1795977692n;
const live: KinfoValues = {
  pid: 4242,
  ppid: 1,
  startSec: SEC,
  startUsec: 45,
  stat: 2,
  comm: enc.encode("claude\0"),
};

Deno.test("decodeDarwinKinfoProc reads every field where golang/sys puts it", (t) =>
  checkEveryField(t, DARWIN_TABLES, DARWIN_NAMES, decodeDarwinKinfoProc));

Deno.test("decodeDarwinKinfoProc", async (t) => {
  await t.step("a live process", () => {
    assertEquals(decodeDarwinKinfoProc(kinfo(live)), {
      pid: 4242,
      ppid: 1,
      startSec: SEC,
      startUsec: 45,
      stat: 2,
      comm: "claude",
    });
  });
  await t.step("a view into a larger buffer is read at its own offset", () => {
    const big = new Uint8Array(AMD64.size + 16).fill(0xee);
    big.set(kinfo(live), 16);
    assertEquals(decodeDarwinKinfoProc(big.subarray(16))?.pid, 4242);
    assertEquals(decodeDarwinKinfoProc(big.subarray(16))?.comm, "claude");
  });
  await t.step("wrong lengths are null", () => {
    assertEquals(decodeDarwinKinfoProc(new Uint8Array(0)), null);
    assertEquals(decodeDarwinKinfoProc(kinfo(live, AMD64.size - 1)), null);
    assertEquals(decodeDarwinKinfoProc(kinfo(live, AMD64.size + 1)), null);
    // The FreeBSD struct must not be mistaken for this one.
    assertEquals(decodeDarwinKinfoProc(kinfo(live, FREEBSD_TABLES[0].size)), null);
  });
  await t.step("a 16-character comm (MAXCOMLEN) is kept whole", () => {
    const comm = enc.encode("abcdefghijklmnop\0");
    assertEquals(decodeDarwinKinfoProc(kinfo({ ...live, comm }))?.comm, "abcdefghijklmnop");
  });
  await t.step("a full comm field with no NUL stops at the field's end", () => {
    const { offset, size } = field(AMD64, "p_comm");
    const bytes = kinfo({ ...live, comm: enc.encode("abcdefghijklmnopq".slice(0, size)) });
    bytes[offset + size] = 0x58; // the byte after p_comm must not leak into the name
    assertEquals(decodeDarwinKinfoProc(bytes)?.comm, "abcdefghijklmnopq".slice(0, size));
  });
});

Deno.test("darwinProcessInfo", async (t) => {
  await t.step("token pads microseconds to six digits", () => {
    assertEquals(darwinToken(SEC, 45), "darwin:1795977692.000045");
    assertEquals(darwinToken(SEC, 999999), "darwin:1795977692.999999");
    assertEquals(darwinToken(SEC, 0), "darwin:1795977692.000000");
  });
  await t.step("a live process", () => {
    const k = decodeDarwinKinfoProc(kinfo({ ...live, startUsec: 123456 }));
    assert(k !== null);
    assertEquals(darwinProcessInfo(k), {
      pid: 4242,
      ppid: 1,
      startToken: "darwin:1795977692.123456",
      startedAtMs: Date.parse("2026-11-29T18:41:32.123Z"),
      zombie: false,
      name: "claude",
    });
  });
  await t.step("p_stat SZOMB (5) is a zombie, the other states are not", () => {
    for (const [stat, zombie] of [[1, false], [2, false], [3, false], [4, false], [5, true]]) {
      const k = decodeDarwinKinfoProc(kinfo({ ...live, stat: stat as number }));
      assert(k !== null);
      assertEquals(darwinProcessInfo(k).zombie, zombie, `p_stat ${stat}`);
    }
  });
});

function procargs(argc: number, ...parts: string[]): Uint8Array {
  const body = enc.encode(parts.join(""));
  const bytes = new Uint8Array(4 + body.length);
  new DataView(bytes.buffer).setInt32(0, argc, true);
  bytes.set(body, 4);
  return bytes;
}

Deno.test("parseProcArgs2", async (t) => {
  await t.step("exec path, padding, argv, then the environment is ignored", () => {
    const bytes = procargs(
      3,
      "/usr/local/bin/node\0\0\0\0\0",
      "node\0",
      "/opt/claude/cli.js\0",
      "--resume a b\0",
      "PATH=/bin\0HOME=/Users/x\0",
    );
    assertEquals(parseProcArgs2(bytes), {
      argc: 3,
      exe: "/usr/local/bin/node",
      argv: ["node", "/opt/claude/cli.js", "--resume a b"],
    });
  });
  await t.step("non-ASCII arguments decode as UTF-8", () => {
    assertEquals(parseProcArgs2(procargs(1, "/bin/é\0\0", "é-ü\0"))?.argv, ["é-ü"]);
  });
  await t.step("argc 0 gives an empty argv", () => {
    assertEquals(parseProcArgs2(procargs(0, "/sbin/launchd\0\0")), {
      argc: 0,
      exe: "/sbin/launchd",
      argv: [],
    });
  });
  await t.step("a buffer with fewer strings than argc is null", () => {
    assertEquals(parseProcArgs2(procargs(3, "/bin/sh\0\0", "sh\0", "-c\0")), null);
  });
  await t.step("too short or negative argc is null", () => {
    assertEquals(parseProcArgs2(new Uint8Array(3)), null);
    assertEquals(parseProcArgs2(procargs(-1, "/bin/sh\0")), null);
  });
});

Deno.test({
  name: "darwinBackend is null where libSystem cannot be opened",
  ignore: Deno.build.os === "darwin",
  fn() {
    assertEquals(darwinBackend(), null);
  },
});

Deno.test({
  name: "darwinBackend on a real Mac",
  ignore: Deno.build.os !== "darwin",
  async fn(t) {
    const b = darwinBackend();
    assert(b !== null);
    await t.step("this process exists with a darwin token", () => {
      const p = b.probe(Deno.pid);
      assert(p.kind === "exists");
      assertEquals(p.info.ppid, Deno.ppid);
      assert(p.info.startToken !== null && /^darwin:\d+\.\d{6}$/.test(p.info.startToken));
      assertEquals(p.info.zombie, false);
    });
    await t.step("command names deno", () => {
      assert(b.command(Deno.pid).exe?.endsWith("deno"));
    });
  },
});

Deno.test("formatHostUuid: a uuid_t as IOPlatformUUID text", () => {
  const bytes = Uint8Array.from([
    0x56,
    0x4d,
    0x1a,
    0x2b,
    0x3c,
    0x4d,
    0x5e,
    0x6f,
    0x70,
    0x81,
    0x92,
    0xa3,
    0xb4,
    0xc5,
    0xd6,
    0xe7,
  ]);
  assertEquals(formatHostUuid(bytes), "564D1A2B-3C4D-5E6F-7081-92A3B4C5D6E7");
  assertEquals(formatHostUuid(new Uint8Array(16)), null, "all zero: no answer");
  assertEquals(formatHostUuid(new Uint8Array(15).fill(1)), null);
});
