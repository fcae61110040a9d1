import { assert, assertEquals, assertMatch } from "../assert.ts";
import { ExternalSort } from "../../src/cli/external_sort.ts";

function collect(
  o: ExternalSort,
  sep = ",",
  map?: (t: string, tie: string, mark: number) => string,
): string {
  const parts: Uint8Array[] = [];
  o.emit((b) => parts.push(b.slice()), sep, map);
  return parts.map((p) => new TextDecoder().decode(p)).join("");
}

Deno.test("ExternalSort: newest first, ties by path, no time last; the same whether spilled or not", () => {
  const rows: [number, string, string][] = [
    [2, "/s/h/10.json", "b10"],
    [5, "/s/h/3.json", "a3"],
    [2, "/s/h/9.json", "b9"],
    [NaN, "/s/h/1.json", "z1"],
    [2, "/s/g/99.json", "b99"],
    [-Infinity, "/s/h/x.json", "zx"],
    [7, "/d/é.jsonl", "ü✓"],
  ];
  const expected = "ü✓,a3,b99,b10,b9,z1,zx";
  for (const budget of [1 << 20, 0, 3]) {
    using o = new ExternalSort(budget);
    for (const [k, p, t] of rows) o.add(k, p, t);
    assertEquals(o.size, rows.length);
    assertEquals(collect(o), expected, `budget ${budget}`);
  }
  using big = new ExternalSort(0);
  const long = "x".repeat(3 * 1024 * 1024);
  big.add(1, "/a/1.json", long);
  big.add(2, "/a/2.json", "short");
  assertEquals(collect(big, "|", (t) => t.slice(0, 3)), "sho|xxx");
});

Deno.test("ExternalSort: many sorted runs merge into the order one sort gives", () => {
  // A small PRNG: the same rows every run.
  let seed = 42;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const rows: [number, string, string][] = [];
  for (let i = 0; i < 3000; i++) {
    const key = rand(10) === 0 ? NaN : rand(500); // many equal keys: ties by path
    const dir = rand(3) === 0 ? "/s/g/" : "/s/h/";
    const name = rand(20) === 0 ? `${i}.abc.json` : `${i + 1}.json`;
    // Now and then a row longer than a run reader's block (16 KiB).
    const text = `${i}:` + "é".repeat(rand(40) === 0 ? 9000 + rand(5000) : rand(300));
    rows.push([key, dir + name, text]);
  }
  const order = rows.map((r, i) => ({ r, i })).sort((a, b) => {
    const ka = Number.isNaN(a.r[0]) ? -Infinity : a.r[0];
    const kb = Number.isNaN(b.r[0]) ? -Infinity : b.r[0];
    if (ka !== kb) return ka < kb ? 1 : -1;
    return a.r[1] < b.r[1] ? -1 : a.r[1] > b.r[1] ? 1 : 0;
  });
  const expected = order.map(({ r }) => r[2]).join("\n");
  for (const budget of [1 << 30, 100_000, 20_000]) {
    using o = new ExternalSort(budget);
    for (const [k, p, t] of rows) o.add(k, p, t);
    assertEquals(collect(o, "\n"), expected, `budget ${budget}`);
    const ties: string[] = [];
    collect(o, "\n", (t, tie) => (ties.push(tie), t));
    assertEquals(ties, order.map(({ r }) => r[1]), `ties, budget ${budget}`);
  }
});

Deno.test("ExternalSort: each row's mark comes back with it, spilled or not", () => {
  for (const budget of [1 << 20, 0, 40]) {
    using o = new ExternalSort(budget);
    for (let i = 0; i < 50; i++) {
      o.add(i, `/s/h/${i}.json`, `row ${i}`, i % 3 === 0 ? NaN : i * 7);
    }
    const got: string[] = [];
    collect(o, "\n", (t, tie, mark) => (got.push(`${t}|${tie}|${mark}`), t));
    const want = Array.from({ length: 50 }, (_, j) => 49 - j)
      .map((i) => `row ${i}|/s/h/${i}.json|${i % 3 === 0 ? NaN : i * 7}`);
    assertEquals(got, want, `budget ${budget}`);
  }
});

Deno.test("ExternalSort: memory is bounded by its budget, not by the rows added", () => {
  // Before, every row kept 36 bytes of key and offsets in memory (7 MB here, as ArrayBuffers:
  // `external`); now a spilled row leaves nothing behind but its bytes in the temp file.
  using o = new ExternalSort(64 * 1024);
  const before = Deno.memoryUsage().external;
  for (let i = 0; i < 200_000; i++) o.add(i % 1000, `/s/h/${i + 1}.json`, `row ${i}`);
  const grown = Deno.memoryUsage().external - before;
  assert(grown < 2 * 1024 * 1024, `external memory grew by ${grown} bytes`);
  const lines = collect(o, "\n").split("\n");
  assertEquals(lines.length, 200_000);
  // Newest (key 999) first; the last of key 0 by path: "/s/h/99001.json" sorts after the rest.
  assertEquals([lines[0], lines[199_999]], ["row 999", "row 99000"]);
});

Deno.test("ExternalSort: rows written in place (addWritten) come out as the same rows added as text", async () => {
  const { jsonElement, writeJsonElement } = await import("../../src/cli/json_element.ts");
  let seed = 9;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const rows = Array.from({ length: 2000 }, (_, i) => ({
    n: i,
    s: rand(20) === 0 ? "é\u202e\x7f".repeat(rand(3000)) : "x".repeat(rand(2000)),
  }));
  for (const budget of [1 << 30, 50_000, 0]) {
    using a = new ExternalSort(budget);
    using b = new ExternalSort(budget);
    for (const r of rows) {
      a.add(r.n % 37, `/h/${r.n}.json`, jsonElement(r));
      // A first try with no room at all: the row is asked for again with more.
      b.addWritten(
        r.n % 37,
        `/h/${r.n}.json`,
        (v, buf, at) => writeJsonElement(v, 1, buf, at),
        r,
        NaN,
        1,
      );
    }
    assertEquals(collect(b, ",\n"), collect(a, ",\n"), `budget ${budget}`);
  }
});

Deno.test("ExternalSort: the temp file is made new and private, and nothing of it is left behind", async (t) => {
  const rows = Array.from({ length: 500 }, (_, i) => `row ${i} ${"x".repeat(i % 50)}`);
  const expected = rows.map((r, i) => ({ r, i })).sort((a, b) => b.i - a.i).map(({ r }) => r)
    .join("\n");
  // The test's own temp directory, given, not set as $TMPDIR: the environment is the whole
  // process's, and the other tests running beside this one would make their files in it.
  const tmp = Deno.makeTempDirSync();
  try {
    await t.step("spilled: an unlinked file of mode 0600, none left in the temp directory", () => {
      using o = new ExternalSort(0, tmp);
      for (const [i, r] of rows.entries()) o.add(i, `/h/${i}.json`, r);
      assertEquals([...Deno.readDirSync(tmp)], []);
      if (Deno.build.os === "linux") {
        const spill = [...Deno.readDirSync("/proc/self/fd")]
          .map((e) => `/proc/self/fd/${e.name}`)
          .filter((fd) => {
            try {
              return Deno.readLinkSync(fd).startsWith(`${tmp}/roster-rows-`);
            } catch {
              return false; // the directory's own fd, gone by now
            }
          });
        assertEquals(spill.length, 1);
        assertMatch(Deno.readLinkSync(spill[0]), / \(deleted\)$/);
        assertEquals(Deno.statSync(spill[0]).mode! & 0o777, 0o600);
      }
      assertEquals(collect(o, "\n"), expected);
    });
    await t.step("a link put in the file's place is not followed: the rows stay in memory", () => {
      const victim = `${tmp}/victim`;
      Deno.writeTextFileSync(victim, "theirs");
      const remove = Deno.removeSync;
      let planted = false;
      // The other user wins the race between the name's reservation and the file's creation.
      Deno.removeSync = (path: string | URL, options?: Deno.RemoveOptions) => {
        remove(path, options);
        if (!planted && String(path).includes("roster-rows-")) {
          planted = true;
          Deno.symlinkSync(victim, path);
        }
      };
      try {
        using o = new ExternalSort(0, tmp);
        for (const [i, r] of rows.entries()) o.add(i, `/h/${i}.json`, r);
        assert(planted);
        assertEquals(collect(o, "\n"), expected);
      } finally {
        Deno.removeSync = remove;
      }
      assertEquals(Deno.readTextFileSync(victim), "theirs");
    });
    await t.step("no temp directory: the rows stay in memory", () => {
      using o = new ExternalSort(0, `${tmp}/missing`);
      for (const [i, r] of rows.entries()) o.add(i, `/h/${i}.json`, r);
      assertEquals(collect(o, "\n"), expected);
    });
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
});
