/**
 * `continuation-check --tmux`: roster reads the pane it runs in itself, under the lock, just
 * before it claims, so a person who sat down after the hook gathered its facts still stops the
 * continue. The pure reading, then a real tmux server on a private socket.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { endTmux, roster, tempDir } from "../helpers.ts";
import { paneFacts, withPaneFacts } from "../../src/continuation/tmux.ts";
import { check, deadSession, FACTS, ledgerOf, plan } from "./fixtures.ts";

const NOW = 1_800_000_000_000;
const secs = (ms: number) => String(Math.floor(ms / 1000));

Deno.test("paneFacts reads tmux's answers", async (t) => {
  await t.step("a quiet pane: its id, nobody active", () => {
    const clients = `${secs(NOW - 3_600_000)}\t%3\n${secs(NOW - 1000)}\t%4\n`;
    assertEquals(paneFacts("%3\t0\t0\t$1\n", clients, NOW), { pane_key: "%3", user_active: false });
  });
  await t.step("a key into this pane within a minute: a person is there", () => {
    assertEquals(paneFacts("%3\t0\t0\t$1", `${secs(NOW - 5000)}\t%3`, NOW).user_active, true);
  });
  await t.step("a key into another pane of the same session: not this one's", () => {
    assertEquals(paneFacts("%3\t0\t0\t$1", `${secs(NOW - 5000)}\t%4`, NOW).user_active, false);
  });
  await t.step(
    "a key into another pane of a window that synchronizes panes: this one's too",
    () => {
      const key = `${secs(NOW - 5000)}\t%4\t@2`;
      assertEquals(paneFacts("%3\t0\t0\t$1\t@2", `${key}\t1`, NOW).user_active, true);
      assertEquals(paneFacts("%3\t0\t0\t$1\t@2", `${key}\t0`, NOW).user_active, false);
      assertEquals(paneFacts("%3\t0\t0\t$1\t@7", `${key}\t1`, NOW).user_active, false);
    },
  );
  await t.step("a key into it since a given time (restore opened it): a person is there", () => {
    const clients = `${secs(NOW - 120_000)}\t%3`;
    assertEquals(paneFacts("%3\t0\t0\t$1", clients, NOW).user_active, false);
    assertEquals(paneFacts("%3\t0\t0\t$1", clients, NOW, NOW - 180_000).user_active, true);
  });
  await t.step("copy mode: keys sent would go to tmux, and someone is reading", () => {
    assertEquals(paneFacts("%3\t0\t1\t$1", "", NOW).user_active, true);
  });
  await t.step("a dead pane is not idle", () => {
    assertEquals(paneFacts("%3\t1\t0\t$1", "", NOW).idle, false);
  });
  await t.step("a pane tmux does not know: no pane key (the identity rule vetoes)", () => {
    assertEquals(paneFacts(null, "", NOW), { pane_key: null });
  });
  await t.step("an answer it cannot read is an error, not a guess", () => {
    let threw = false;
    try {
      paneFacts("garbage", "", NOW);
    } catch (err) {
      threw = true;
      assertMatch(String(err), /Cannot read the tmux pane: unexpected answer/);
    }
    assert(threw);
  });
  await t.step("laid over the hook's facts, it only adds reasons to hold back", () => {
    const quiet = { pane_key: "%3", user_active: false };
    assertEquals(withPaneFacts({ ...FACTS, user_active: true }, quiet).user_active, true);
    assertEquals(withPaneFacts({ ...FACTS, pane_key: "%9" }, quiet).pane_key, "%3");
    assertEquals(withPaneFacts({ ...FACTS, idle: true }, { ...quiet, idle: false }).idle, false);
    const { user_active: _, ...noActivity } = FACTS;
    assertEquals(withPaneFacts(noActivity, quiet).user_active, false);
  });
});

const installed = new Deno.Command("sh", { args: ["-c", "command -v tmux"], stdout: "null" })
  .outputSync().success;

/** A tmux server on its own socket with one pane running `sleep`, and that pane's id. */
async function tmuxServer() {
  const socket = `roster-tmux-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", {
      // No configuration file: the user's ~/.tmux.conf is none of this test's business.
      args: ["-L", socket, "-f", "/dev/null", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
  const made = await tmux(
    "new-session",
    "-d",
    "-s",
    "s",
    "-P",
    "-F",
    "#{pane_id} #{socket_path}",
    "sleep 600",
  );
  assert(made.success, new TextDecoder().decode(made.stderr));
  const [pane, path] = new TextDecoder().decode(made.stdout).trim().split(" ");
  return {
    pane,
    tmux,
    // What a process inside the pane sees: TMUX names the server, TMUX_PANE the pane.
    env: { TMUX: `${path},1,0`, TMUX_PANE: pane },
    async [Symbol.asyncDispose]() {
      await endTmux(socket);
    },
  };
}

Deno.test({
  name: "continuation-check --tmux against a real tmux server",
  ignore: !installed, // .ci/run installs tmux (the restore flow needs it too)
  async fn(t) {
    await using home = await tempDir();
    await using server = await tmuxServer();
    const pid = await deadSession(home.path, "S1", server.pane);
    const facts = { ...FACTS, pane_key: server.pane };
    const on = await roster(["continuation-mode", "on", "--home", home.path]);
    assertEquals(on.code, 0, on.stderr);
    const planned = async (key: string) => await plan(home.path, key, pid, ["--release"]);

    await t.step("outside tmux: a usage error, before any work", async () => {
      await planned("k0");
      const r = await check(home.path, "k0", ["--claim", "--tmux"], facts);
      assertEquals(r.code, 2, r.stderr);
      assertMatch(r.stderr, /Invalid --tmux: TMUX_PANE is not set/);
    });

    await t.step("copy mode, which the hook did not see: vetoed as user-active", async () => {
      await planned("k1");
      assert((await server.tmux("copy-mode", "-t", server.pane)).success);
      const r = await check(home.path, "k1", ["--claim", "--json", "--tmux"], facts, server.env);
      assertEquals([r.code, r.v.kind, r.v.reason], [11, "skip", "user-active"], r.stderr);
      await server.tmux("send-keys", "-t", server.pane, "-X", "cancel");
    });

    await t.step("a client attached just now: a person is there", async () => {
      await planned("k2");
      await using _client = await attachClient(server);
      const r = await check(home.path, "k2", ["--claim", "--json", "--tmux"], facts, server.env);
      assertEquals([r.code, r.v.reason], [11, "user-active"], r.stderr);
    });

    await t.step("no tmux server: a failure, and the key stays open", async () => {
      await planned("k3");
      const gone = { ...server.env, TMUX: "/nonexistent/socket,1,0" };
      const r = await check(home.path, "k3", ["--claim", "--json", "--tmux"], facts, gone);
      assertEquals(r.code, 1, r.stdout);
      assertMatch(r.stderr, /Cannot read the tmux pane: /);
      assertEquals(readdirNames(ledgerOf(home.path)).filter((n) => n.startsWith("k3.")), [
        "k3.plan.json",
      ]);
    });

    await t.step("a quiet pane: the one continue is claimed", async () => {
      const r = await check(home.path, "k3", ["--claim", "--json", "--tmux"], facts, server.env);
      assertEquals([r.code, r.v.kind], [0, "dispatch"], r.stderr);
    });

    await t.step("the pane the hook runs in is not the plan's: identity", async () => {
      await planned("k4");
      const other = await server.tmux(
        "split-window",
        "-t",
        server.pane,
        "-P",
        "-F",
        "#{pane_id}",
        "sleep 600",
      );
      const pane = new TextDecoder().decode(other.stdout).trim();
      // The hook claims the plan's pane; roster reads where it really runs.
      const env = { ...server.env, TMUX_PANE: pane };
      const r = await check(home.path, "k4", ["--claim", "--json", "--tmux"], facts, env);
      assertEquals([r.code, r.v.reason], [11, "identity"], r.stderr);
    });

    await t.step("a person at the other pane of a window that synchronizes panes", async () => {
      // The split pane is the window's active one: the client attached now is a person there.
      await using _client = await attachClient(server);
      await planned("k5");
      const sync = (on: string) =>
        server.tmux("set-option", "-w", "-t", server.pane, "synchronize-panes", on);
      assert((await sync("on")).success);
      const r = await check(home.path, "k5", ["--claim", "--json", "--tmux"], facts, server.env);
      assertEquals([r.code, r.v.reason], [11, "user-active"], r.stderr);
      assert((await sync("off")).success);
      await planned("k6");
      const off = await check(home.path, "k6", ["--claim", "--json", "--tmux"], facts, server.env);
      assertEquals([off.code, off.v.kind], [0, "dispatch"], off.stderr);
    });
  },
});

/**
 * A client attached to `server`'s session through a pseudo-terminal (`script` gives it the
 * terminal it needs); attaching counts as the client's last key, on its window's active pane.
 */
async function attachClient(server: Awaited<ReturnType<typeof tmuxServer>>) {
  const client = new Deno.Command("script", {
    args: ["-qfc", `tmux -S ${server.env.TMUX.split(",")[0]} attach -t s`, "/dev/null"],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const keys = client.stdin.getWriter();
  const detach = async () => {
    await keys.close().catch(() => {});
    await server.tmux("detach-client", "-a");
    await server.tmux("detach-client");
    // Detached, `script` may already have exited: killing it then throws.
    try {
      client.kill("SIGKILL");
    } catch { /* already gone */ }
    await client.status;
  };
  let attached = false;
  for (let i = 0; i < 50 && !attached; i++) {
    const out = await server.tmux("list-clients");
    attached = new TextDecoder().decode(out.stdout).trim() !== "";
    if (!attached) await new Promise((r) => setTimeout(r, 100));
  }
  if (!attached) await detach();
  assert(attached, "the client attached");
  return {
    /** Keys typed at the client's terminal, as a person types them. */
    type: (text: string) => keys.write(new TextEncoder().encode(text)),
    [Symbol.asyncDispose]: detach,
  };
}

Deno.test({
  name: "continuation-check --tmux: a key counts for the pane it went into, not its session",
  ignore: !installed,
  async fn(t) {
    await using home = await tempDir();
    await using server = await tmuxServer();
    const pid = await deadSession(home.path, "S1", server.pane);
    const facts = { ...FACTS, pane_key: server.pane };
    const on = await roster(["continuation-mode", "on", "--home", home.path]);
    assertEquals(on.code, 0, on.stderr);
    // Another pane in the same window of the same tmux session, and the active one.
    const split = await server.tmux("split-window", "-t", server.pane, "sleep 600");
    assert(split.success, new TextDecoder().decode(split.stderr));
    await using client = await attachClient(server);
    const clients = async () =>
      new TextDecoder().decode((await server.tmux("list-clients", "-F", "#{pane_id}")).stdout)
        .trim();
    {
      assert((await clients()) !== server.pane, "the client is on the other pane");
      await t.step("a key in the other pane of the session: the continue is sent", async () => {
        await client.type("x");
        await plan(home.path, "p1", pid, ["--release"]);
        const r = await check(home.path, "p1", ["--claim", "--json", "--tmux"], facts, server.env);
        assertEquals([r.code, r.v.kind], [0, "dispatch"], r.stderr);
      });
      await t.step("a key in this pane: held back as user-active", async () => {
        assert((await server.tmux("select-pane", "-t", server.pane)).success);
        assertEquals(await clients(), server.pane);
        // Newer than the key before, which tmux counts in whole seconds.
        await new Promise((r) => setTimeout(r, 1100));
        await client.type("y");
        await plan(home.path, "p2", pid, ["--release"]);
        const r = await check(home.path, "p2", ["--claim", "--json", "--tmux"], facts, server.env);
        assertEquals([r.code, r.v.reason], [11, "user-active"], r.stderr);
      });
    }
  },
});

function readdirNames(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}
