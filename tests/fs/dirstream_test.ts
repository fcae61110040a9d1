/**
 * The streamed store read (src/fs/dirstream.ts): every entry once, and each file read with the
 * same care and the same verdict as fs/read.ts's readSmallFile, without following a link or
 * blocking on a FIFO. On Linux this runs libc's openat/statx path.
 */
import { assert, assertEquals } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import { decodeStrict, openDirStream } from "../../src/fs/dirstream.ts";
import { readSmallFile } from "../../src/fs/read.ts";
import { libc } from "../../src/process/libc.ts";

Deno.test({
  name: "dirstream: each hostile entry gets readSmallFile's verdict, and nothing blocks",
  ignore: Deno.build.os === "windows", // FIFOs, modes and symlinks as a user makes them: Unix
  async fn() {
    await using dir = await tempDir();
    const d = dir.path;
    const write = (name: string, text: string | Uint8Array, mode = 0o600) => {
      Deno.writeFileSync(
        `${d}/${name}`,
        typeof text === "string" ? new TextEncoder().encode(text) : text,
      );
      Deno.chmodSync(`${d}/${name}`, mode);
    };
    write("1.json", '{"ok":true}');
    write("2.json", '{"open":true}', 0o666);
    write("3.json", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
    write("4.json", "x".repeat(70_000));
    Deno.symlinkSync(`${d}/1.json`, `${d}/5.json`);
    Deno.mkdirSync(`${d}/6.json`);
    const fifo = await new Deno.Command("mkfifo", { args: [`${d}/7.json`] }).output();
    assert(fifo.success, "mkfifo");
    const names: string[] = [];
    using stream = openDirStream(d);
    for (let e = stream.next(); e !== null; e = stream.next()) names.push(e.name);
    assertEquals(names.sort(), [
      "1.json",
      "2.json",
      "3.json",
      "4.json",
      "5.json",
      "6.json",
      "7.json",
    ]);
    for (const name of names) {
      const streamed = stream.readSmall(name, 64 * 1024);
      const careful = readSmallFile(`${d}/${name}`);
      assertEquals(streamed?.ok, careful?.ok, name);
      if (streamed && !streamed.ok && careful && !careful.ok) {
        assertEquals(streamed.problem, careful.problem, name);
      }
    }
    assertEquals(stream.readSmall("1.json", 1024), {
      ok: true,
      value: '{"ok":true}',
      mtimeMs: Deno.statSync(`${d}/1.json`).mtime!.getTime(),
    });
    assertEquals(stream.readSmall("gone.json", 1024), null);
    if (Deno.build.os === "linux") assert(libc() !== null, "glibc's path was the one tested");
  },
});

Deno.test({
  name: "dirstream: a link to a directory is refused, not followed",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using dir = await tempDir();
    Deno.mkdirSync(`${dir.path}/real`);
    Deno.symlinkSync(`${dir.path}/real`, `${dir.path}/link`);
    let refused = false;
    try {
      openDirStream(`${dir.path}/link`).close();
    } catch (err) {
      refused = err instanceof Deno.errors.FilesystemLoop ||
        err instanceof Deno.errors.NotADirectory;
    }
    assert(refused);
  },
});

Deno.test({
  name: "dirstream: remove takes a file or a link itself, never a directory or a link's target",
  ignore: Deno.build.os === "windows", // symlinks as a user makes them: Unix
  async fn() {
    await using dir = await tempDir();
    const d = dir.path;
    Deno.writeTextFileSync(`${d}/1.json`, "{}");
    Deno.writeTextFileSync(`${d}/target`, "kept");
    Deno.symlinkSync(`${d}/target`, `${d}/2.json`);
    Deno.mkdirSync(`${d}/3.json`);
    Deno.mkdirSync(`${d}/real`);
    Deno.symlinkSync(`${d}/real`, `${d}/4.json`);
    using stream = openDirStream(d);
    assert(stream.remove("1.json"));
    assert(stream.remove("2.json"), "a link is removed");
    assertEquals(Deno.readTextFileSync(`${d}/target`), "kept", "its target is not");
    assertEquals(stream.remove("3.json"), false, "a directory is never removed");
    assert(Deno.statSync(`${d}/3.json`).isDirectory);
    assert(stream.remove("4.json"), "a link to a directory is removed itself");
    assert(Deno.statSync(`${d}/real`).isDirectory);
    assertEquals(stream.remove("1.json"), false, "gone: nothing removed");
    const left: string[] = [];
    for (const e of Deno.readDirSync(d)) left.push(e.name);
    assertEquals(left.sort(), ["3.json", "real", "target"]);
    if (Deno.build.os === "linux") assert(libc() !== null, "glibc's path was the one tested");
  },
});

Deno.test("decodeStrict decodes exactly what a fatal decoder does, and refuses the same bytes", () => {
  const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const enc = new TextEncoder();
  const cases: Uint8Array[] = [
    enc.encode('{"a": "plain"}'),
    enc.encode('\uFEFF{"bom": 1}'),
    enc.encode('{"real": "\uFFFD stays"}'),
    enc.encode("é✓ \u202e"),
    new Uint8Array([0x7b, 0xff, 0x7d]),
    new Uint8Array([0xef, 0xbf, 0xbd, 0xc3]),
    new Uint8Array([0xe2, 0x82]),
    new Uint8Array([0xed, 0xa0, 0x80]),
    new Uint8Array([]),
  ];
  for (const bytes of cases) {
    let want: string | null;
    try {
      want = fatal.decode(bytes);
    } catch {
      want = null;
    }
    let got: string | null;
    try {
      got = decodeStrict(bytes);
    } catch {
      got = null;
    }
    assertEquals(got, want, `${bytes}`);
  }
});

Deno.test({
  name: "dirstream: a directory of many entries, in many reads, lists what Deno lists",
  ignore: Deno.build.os === "windows",
  async fn() {
    await using dir = await tempDir();
    const d = dir.path;
    // More than one 8 KiB getdents64 read: about 1,500 entries of 20 to 60 bytes each.
    for (let i = 1; i <= 1500; i++) {
      const name = i % 7 === 0 ? `${i}.${"a".repeat(i % 40)}.json` : `${i}.json`;
      Deno.writeTextFileSync(`${d}/${name}`, "{}");
    }
    Deno.mkdirSync(`${d}/sub`);
    Deno.writeTextFileSync(`${d}/é ✓.json`, "{}");
    Deno.symlinkSync(`${d}/1.json`, `${d}/link`);
    const kinds = new Map<string, string>();
    using stream = openDirStream(d);
    for (let e = stream.next(); e !== null; e = stream.next()) {
      assert(!kinds.has(e.name), `${e.name} listed twice`);
      kinds.set(e.name, e.kind);
    }
    const expected = new Map<string, string>();
    for (const e of Deno.readDirSync(d)) {
      expected.set(e.name, e.isFile ? "file" : e.isDirectory ? "dir" : "link");
    }
    for (const [name, kind] of kinds) if (kind === "unknown") kinds.set(name, expected.get(name)!);
    assertEquals(kinds, expected);
    if (Deno.build.os === "linux") assert(libc() !== null, "glibc's path was the one tested");
  },
});
