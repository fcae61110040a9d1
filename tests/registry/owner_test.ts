import { assertEquals, assertThrows } from "../assert.ts";
import {
  declaredElsewhere,
  endHookPid,
  isAncestor,
  matchHarness,
  resolveOwner,
} from "../../src/registry/owner.ts";
import { parsePid } from "../../src/identity/pid.ts";
import { UsageError } from "../../src/errors.ts";
import type { ProcessBackend } from "../../src/process/types.ts";
import { exactTokens } from "../../src/process/types.ts";

Deno.test("matchHarness", async (t) => {
  const m = (name: string | null, exe: string | null, argv: string[] | null) =>
    matchHarness(name, { exe, argv });
  await t.step(
    "native executable by base name",
    () =>
      assertEquals(m("codex", "/usr/local/bin/codex", ["codex"]), {
        agent: "codex",
        runtime: null,
      }),
  );
  await t.step("Codex's shared server (app-server) hosts sessions; its TUI does not", () => {
    const exe = "/opt/codex/vendor/x86_64-unknown-linux-musl/codex/codex";
    const argv = [exe, "app-server", "--listen", "unix://", "--managed-daemon"];
    assertEquals(m("codex", exe, argv), { agent: "codex", runtime: null, hosted: true });
    assertEquals(m("codex", exe, [exe, "--no-daemon"]), { agent: "codex", runtime: null });
    // A word in the first place is the program, not its argument.
    assertEquals(m("codex", exe, ["app-server"]), { agent: "codex", runtime: null });
  });
  await t.step("a script's extension in any case, and Windows separators", () => {
    // The extension is matched on the lower-cased name (no /i regex on the hook path).
    assertEquals(m(null, "C:\\Users\\me\\AppData\\npm\\Codex.CMD", null), {
      agent: "codex",
      runtime: null,
    });
    assertEquals(m(null, "/usr/local/bin//Claude.Js", null), { agent: "claude", runtime: null });
    assertEquals(m(null, "/usr/local/bin/claude.json", null), null);
  });
  await t.step(
    "process name alone",
    () => assertEquals(m("claude", null, null), { agent: "claude", runtime: null }),
  );
  await t.step(
    "a harness run by node shows as node .../claude",
    () =>
      assertEquals(m("node", "/usr/bin/node", ["node", "--no-warnings", "/usr/local/bin/claude"]), {
        agent: "claude",
        runtime: "node",
      }),
  );
  await t.step("an npm package entry script", () =>
    assertEquals(
      m("node", "/usr/bin/node", [
        "node",
        "/usr/lib/node_modules/@google/gemini-cli/dist/index.js",
      ]),
      { agent: "gemini", runtime: "node" },
    ));
  await t.step(
    "a versioned native install",
    () =>
      assertEquals(m("2.0.14", "/home/u/.local/share/claude/versions/2.0.14", ["claude"]), {
        agent: "claude",
        runtime: null,
      }),
  );
  await t.step(
    "python running aider",
    () =>
      assertEquals(m("python3", "/usr/bin/python3.11", ["python3", "/home/u/.local/bin/aider"]), {
        agent: "aider",
        runtime: "python3.11",
      }),
  );
  await t.step("shells, runtimes with other scripts and look-alikes are not harnesses", () => {
    assertEquals(m("bash", "/usr/bin/bash", ["bash", "-c", "claude"]), null);
    assertEquals(m("node", "/usr/bin/node", ["node", "server.js"]), null);
    assertEquals(m("claudette", "/usr/bin/claudette", ["claudette"]), null);
    assertEquals(m("1.2.3", "/opt/1.2.3", ["1.2.3"]), null);
  });
});

Deno.test("parsePid accepts only positive decimal integers", () => {
  assertEquals(parsePid("42", "--pid"), 42);
  for (
    const bad of ["", "0", "-1", "1e3", " 42", "42 ", "42abc", "0x10", "+5", "4.0", "99999999999"]
  ) {
    const err = assertThrows(() => parsePid(bad, "--pid"), UsageError);
    assertEquals(err.message.startsWith("Invalid --pid: expected a positive integer"), true, bad);
  }
});

/** A process tree as data: pure precedence logic needs no real processes. */
function treeBackend(tree: Record<number, { ppid: number | null; name: string }>): ProcessBackend {
  return {
    name: "test",
    probe: (pid) =>
      tree[pid]
        ? {
          kind: "exists",
          info: {
            pid,
            ppid: tree[pid].ppid,
            startToken: "t",
            startedAtMs: 0,
            zombie: false,
            name: tree[pid].name,
          },
        }
        : { kind: "gone" },
    bootId: () => null,
    command: (pid) => ({ exe: tree[pid] ? `/bin/${tree[pid].name}` : null, argv: null }),
    compareTokens: exactTokens,
  };
}

Deno.test("resolveOwner precedence", async (t) => {
  const tree = {
    1: { ppid: 0, name: "init" },
    10: { ppid: 1, name: "claude" },
    20: { ppid: 10, name: "bash" },
    30: { ppid: 20, name: "uv" },
    40: { ppid: 30, name: "deno" },
    99: { ppid: 1, name: "codex" },
  };
  const b = treeBackend(tree);
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  const base = { selfPid: 40, selfPpid: 30 };
  await t.step("nearest harness ancestor, through any intermediate", () => {
    const o = resolveOwner({ ...base, env: env({}) }, b);
    assertEquals([o.pid, o.source, o.verified, o.harness?.agent], [10, "ancestor", true, "claude"]);
  });
  await t.step("--pid first, verified only when it is an ancestor", () => {
    const o = resolveOwner({ ...base, flagPid: "99", env: env({ ROSTER_SESSION_PID: "10" }) }, b);
    assertEquals([o.pid, o.source, o.verified, o.harness?.agent], [99, "flag", false, "codex"]);
    const o2 = resolveOwner({ ...base, flagPid: "20", env: env({}) }, b);
    assertEquals([o2.pid, o2.verified], [20, true]);
  });
  await t.step("then ROSTER_SESSION_PID, then CLAUDE_PID, when no harness is nearer", () => {
    const o = resolveOwner(
      { ...base, env: env({ ROSTER_SESSION_PID: "20", CLAUDE_PID: "99" }) },
      b,
    );
    assertEquals([o.pid, o.source, o.inner], [20, "ROSTER_SESSION_PID", false]);
    const o2 = resolveOwner({ ...base, env: env({ CLAUDE_PID: "10" }) }, b);
    assertEquals([o2.pid, o2.source, o2.verified], [10, "CLAUDE_PID", true]);
    const o3 = resolveOwner({ selfPid: 98, selfPpid: 1, env: env({ CLAUDE_PID: "99" }) }, b);
    assertEquals([o3.pid, o3.source, o3.verified], [99, "CLAUDE_PID", false]);
  });
  await t.step("a harness between the caller and an inherited pid wins (nested sessions)", () => {
    // claude(10) -> bash(20) -> codex(25) -> sh(30) -> roster(40), CLAUDE_PID=10 inherited.
    const nested = treeBackend({
      ...tree,
      25: { ppid: 20, name: "codex" },
      30: { ppid: 25, name: "sh" },
    });
    const o = resolveOwner({ ...base, env: env({ CLAUDE_PID: "10" }) }, nested);
    assertEquals([o.pid, o.source, o.inner, o.harness?.agent], [25, "ancestor", true, "codex"]);
    // Also when the inherited pid is not an ancestor at all, or is gone.
    const o2 = resolveOwner({ ...base, env: env({ CLAUDE_PID: "99" }) }, b);
    assertEquals([o2.pid, o2.inner], [10, true]);
    const o3 = resolveOwner({ ...base, env: env({ ROSTER_SESSION_PID: "555" }) }, b);
    assertEquals([o3.pid, o3.inner], [10, true]);
    // --pid still wins outright.
    const o4 = resolveOwner({ ...base, flagPid: "10", env: env({ CLAUDE_PID: "10" }) }, nested);
    assertEquals([o4.pid, o4.source], [10, "flag"]);
  });
  await t.step("endHookPid: the same rule; a named pid is taken even when gone", () => {
    const nested = treeBackend({
      ...tree,
      25: { ppid: 20, name: "gemini" },
      30: { ppid: 25, name: "sh" },
    });
    assertEquals(endHookPid({ ...base, env: env({ CLAUDE_PID: "10" }) }, nested), {
      pid: 25,
      inherited: false,
    });
    const orphan = treeBackend({ 1: { ppid: 0, name: "init" }, 30: { ppid: 1, name: "sh" } });
    assertEquals(endHookPid({ ...base, env: env({ CLAUDE_PID: "10" }) }, orphan), {
      pid: 10,
      inherited: true,
    });
    assertEquals(endHookPid({ ...base, flagPid: "555", env: env({}) }, orphan), {
      pid: 555,
      inherited: false,
    });
  });
  await t.step(
    "declaredElsewhere: another harness's own session id guards an inherited pid",
    () => {
      assertEquals(declaredElsewhere("claude-sid", env({ GEMINI_SESSION_ID: "g" })), true);
      assertEquals(declaredElsewhere("g", env({ GEMINI_SESSION_ID: "g" })), false);
      assertEquals(
        declaredElsewhere("claude-sid", env({ CLAUDE_CODE_SESSION_ID: "claude-sid" })),
        false,
      );
    },
  );
  await t.step("a set but dead pid is an error when no harness is nearer", () => {
    const err = assertThrows(
      () =>
        resolveOwner(
          { selfPid: 98, selfPpid: 1, env: env({ ROSTER_SESSION_PID: "555", CLAUDE_PID: "99" }) },
          b,
        ),
      UsageError,
    );
    assertEquals(err.message, "Invalid ROSTER_SESSION_PID: no running process has pid 555");
  });
  await t.step("no harness anywhere: a usage error that says how to name the session", () => {
    const err = assertThrows(
      () =>
        resolveOwner(
          { selfPid: 99, selfPpid: 1, env: env({}) },
          treeBackend({ 1: { ppid: 0, name: "init" } }),
        ),
      UsageError,
    );
    assertEquals(err.exitCode, 2);
    assertEquals(/--pid PID or set ROSTER_SESSION_PID/.test(err.message), true);
  });
  await t.step("a parent pid the backend does not vouch for is no parent (Windows reuse)", () => {
    // Deno.ppid names 30, but the backend says this process's parent is unknown: the pid is
    // now held by a process created after it (windows.ts verifiedParent).
    const stale = treeBackend({ ...tree, 40: { ppid: null, name: "deno" } });
    assertThrows(() => resolveOwner({ ...base, env: env({}) }, stale), UsageError);
    const o = resolveOwner({ ...base, flagPid: "10", env: env({}) }, stale);
    assertEquals([o.pid, o.verified], [10, false]);
  });
  await t.step("the walk stops after 32 levels", () => {
    const deep: Record<number, { ppid: number; name: string }> = { 1: { ppid: 0, name: "claude" } };
    for (let i = 2; i <= 40; i++) deep[i] = { ppid: i - 1, name: "sh" };
    assertThrows(
      () => resolveOwner({ selfPid: 41, selfPpid: 40, env: env({}) }, treeBackend(deep)),
      UsageError,
    );
    const o = resolveOwner({ selfPid: 31, selfPpid: 30, env: env({}) }, treeBackend(deep));
    assertEquals(o.pid, 1);
  });
});

Deno.test("isAncestor stops at the first ancestor that started before the pid", () => {
  const tree: Record<number, { ppid: number; start: number }> = {
    1: { ppid: 0, start: 0 },
    10: { ppid: 1, start: 100 },
    20: { ppid: 10, start: 200 },
    30: { ppid: 20, start: 300 },
  };
  let probes = 0;
  const backend: ProcessBackend = {
    name: "test",
    probe: (pid) => {
      probes++;
      const n = tree[pid];
      return n
        ? {
          kind: "exists",
          info: {
            pid,
            ppid: n.ppid,
            startToken: "t",
            startedAtMs: n.start,
            zombie: false,
            name: "x",
          },
        }
        : { kind: "gone" };
    },
    bootId: () => null,
    command: () => ({ exe: null, argv: null }),
    compareTokens: exactTokens,
  };
  assertEquals(isAncestor(backend, 30, 10, 100), true);
  // A process that started at 250 and is not an ancestor: the walk stops at 20 (started 200).
  probes = 0;
  assertEquals(isAncestor(backend, 30, 99, 250), false);
  assertEquals(probes, 2);
  // Without a start time it walks all the way up.
  probes = 0;
  assertEquals(isAncestor(backend, 30, 99, null), false);
  assertEquals(probes, 4);
});
