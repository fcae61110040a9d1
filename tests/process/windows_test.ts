import { assert, assertEquals } from "../assert.ts";
import {
  decodeFiletime,
  decodeProcessEntry32W,
  filetimeToUnixMs,
  judgeWindowsProbe,
  type ProcessEntry,
  verifiedParent,
  windowsBackend,
  windowsToken,
} from "../../src/process/windows.ts";

const EPOCH = 116444736000000000n;
const KNOWN_MS = Date.parse("2026-11-29T18:41:32.123Z");
// 4567 extra 100 ns units: below a millisecond, must be kept in the raw value and dropped in ms.
const KNOWN_RAW = BigInt(KNOWN_MS) * 10_000n + EPOCH + 4567n;

function halves(raw: bigint): [number, number] {
  return [Number(raw & 0xffffffffn), Number(raw >> 32n)];
}

function filetimeBytes(raw: bigint, offset = 0, size = 8): Uint8Array {
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  const [lo, hi] = halves(raw);
  v.setUint32(offset, lo, true);
  v.setUint32(offset + 4, hi, true);
  return bytes;
}

Deno.test("FILETIME decoding", async (t) => {
  await t.step("the Unix epoch FILETIME is 0 ms", () => {
    assertEquals(filetimeToUnixMs(...halves(EPOCH)), 0);
    assertEquals(decodeFiletime(filetimeBytes(EPOCH)), { raw: EPOCH, unixMs: 0 });
  });
  await t.step("a known date round-trips through lo/hi", () => {
    assertEquals(filetimeToUnixMs(...halves(KNOWN_RAW)), KNOWN_MS);
    assertEquals(
      new Date(filetimeToUnixMs(...halves(KNOWN_RAW))).toISOString(),
      "2026-11-29T18:41:32.123Z",
    );
  });
  await t.step("bytes at an offset keep the raw 100 ns count exactly", () => {
    const d = decodeFiletime(filetimeBytes(KNOWN_RAW, 16, 32), 16);
    assertEquals(d.raw, KNOWN_RAW);
    assertEquals(d.unixMs, KNOWN_MS);
  });
  await t.step("the low half is unsigned", () => {
    const raw = (0x01dd_0000n << 32n) | 0xffff_ffffn;
    assertEquals(decodeFiletime(filetimeBytes(raw)).raw, raw);
    assertEquals(filetimeToUnixMs(0xffffffff, 0x01dd0000), filetimeToUnixMs(-1, 0x01dd0000));
  });
  await t.step("before 1970 rounds down, not toward zero", () => {
    assertEquals(filetimeToUnixMs(...halves(EPOCH - 1n)), -1);
    assertEquals(filetimeToUnixMs(0, 0), -11644473600000);
  });
  await t.step("token is the raw count in decimal", () => {
    assertEquals(windowsToken(KNOWN_RAW), `windows:${KNOWN_RAW}`);
    assertEquals(windowsToken(EPOCH), "windows:116444736000000000");
  });
});

// x64 PROCESSENTRY32W offsets from the reference sheet, written out rather than imported.
function entry(pid: number, ppid: number, exe: string, dwSize = 568, size = 568): Uint8Array {
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, dwSize, true);
  v.setUint32(8, pid, true);
  v.setUint32(32, ppid, true);
  for (let i = 0; i < exe.length && 44 + i * 2 + 1 < size; i++) {
    v.setUint16(44 + i * 2, exe.charCodeAt(i), true);
  }
  return bytes;
}

Deno.test("decodeProcessEntry32W", async (t) => {
  await t.step("a plain entry", () => {
    assertEquals(decodeProcessEntry32W(entry(4321, 888, "node.exe")), {
      pid: 4321,
      ppid: 888,
      exeFile: "node.exe",
    });
  });
  await t.step("a non-ASCII image name, astral characters included", () => {
    const name = "Überagent-代理-🤖.exe";
    assertEquals(decodeProcessEntry32W(entry(8, 4, name))?.exeFile, name);
  });
  await t.step("whatever follows the NUL is ignored", () => {
    const bytes = entry(8, 4, "a.exe");
    new DataView(bytes.buffer).setUint16(44 + 6 * 2, 0x41, true);
    assertEquals(decodeProcessEntry32W(bytes)?.exeFile, "a.exe");
  });
  await t.step("a full 260-character name with no NUL stops at the field", () => {
    const name = "x".repeat(260);
    const bytes = entry(8, 4, name + "YZ");
    assertEquals(decodeProcessEntry32W(bytes)?.exeFile, name);
  });
  await t.step("pids above 2^31 stay unsigned", () => {
    assertEquals(decodeProcessEntry32W(entry(0xfffffffc, 0x80000000, "a"))?.pid, 0xfffffffc);
  });
  await t.step("wrong length or wrong dwSize is null", () => {
    assertEquals(decodeProcessEntry32W(entry(1, 2, "a", 568, 556)), null);
    assertEquals(decodeProcessEntry32W(entry(1, 2, "a", 568, 570)), null);
    // The 32-bit layout is 556 bytes: refuse it rather than read its fields at x64 offsets.
    assertEquals(decodeProcessEntry32W(entry(1, 2, "a", 556, 568)), null);
  });
});

Deno.test("judgeWindowsProbe", async (t) => {
  const listed: ProcessEntry = { pid: 4321, ppid: 888, exeFile: "claude.exe" };
  const creation = filetimeBytes(KNOWN_RAW);
  const token = `windows:${KNOWN_RAW}`;
  await t.step("no handle and no snapshot: cannot tell", () => {
    assertEquals(
      judgeWindowsProbe(4321, { opened: false, creation: null, exitCode: null, entry: undefined }),
      { kind: "unsupported" },
    );
  });
  await t.step("no handle and not in the snapshot: gone", () => {
    assertEquals(
      judgeWindowsProbe(4321, { opened: false, creation: null, exitCode: null, entry: null }),
      { kind: "gone" },
    );
  });
  await t.step("no handle but listed (access denied): exists without a token", () => {
    assertEquals(
      judgeWindowsProbe(4321, { opened: false, creation: null, exitCode: null, entry: listed }),
      {
        kind: "exists",
        info: {
          pid: 4321,
          ppid: 888,
          startToken: null,
          startedAtMs: null,
          zombie: false,
          name: "claude.exe",
        },
      },
    );
  });
  await t.step("running: token, start time, parent and name", () => {
    assertEquals(
      judgeWindowsProbe(4321, { opened: true, creation, exitCode: 259, entry: listed }),
      {
        kind: "exists",
        info: {
          pid: 4321,
          ppid: 888,
          startToken: token,
          startedAtMs: KNOWN_MS,
          zombie: false,
          name: "claude.exe",
        },
      },
    );
  });
  await t.step("an exit code other than STILL_ACTIVE is an exited process", () => {
    for (const code of [0, 1, 258, 260, 0xc000013a]) {
      const r = judgeWindowsProbe(4321, { opened: true, creation, exitCode: code, entry: listed });
      assert(r.kind === "exists" && r.info.zombie, `exit code ${code}`);
      assertEquals(r.info.startToken, token);
    }
  });
  await t.step("STILL_ACTIVE but missing from the snapshot exited with code 259", () => {
    const r = judgeWindowsProbe(4321, { opened: true, creation, exitCode: 259, entry: null });
    assert(r.kind === "exists" && r.info.zombie);
  });
  await t.step("STILL_ACTIVE without a snapshot is running, parent unknown", () => {
    const r = judgeWindowsProbe(4321, { opened: true, creation, exitCode: 259, entry: undefined });
    assert(r.kind === "exists");
    assertEquals(r.info.zombie, false);
    assertEquals(r.info.ppid, null);
    assertEquals(r.info.startToken, token);
  });
  await t.step("a parent created after the child holds a reused pid: parent unknown", () => {
    const later = filetimeBytes(KNOWN_RAW + 1n);
    const r = judgeWindowsProbe(4321, {
      opened: true,
      creation,
      exitCode: 259,
      entry: listed,
      parentCreation: later,
    });
    assert(r.kind === "exists");
    assertEquals(r.info.ppid, null);
  });
  await t.step("a parent created earlier, at the same tick, or unreadable is kept", () => {
    for (const parentCreation of [filetimeBytes(KNOWN_RAW - 1n), creation, null, undefined]) {
      const r = judgeWindowsProbe(4321, {
        opened: true,
        creation,
        exitCode: 259,
        entry: listed,
        parentCreation,
      });
      assert(r.kind === "exists");
      assertEquals(r.info.ppid, 888);
    }
  });
  await t.step("verifiedParent needs both times to refuse", () => {
    assertEquals(verifiedParent(8, 10n, 11n), null);
    assertEquals(verifiedParent(8, 10n, 10n), 8);
    assertEquals(verifiedParent(8, null, 11n), 8);
    assertEquals(verifiedParent(null, 10n, 11n), null);
  });
  await t.step("GetProcessTimes failing leaves the token null", () => {
    const r = judgeWindowsProbe(4321, {
      opened: true,
      creation: null,
      exitCode: 259,
      entry: listed,
    });
    assert(r.kind === "exists");
    assertEquals(r.info.startToken, null);
    assertEquals(r.info.startedAtMs, null);
  });
});

Deno.test({
  name: "windowsBackend is null where kernel32 cannot be opened",
  ignore: Deno.build.os === "windows",
  fn() {
    assertEquals(windowsBackend(), null);
  },
});

Deno.test({
  name: "windowsBackend on a real Windows",
  ignore: Deno.build.os !== "windows",
  async fn(t) {
    const b = windowsBackend();
    assert(b !== null);
    await t.step("this process exists with a windows token", () => {
      const p = b.probe(Deno.pid);
      assert(p.kind === "exists");
      assertEquals(p.info.ppid, Deno.ppid);
      assertEquals(p.info.zombie, false);
      assert(p.info.startToken !== null && /^windows:\d+$/.test(p.info.startToken));
    });
    await t.step("command gives the image name only", () => {
      const c = b.command(Deno.pid);
      assert(c.exe !== null && /deno/i.test(c.exe));
      assertEquals(c.argv, null);
    });
  },
});
