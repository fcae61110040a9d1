import { assertEquals } from "../assert.ts";
import { asProcess, exactTokens, type ProcessInfo, tokenScheme } from "../../src/process/types.ts";

Deno.test("exactTokens compares only tokens of one scheme", () => {
  assertEquals(exactTokens("123", "123"), "same");
  assertEquals(exactTokens("123", "124"), "different");
  assertEquals(exactTokens("darwin:1.000001", "darwin:1.000002"), "different");
  // A record written by the ps fallback, judged later through FFI: cannot tell.
  assertEquals(exactTokens("ps:1795980475", "darwin:1795980475.123456"), "uncertain");
  assertEquals(exactTokens("123", "ps:123"), "uncertain");
  assertEquals([tokenScheme("123"), tokenScheme("windows:1")], ["", "windows"]);
});

Deno.test("asProcess: a thread id is no process", () => {
  const info = (isThread: boolean): ProcessInfo => ({
    pid: 5,
    ppid: 1,
    startToken: "1",
    startedAtMs: 0,
    zombie: false,
    name: "x",
    isThread,
  });
  assertEquals(asProcess({ kind: "exists", info: info(true) }), { kind: "gone" });
  assertEquals(asProcess({ kind: "exists", info: info(false) }).kind, "exists");
  assertEquals(asProcess({ kind: "unsupported" }).kind, "unsupported");
});
