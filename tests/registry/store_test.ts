/** A hostile store: every bad file is one malformed row beside the good ones; nothing hangs. */
import { assert, assertEquals } from "../assert.ts";
import { hostDir, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/record.ts";

Deno.test("a hostile store is listed promptly and survives a plain prune", async () => {
  await using home = await tempDir();
  await using live = spawnSleeper();
  const good = await rosterJson<Row>(home.path, ["register", "--pid", String(live.pid)]);
  const dir = hostDir(home.path);
  const put = (name: string, data: string | Uint8Array) => {
    const path = `${dir}/${name}`;
    if (typeof data === "string") Deno.writeTextFileSync(path, data);
    else Deno.writeFileSync(path, data);
    Deno.chmodSync(path, 0o600);
    return path;
  };
  const bad: Record<string, string> = {
    symlink: `${dir}/1001.json`,
    fifo: `${dir}/1002.json`,
    directory: `${dir}/1003.json`,
    huge: put("1004.json", " ".repeat(1024 * 1024)),
    "invalid utf-8": put("1005.json", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])),
    "empty object": put("1006.json", "{}"),
    array: put("1007.json", "[]"),
    "pid mismatch": put("1008.json", JSON.stringify({ ...good, session_pid: 1009 })),
    empty: put("1010.json", ""),
    "world-writable": put("1011.json", JSON.stringify({ ...good, session_pid: 1011 })),
    "deeply nested": put("1012.json", "[".repeat(20000) + "]".repeat(20000)),
  };
  Deno.symlinkSync("/etc/passwd", bad.symlink);
  new Deno.Command("mkfifo", { args: [bad.fifo] }).outputSync();
  Deno.mkdirSync(bad.directory);
  Deno.chmodSync(bad["world-writable"], 0o666);
  put("notes.txt", "ignored");
  put(".1013.json.tmp", "ignored");

  const started = Date.now();
  const rows = await rosterJson<Row[]>(home.path, ["list"]);
  assert(Date.now() - started < 20_000, "list must not hang");
  for (const [name, path] of Object.entries(bad)) {
    const row = rows.find((r) => r.path === path);
    assert(row, `${name} is listed`);
    assertEquals([row.liveness, row.reason, row.malformed], ["unknown", "malformed", true], name);
    assert(typeof row.detail === "string" && row.registered_at !== null, name);
  }
  assertEquals(rows.find((r) => r.path === good.path)?.reason, "running");
  assertEquals(rows.length, Object.keys(bad).length + 1);

  const pruned = await rosterJson<{ removed: Row[] }>(home.path, ["prune"]);
  assertEquals(pruned.removed, []);
  for (const path of Object.values(bad)) Deno.lstatSync(path);
  assertEquals(Deno.readTextFileSync("/etc/passwd").length > 0, true);

  const table = await roster(["list", "--home", home.path]);
  assertEquals(table.code, 0);
  assert(table.stdout.includes("unknown (malformed)"));
});
