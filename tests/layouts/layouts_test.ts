/**
 * Independent truth for the Windows decoders: struct sizes, offsets and constants read from
 * mingw-w64's headers (tests/layouts/windows.c compiled with `x86_64-w64-mingw32-gcc -S`), not
 * from the numbers in src/process/windows.ts. Bytes laid out at the headers' offsets must
 * decode to the values put there. mingw-w64 is installed by .ci/setup.d/30-wine.sh.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  decodeFiletime,
  decodeProcessEntry32W,
  FILETIME_UNIX_EPOCH,
  PROCESS_QUERY_LIMITED_INFORMATION,
  PROCESSENTRY32W_SIZE,
  STILL_ACTIVE,
  TH32CS_SNAPPROCESS,
} from "../../src/process/windows.ts";

/** `layout_NAME` constants from gcc's assembly: `.quad N`, or `.zero 8`/`.space 8` for 0. */
export function parseLayouts(asm: string): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const lines = asm.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const label = /^layout_(\w+):/.exec(lines[i]);
    if (label === null) continue;
    for (let j = i + 1; j < lines.length; j++) {
      const quad = /^\s*\.quad\s+(-?\d+)/.exec(lines[j]);
      if (quad !== null) {
        out.set(label[1], BigInt(quad[1]));
        break;
      }
      if (/^\s*\.(zero|space)\s+8\b/.test(lines[j])) {
        out.set(label[1], 0n);
        break;
      }
    }
  }
  return out;
}

function windowsLayouts(): Map<string, bigint> {
  const src = new URL("./windows.c", import.meta.url).pathname;
  const out = new Deno.Command("x86_64-w64-mingw32-gcc", {
    args: ["-S", "-O0", "-o", "-", src],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  assertEquals(out.code, 0, dec.decode(out.stderr));
  return parseLayouts(dec.decode(out.stdout));
}

Deno.test({
  name: "Windows x64 layouts from mingw-w64's headers",
  // On Linux the compiler is installed by .ci/setup.d; the macOS and Windows CI jobs have none.
  ignore: Deno.build.os !== "linux",
  async fn(t) {
    const h = windowsLayouts();
    const n = (name: string) => {
      const v = h.get(name);
      assert(v !== undefined, `no layout_${name} in the compiler's output`);
      return Number(v);
    };

    await t.step("constants", () => {
      assertEquals(n("PROCESSENTRY32W_size"), PROCESSENTRY32W_SIZE);
      assertEquals(n("PROCESS_QUERY_LIMITED_INFORMATION"), PROCESS_QUERY_LIMITED_INFORMATION);
      assertEquals(n("TH32CS_SNAPPROCESS"), TH32CS_SNAPPROCESS);
      assertEquals(n("STILL_ACTIVE"), STILL_ACTIVE);
      assertEquals(h.get("INVALID_HANDLE_VALUE"), -1n);
      assertEquals(n("PROCESSENTRY32W_dwSize"), 0);
    });

    await t.step("a PROCESSENTRY32W laid out at the headers' offsets decodes", () => {
      const bytes = new Uint8Array(n("PROCESSENTRY32W_size"));
      const v = new DataView(bytes.buffer);
      v.setUint32(n("PROCESSENTRY32W_dwSize"), bytes.length, true);
      v.setUint32(n("PROCESSENTRY32W_th32ProcessID"), 0x8765_4320, true);
      v.setUint32(n("PROCESSENTRY32W_th32ParentProcessID"), 4242, true);
      const exe = "ü".repeat(n("PROCESSENTRY32W_szExeFile_chars"));
      for (let i = 0; i < exe.length; i++) {
        v.setUint16(n("PROCESSENTRY32W_szExeFile") + 2 * i, exe.charCodeAt(i), true);
      }
      assertEquals(decodeProcessEntry32W(bytes), {
        pid: 0x8765_4320,
        ppid: 4242,
        exeFile: exe,
      });
    });

    await t.step("a FILETIME is low half then high half", () => {
      const bytes = new Uint8Array(n("FILETIME_size"));
      const v = new DataView(bytes.buffer);
      const raw = FILETIME_UNIX_EPOCH + 12_345n;
      v.setUint32(n("FILETIME_dwLowDateTime"), Number(raw & 0xffff_ffffn), true);
      v.setUint32(n("FILETIME_dwHighDateTime"), Number(raw >> 32n), true);
      assertEquals(decodeFiletime(bytes), { raw, unixMs: 1 });
    });
  },
});
