import { assert, assertEquals } from "../assert.ts";
import { printable, printableLines, terminalJson } from "../../src/cli/terminal.ts";
import { dispatchMessage } from "../../src/continuation/message.ts";
import { PLAN } from "../continuation/fixtures.ts";

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

Deno.test("the dispatch message and printable take the same characters as unsafe", () => {
  // Every character printable escapes, and its neighbours, in a tool call's name: the message
  // (typed into a pane by tmux) turns exactly the escaped ones into spaces.
  const chars = [
    ..."\x00\x1b\x1f\x7f\x9b\x9f\u061c\u200e\u200f\u2028\u2029\u202a\u202e\u2066\u2069",
  ];
  const safe = [..." a\u00a0\u061b\u200d\u2027\u202f\u2065\u206a"];
  const message = (ch: string) =>
    dispatchMessage({ ...PLAN, tool_calls: [{ id: "i", name: `a${ch}b` }] }, "c1");
  for (const ch of chars) {
    assertEquals(printable(ch) === ch, false, JSON.stringify(ch));
    assertEquals(message(ch).includes("a b (i)"), true, JSON.stringify(ch));
  }
  for (const ch of safe) {
    assertEquals(printable(ch), ch, JSON.stringify(ch));
    assertEquals(message(ch).includes(`a${ch}b (i)`), true, JSON.stringify(ch));
  }
});

Deno.test("printable: no two texts print the same (a backslash that reads as an escape is one)", () => {
  assertEquals(printable("\\x1b[31m"), "\\\\x1b[31m");
  assertEquals(printable("\x1b[31m"), "\\x1b[31m");
  assertEquals(printable("C:\\Users\\me"), "C:\\Users\\me", "a Windows path as it is");
  assertEquals(printable("a\\"), "a\\\\", "a trailing backslash: roster's text may follow");
  // Every string of up to 4 characters over the ones that matter, printed: all distinct.
  const alphabet = ["\\", "x", "u", "1", "b", "\x1b", "\u202e", "a"];
  const seen = new Map<string, string>();
  const walk = (s: string, depth: number) => {
    const shown = printable(s);
    const other = seen.get(shown);
    if (other !== undefined && other !== s) {
      throw new Error(`${JSON.stringify(s)} and ${JSON.stringify(other)} both print ${shown}`);
    }
    seen.set(shown, s);
    if (depth < 4) { for (const c of alphabet) walk(s + c, depth + 1); }
  };
  walk("", 0);
  assert(seen.size > 4000);
});

Deno.test("the dispatch message cuts long names between characters, never inside one", () => {
  // A name cut at 60 right after the first half of 😀, and a lone half from a hook's JSON: the
  // message stays well formed (a lone half is a string jq, and a pane, cannot take).
  for (const name of [`${"y".repeat(59)}\u{1F600}zz`, `y\ud83dz`]) {
    const text = dispatchMessage({ ...PLAN, tool_calls: [{ id: "i", name }] }, "c1");
    assert(text.isWellFormed(), JSON.stringify(text));
  }
});
