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

Deno.test("char-by-char readers answer as the regexes they replaced", async (t) => {
  await t.step("RFC 3339 times (time.ts)", () => {
    const re = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
    const examples = [
      "2026-12-03T10:22:06Z",
      "2026-12-03T10:22:06.123Z",
      "2026-12-03t10:22:06.123456789z",
      "2026-12-03 10:22:06+01:00",
      "2026-12-03T10:22:06.1234567890Z",
      "2026-12-03T10:22:06-09:30",
    ];
    agrees(
      "isRfc3339",
      corpus(examples, "0123456789-:.TtZz +x", 2, 6000),
      isRfc3339,
      (s) => re.test(s),
    );
    assertEquals(parseTime("2026-12-03T10:22:06.5+01:00"), Date.parse("2026-12-03T09:22:06.5Z"));
    assertEquals(parseTime("2026-12-03T10:22:06"), null);
  });

  await t.step("pids as text (identity/pid.ts)", () => {
    const re = new RegExp(`^${PID_TEXT}$`);
    const examples = ["1", "12332", "4294967295", "9999999999", "01", "12345678901"];
    agrees(
      "isPidText",
      corpus(examples, "0123456789x-+ .", 3),
      (s) => isPidText(s),
      (s) => re.test(s),
    );
    assertEquals(isPidText("x12y", 1, 3), true);
    assertEquals(isPidText("x02y", 1, 3), false);
  });

  await t.step("absolute paths (fs/path.ts)", () => {
    const re = /^([A-Za-z]:)?[\\/]/;
    agrees(
      "isAbsolute",
      corpus(["/x", "\\x", "C:/x", "c:\\x", "C:x", "1:/"], "aZ:/\\.1", 4),
      isAbsolute,
      (s) => re.test(s),
    );
  });

  await t.step("runtimes, versions and script extensions (registry/owner.ts)", () => {
    const runtime = /^(node|nodejs|bun|deno|python[0-9.]*|ruby|perl)(\.exe)?$/;
    const runtimes = [
      "node",
      "nodejs.exe",
      "bun",
      "deno",
      "python",
      "python3.11",
      "python.exe",
      "ruby",
      "perl.exe",
      "python3..exe",
    ];
    agrees(
      "isRuntime",
      corpus(runtimes, "nodejsbupythr3.1ex", 5, 6000),
      isRuntime,
      (s) => runtime.test(s),
    );
    const version = /^v?\d+(\.\d+)+([-+][0-9A-Za-z.-]+)?$/;
    const versions = [
      "2.1.3",
      "v0.61.0",
      "0.169.0-alpha.1",
      "1.2+build.5",
      "1",
      "v1.",
      "1.2-",
      "1.2_x",
    ];
    agrees(
      "isVersionName",
      corpus(versions, "v0123.-+aZ_", 6, 6000),
      isVersionName,
      (s) => version.test(s),
    );
    const ext = /\.(c?js|mjs|ts|py|rb|exe|cmd|bat)$/;
    const names = [
      "cli.js",
      "cli.cjs",
      "cli.mjs",
      "x.ts",
      "x.py",
      "x.rb",
      "codex.exe",
      "x.cmd",
      "x.bat",
      "x.js.js",
      ".js",
    ];
    agrees(
      "withoutScriptExt",
      corpus(names, "cjsmtpyrbexdat.", 7, 6000),
      withoutScriptExt,
      (s) => s.replace(ext, ""),
    );
  });

  await t.step("place directory names (registry/layout.ts)", () => {
    agrees(
      "hostDirName",
      corpus(["vm", "build-01.example", "a b/c", ".", "..", "é"], "aZ0._-~/ é\u0000", 8),
      hostDirName,
      (host) => {
        const safe = host.replace(/[^A-Za-z0-9._-]/g, "_");
        return safe === "" || safe === "." || safe === ".." ? `_${safe}` : safe;
      },
    );
    agrees(
      "nsInode",
      corpus(["pid:[4026531836]", "pid:[]", "net:[1]"], "pid:[]0123x", 9),
      nsInode,
      (s) => /^pid:\[(\d+)\]$/.exec(s)?.[1] ?? null,
    );
  });

  await t.step("the helpers themselves (chars.ts)", () => {
    const blanks = corpus(["a b", " a\t b ", "1 2 3", "\t"], "ab \t\n", 10);
    agrees(
      "splitBlanks",
      blanks,
      (s) => JSON.stringify(splitBlanks(s)),
      (s) => JSON.stringify(s.split(/[ \t]+/)),
    );
    agrees(
      "isDigits",
      corpus(["0", "123", "-1", "--1"], "01-x", 11),
      (s) => isDigits(s),
      (s) => /^\d+$/.test(s),
    );
    agrees(
      "isDigits signed",
      corpus(["0", "-123", "-", "1-"], "01-x", 12),
      (s) => isDigits(s, true),
      (s) => /^-?\d+$/.test(s),
    );
    agrees(
      "isLowerWord",
      corpus(["linux", "darwin", "a_1", "A"], "az09_A-", 13),
      (s) => isLowerWord(s, 5),
      (s) => /^[a-z0-9_]{1,5}$/.test(s),
    );
    agrees(
      "replaceOthers word",
      corpus(["a-b_c", "a.b c"], "aZ9_-. é", 14),
      (s) => replaceOthers(s, isWordChar, "_"),
      (s) => s.replace(/[^A-Za-z0-9_-]/g, "_"),
    );
    agrees(
      "replaceOthers name",
      corpus(["a-b_c", "a.b c"], "aZ9_-. é", 15),
      (s) => replaceOthers(s, isNameChar, "_"),
      (s) => s.replace(/[^A-Za-z0-9._-]/g, "_"),
    );
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
