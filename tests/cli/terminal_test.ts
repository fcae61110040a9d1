import { assertEquals } from "../assert.ts";
import { printable, printableLines, terminalJson } from "../../src/cli/terminal.ts";

Deno.test("printable: every character a terminal acts on is made visible", () => {
  assertEquals(printable("a\x1b]0;t\x07b"), "a\\x1b]0;t\\x07b");
  assertEquals(
    printable("\u009d52;c;x\u009c\u0090\u009b\u009e\u009f\x7f"),
    "\\x9d52;c;x\\x9c\\x90\\x9b\\x9e\\x9f\\x7f",
  );
  assertEquals(
    printable("\u202e\u2066\u2069\u2028\u2029\u200e\u061c"),
    "\\u202e\\u2066\\u2069\\u2028\\u2029\\u200e\\u061c",
  );
  assertEquals(printable("héllo wörld 日本 ✓"), "héllo wörld 日本 ✓");
  assertEquals(printable("a\nb\tc"), "a\\x0ab\\x09c");
  assertEquals(printableLines("a\x1b\nb"), "a\\x1b\nb");
});

Deno.test("terminalJson: the same JSON, with nothing a terminal acts on", () => {
  const value = { s: "x\u009d\u202e\x7f\u2028y\x1b", n: 1 };
  const text = terminalJson(JSON.stringify(value));
  // deno-lint-ignore no-control-regex
  assertEquals(/[\x00-\x1f\x7f-\x9f\u2028\u202e]/.test(text), false);
  assertEquals(JSON.parse(text), value);
});
