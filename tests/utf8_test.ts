/** decodeUtf8 gives what a TextDecoder gives, by the ASCII path and by the decoder alike. */
import { assertEquals, assertThrows } from "./assert.ts";
import { decodeUtf8, encodeUtf8 } from "../src/utf8.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

Deno.test("decodeUtf8 answers as TextDecoder with the same options", async (t) => {
  const ascii = encodeUtf8("Name:\tdeno\nTgid:\t42\n".repeat(500)); // past one apply's slice
  const cases: [string, Uint8Array][] = [
    ["empty", bytes()],
    ["ASCII", encodeUtf8('{"cwd":"/tmp/x","pid":42}')],
    ["ASCII longer than a slice", ascii],
    ["NUL and DEL", bytes(0, 65, 127, 0)],
    ["UTF-8", encodeUtf8("/home/zoë/プロジェクト")],
    ["a BOM first", bytes(0xef, 0xbb, 0xbf, 65)],
    ["invalid", bytes(65, 0xff, 66, 0xc3)],
    ["an 0x80 after a slice of ASCII", new Uint8Array([...ascii.subarray(0, 5000), 0x80])],
  ];
  for (const [name, input] of cases) {
    await t.step(name, () => {
      for (const options of [{}, { ignoreBOM: true }, { fatal: true }]) {
        const d = new TextDecoder("utf-8", options);
        let expected: string | TypeError;
        try {
          expected = d.decode(input);
        } catch (err) {
          expected = err as TypeError;
        }
        if (expected instanceof TypeError) {
          assertThrows(() => decodeUtf8(input, options), TypeError);
        } else assertEquals(decodeUtf8(input, options), expected, JSON.stringify(options));
      }
    });
  }
  await t.step("past the ASCII budget, through the decoder: the same text", () => {
    // 64 KiB of ASCII a process decodes by builtins; this spends it, then the rest goes on.
    for (let i = 0; i < 12; i++) assertEquals(decodeUtf8(ascii), new TextDecoder().decode(ascii));
  });
});
