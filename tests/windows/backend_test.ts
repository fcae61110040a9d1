/**
 * The Windows backend against real processes: on a real Windows, and on Linux through the
 * Windows build of Deno under Wine (scripts/wine/test.sh), which runs kernel32 for real.
 */
import { assert, assertEquals } from "../assert.ts";
import { isGone } from "../../src/process/types.ts";
import { windowsBackend } from "../../src/process/windows.ts";
import { IS_WINDOWS, spawnPing, UNDER_WINE, WINDOWS_ONLY } from "./helpers.ts";

Deno.test({
  name: `windowsBackend with real processes (${WINDOWS_ONLY})`,
  ignore: !IS_WINDOWS,
  async fn(t) {
    const b = windowsBackend();
    assert(b !== null, "kernel32 loads with --allow-ffi");

    await t.step(
      "a ping.exe child: exists, named, our child, token stable, then gone",
      async () => {
        await using ping = spawnPing();
        const first = b.probe(ping.pid);
        assert(first.kind === "exists", JSON.stringify(first));
        assertEquals(first.info.name?.toLowerCase(), "ping.exe");
        assertEquals(first.info.ppid, Deno.pid);
        assertEquals(first.info.zombie, false);
        assert(/^windows:\d+$/.test(first.info.startToken ?? ""), first.info.startToken ?? "null");
        const again = b.probe(ping.pid);
        assert(again.kind === "exists");
        assertEquals(again.info.startToken, first.info.startToken);
        assertEquals(b.compareTokens(first.info.startToken!, again.info.startToken!), "same");
        assertEquals(b.command(ping.pid), { exe: first.info.name, argv: null });
        await ping.kill();
        // Deno still holds the child's handle, so the process object outlives it: it reads as an
        // exited process (zombie) with its token, which every caller judges dead, or as gone.
        const after = b.probe(ping.pid);
        assert(isGone(after), JSON.stringify(after));
        if (after.kind === "exists") assertEquals(after.info.startToken, first.info.startToken);
      },
    );

    await t.step("a pid no process holds is gone", () => {
      // Windows pids are multiples of 4; an odd one never names a process.
      assertEquals(b.probe(0x7ffffffd).kind, "gone");
      assertEquals(b.probe(-1).kind, "gone");
    });

    await t.step({
      name: "pid 4 (System) cannot be opened but exists: never gone",
      ignore: UNDER_WINE, // Wine has no System process at pid 4.
      fn() {
        const p = b.probe(4);
        assert(p.kind === "exists", JSON.stringify(p));
        assertEquals(p.info.zombie, false);
      },
    });
  },
});
