import { assertEquals } from "../assert.ts";
import { asProcess, exactTokens, type ProcessInfo, tokenScheme } from "../../src/process/types.ts";
import { isPid, MAX_PID, MAX_PID_T } from "../../src/process/pid.ts";
import { isValidPid } from "../../src/identity/pid.ts";

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

Deno.test("isPid: the one pid rule, 1 to MAX_PID unless an OS narrows it", () => {
  for (const v of [1, 4_194_304, MAX_PID_T, MAX_PID]) assertEquals(isPid(v), true, String(v));
  for (const v of [0, -1, 1.5, MAX_PID + 1, NaN, "1", null]) {
    assertEquals(isPid(v), false, String(v));
  }
  assertEquals([isPid(MAX_PID_T, MAX_PID_T), isPid(MAX_PID_T + 1, MAX_PID_T)], [true, false]);
  assertEquals([isPid(0, MAX_PID, 0), isPid(-1, MAX_PID, 0)], [true, false]);
  // The identity layer's rule for files and flags is this one.
  for (const v of [0, 1, MAX_PID, MAX_PID + 1, 2.5]) assertEquals(isValidPid(v), isPid(v));
});
