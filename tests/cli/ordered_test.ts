import { assertEquals } from "../assert.ts";
import { Ordered } from "../../src/cli/ordered.ts";

function collect(o: Ordered, sep = ",", map?: (t: string) => string): string {
  const parts: Uint8Array[] = [];
  o.emit((b) => parts.push(b.slice()), sep, map);
  return parts.map((p) => new TextDecoder().decode(p)).join("");
}

Deno.test("Ordered: newest first, ties by path, no time last; the same whether spilled or not", () => {
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
    using o = new Ordered(budget);
    for (const [k, p, t] of rows) o.add(k, p, t);
    assertEquals(o.size, rows.length);
    assertEquals(collect(o), expected, `budget ${budget}`);
  }
  using big = new Ordered(0);
  const long = "x".repeat(3 * 1024 * 1024);
  big.add(1, "/a/1.json", long);
  big.add(2, "/a/2.json", "short");
  assertEquals(collect(big, "|", (t) => t.slice(0, 3)), "sho|xxx");
});
