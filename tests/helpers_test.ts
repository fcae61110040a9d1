/**
 * The test helpers that end what tests start: processes found by their command line or their
 * environment, and a tmux server ended with its socket even when it does not answer.
 */
import { assert, assertEquals } from "./assert.ts";
import { endTmux, exists, installed, pidsMentioning, tmuxSocketPath } from "./helpers.ts";

Deno.test({
  name: "pidsMentioning finds a process by its environment as well as its command line",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const mark = `roster-helpers-${crypto.randomUUID()}`;
    const child = new Deno.Command("sleep", {
      args: ["300"],
      env: { HOME: `/nowhere/${mark}/home` },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      assertEquals(pidsMentioning(mark), [], "its command line does not name it");
      assertEquals(pidsMentioning(mark, true), [child.pid]);
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  },
});

Deno.test({
  name: "endTmux ends a server that does not answer and removes its socket",
  ignore: Deno.build.os !== "linux" || !installed("tmux"),
  async fn() {
    const socket = `roster-helpers-${crypto.randomUUID().slice(0, 8)}`;
    const made = await new Deno.Command("tmux", {
      args: ["-L", socket, "-f", "/dev/null", "new-session", "-d", "sleep 600"],
      stdin: "null",
    }).output();
    assert(made.success, new TextDecoder().decode(made.stderr));
    const [server] = pidsMentioning(`\0${socket}\0`);
    assert(server > 0 && exists(tmuxSocketPath(socket)), "the server and its socket are there");
    // Stopped, it hears no kill-server: only the bound and the SIGKILL after it end it.
    Deno.kill(server, "SIGSTOP");
    await endTmux(socket);
    assertEquals(pidsMentioning(`\0${socket}\0`), [], "no process of the server is left");
    assert(!exists(tmuxSocketPath(socket)), "its socket is removed");
  },
});
