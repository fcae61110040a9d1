/**
 * The char-by-char readers that stand where a hook's path had regexes (src/chars.ts: why):
 * each answers as the regex it replaced, on the forms it was written for, their mutations and
 * random strings over the characters that matter.
 */
import { assertEquals } from "./assert.ts";
import {
  every,
  isDigits,
  isLowerWord,
  isNameChar,
  isWordChar,
  lineValue,
  replaceOthers,
  runEnd,
  splitBlanks,
} from "../src/chars.ts";
import { isRfc3339, parseTime } from "../src/time.ts";
import { isPidText, PID_TEXT } from "../src/identity/pid.ts";
import { isAbsolute } from "../src/fs/path.ts";
import { isRuntime, isVersionName, withoutScriptExt } from "../src/registry/owner.ts";
import { hostDirName, nsInode } from "../src/registry/layout.ts";

/** A seeded generator: the same corpus every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `examples`, every one-character change of each over `alphabet`, and random strings. */
function corpus(examples: string[], alphabet: string, seed = 1, count = 3000): string[] {
  const r = random(seed);
  const pick = () => alphabet[Math.floor(r() * alphabet.length)];
  const out = new Set<string>(["", ...examples]);
  for (const e of examples) {
    for (let i = 0; i <= e.length; i++) {
      out.add(e.slice(0, i) + e.slice(i + 1)); // dropped
      out.add(e.slice(0, i) + pick() + e.slice(i)); // inserted
      out.add(e.slice(0, i) + pick() + e.slice(i + 1)); // replaced
    }
  }
  while (out.size < count) {
    const n = Math.floor(r() * 30);
    let s = "";
    for (let i = 0; i < n; i++) s += pick();
    out.add(s);
  }
  return [...out];
}

function agrees<T>(
  name: string,
  inputs: string[],
  mine: (s: string) => T,
  theirs: (s: string) => T,
) {
  for (const s of inputs) assertEquals(mine(s), theirs(s), `${name}(${JSON.stringify(s)})`);
}

/** A test standing where a regex stood: its name, the test, the regex, forms, an alphabet. */
const TESTS: [string, (s: string) => boolean, RegExp, string[], string][] = [
  [
    "isRfc3339 (time.ts)",
    isRfc3339,
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/,
    [
      "2026-12-03T10:22:06Z",
      "2026-12-03T10:22:06.123Z",
      "2026-12-03t10:22:06.123456789z",
      "2026-12-03 10:22:06+01:00",
      "2026-12-03T10:22:06.1234567890Z",
      "2026-12-03T10:22:06-09:30",
    ],
    "0123456789-:.TtZz +x",
  ],
  [
    "isPidText (identity/pid.ts)",
    (s) => isPidText(s),
    new RegExp(`^${PID_TEXT}$`),
    ["1", "12332", "4294967295", "9999999999", "01", "12345678901"],
    "0123456789x-+ .",
  ],
  [
    "isAbsolute (fs/path.ts)",
    isAbsolute,
    /^([A-Za-z]:)?[\\/]/,
    ["/x", "\\x", "C:/x", "c:\\x", "C:x", "1:/"],
    "aZ:/\\.1",
  ],
  [
    "isRuntime (registry/owner.ts)",
    isRuntime,
    /^(node|nodejs|bun|deno|python[0-9.]*|ruby|perl)(\.exe)?$/,
    ["node", "nodejs.exe", "bun", "deno", "python", "python3.11", "python.exe", "perl.exe"],
    "nodejsbupythr3.1ex",
  ],
  [
    "isVersionName (registry/owner.ts)",
    isVersionName,
    /^v?\d+(\.\d+)+([-+][0-9A-Za-z.-]+)?$/,
    ["2.1.3", "v0.61.0", "0.169.0-alpha.1", "1.2+build.5", "1", "v1.", "1.2-", "1.2_x"],
    "v0123.-+aZ_",
  ],
  ["isDigits (chars.ts)", (s) => isDigits(s), /^\d+$/, ["0", "123", "-1", "--1"], "01-x"],
  ["isDigits signed", (s) => isDigits(s, true), /^-?\d+$/, ["0", "-123", "-", "1-"], "01-x"],
  ["isLowerWord", (s) => isLowerWord(s, 5), /^[a-z0-9_]{1,5}$/, ["linux", "a_1", "A"], "az09_A-"],
];

/** A function standing where a regex's replace or split stood, the same way. */
const MAPS: [string, (s: string) => string, (s: string) => string, string[], string][] = [
  [
    "withoutScriptExt (registry/owner.ts)",
    withoutScriptExt,
    (s) => s.replace(/\.(c?js|mjs|ts|py|rb|exe|cmd|bat)$/, ""),
    ["cli.js", "cli.cjs", "cli.mjs", "x.ts", "x.py", "x.rb", "codex.exe", "x.cmd", "x.js.js"],
    "cjsmtpyrbexdat.",
  ],
  [
    "hostDirName (registry/layout.ts)",
    hostDirName,
    (host) => {
      const safe = host.replace(/[^A-Za-z0-9._-]/g, "_");
      return safe === "" || safe === "." || safe === ".." ? `_${safe}` : safe;
    },
    ["vm", "build-01.example", "a b/c", ".", "..", "é"],
    "aZ0._-~/ é\u0000",
  ],
  [
    "nsInode (registry/layout.ts)",
    (s) => String(nsInode(s)),
    (s) => String(/^pid:\[(\d+)\]$/.exec(s)?.[1] ?? null),
    ["pid:[4026531836]", "pid:[]", "net:[1]"],
    "pid:[]0123x",
  ],
  [
    "splitBlanks (chars.ts)",
    (s) => JSON.stringify(splitBlanks(s)),
    (s) => JSON.stringify(s.split(/[ \t]+/)),
    ["a b", " a\t b ", "1 2 3", "\t"],
    "ab \t\n",
  ],
  [
    "replaceOthers, word characters",
    (s) => replaceOthers(s, isWordChar, "_"),
    (s) => s.replace(/[^A-Za-z0-9_-]/g, "_"),
    ["a-b_c", "a.b c"],
    "aZ9_-. é",
  ],
  [
    "replaceOthers, name characters",
    (s) => replaceOthers(s, isNameChar, "_"),
    (s) => s.replace(/[^A-Za-z0-9._-]/g, "_"),
    ["a-b_c", "a.b c"],
    "aZ9_-. é",
  ],
];

Deno.test("char-by-char readers answer as the regexes they replaced", async (t) => {
  for (const [i, [name, mine, re, examples, alphabet]] of TESTS.entries()) {
    await t.step(
      name,
      () => agrees(name, corpus(examples, alphabet, i + 1, 6000), mine, (s) => re.test(s)),
    );
  }
  for (const [i, [name, mine, theirs, examples, alphabet]] of MAPS.entries()) {
    await t.step(name, () => agrees(name, corpus(examples, alphabet, i + 50, 4000), mine, theirs));
  }

  await t.step("the rest of what they answer", () => {
    assertEquals(parseTime("2026-12-03T10:22:06.5+01:00"), Date.parse("2026-12-03T09:22:06.5Z"));
    assertEquals(parseTime("2026-12-03T10:22:06"), null);
    assertEquals(isPidText("x12y", 1, 3), true);
    assertEquals(isPidText("x02y", 1, 3), false);
    assertEquals(isLowerWord(7, 5), false);
    assertEquals(every("", () => false), true);
    assertEquals(runEnd("123ab", (c) => c < 58), 3);
    const status = "Name:\tx\nTgid:\t 12\nTgid:\t13\nPid: 5\t\n";
    assertEquals(lineValue(status, "Tgid"), "12");
    assertEquals(lineValue(status, "Pid"), "5\t");
    assertEquals(lineValue(status, "Name"), "x");
    assertEquals(lineValue(status, "Gid"), null);
    assertEquals(lineValue("XTgid: 1", "Tgid"), null);
  });
});
