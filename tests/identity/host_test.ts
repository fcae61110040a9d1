import { assertEquals } from "../assert.ts";
import { hostKey } from "../../src/identity/identity.ts";

Deno.test("hostKey: a host key that does not follow the network", async (t) => {
  const uuid = "564D1A2B-3C4D-5E6F-7081-92A3B4C5D6E7";
  await t.step("macOS: the hardware UUID, whatever gethostname says today", () => {
    assertEquals(hostKey("darwin", "dhcp-10-0-0-5.example.net", uuid), uuid);
    assertEquals(hostKey("darwin", "Janes-MacBook-Pro.local", uuid), uuid);
  });
  await t.step("macOS without a readable UUID: the hostname", () => {
    assertEquals(hostKey("darwin", "Janes-MacBook-Pro.local", null), "Janes-MacBook-Pro.local");
  });
  await t.step("elsewhere: the hostname, even with a machine id", () => {
    assertEquals(hostKey("linux", "build-7", "0123456789abcdef0123456789abcdef"), "build-7");
    assertEquals(hostKey("windows", "DESKTOP-1", null), "DESKTOP-1");
  });
});
