/**
 * The pi recipe of docs/hooks.md, end to end: the extension file, as written, loaded by a
 * stand-in `pi` (a JavaScript runtime named pi, as pi is a Node program) that implements the
 * two things the extension uses, `pi.on` and `pi.exec` (a process run without a shell), and
 * fires pi's session events on cue.
 */
import { assertEquals } from "../assert.ts";
import { rosterJson, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { installRoster, recipe, recipeEnv } from "./harness.ts";

/**
 * The stand-in's event loop: one event per stdin line (`EVENT [SESSION_ID]`, or `EVENT {JSON}`
 * with the event's fields), one JSON reply.
 */
const RUNNER = `
const ext = (await import(Deno.args[0])).default;
const handlers = new Map();
const calls = [];
const pi = {
  on(event, handler) { handlers.set(event, [...(handlers.get(event) ?? []), handler]); },
  async exec(command, args) {
    const out = await new Deno.Command(command, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
    const dec = new TextDecoder();
    const result = { stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr), code: out.code, killed: false };
    calls.push({ command, args, code: result.code, stderr: result.stderr });
    return result;
  },
};
ext(pi);
let sessionId = "";
const ctx = { cwd: Deno.cwd(), hasUI: false, sessionManager: { getSessionId: () => sessionId } };
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf("\\n")) !== -1) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    const sp = line.indexOf(" ");
    const event = sp === -1 ? line : line.slice(0, sp);
    const rest = sp === -1 ? "" : line.slice(sp + 1);
    // The rest is the event's own fields (JSON), or a session id.
    const fields = rest.startsWith("{") ? JSON.parse(rest) : {};
    if (rest && !rest.startsWith("{")) sessionId = rest;
    calls.length = 0;
    for (const h of handlers.get(event) ?? []) await h({ type: event, ...fields }, ctx);
    console.log(JSON.stringify({ event, calls }));
  }
}
`;

interface Reply {
  event: string;
  calls: { command: string; args: string[]; code: number; stderr: string }[];
}

Deno.test("recipe: pi extension registers on session_start, unregisters on session_shutdown", async (t) => {
  await using dir = await tempDir("roster-recipe-");
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  const ext = `${dir.path}/roster.ts`;
  Deno.writeTextFileSync(ext, recipe("pi"));
  Deno.writeTextFileSync(`${dir.path}/runner.js`, RUNNER);
  const pi = `${dir.path}/pi`;
  Deno.symlinkSync(Deno.execPath(), pi);
  const child = new Deno.Command(pi, {
    args: ["run", "--quiet", "--allow-all", `${dir.path}/runner.js`, ext],
    env: recipeEnv(dir.path, home),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const fire = async (line: string): Promise<Reply> => {
    await writer.write(new TextEncoder().encode(line + "\n"));
    for (;;) {
      const nl = buffer.indexOf("\n");
      if (nl !== -1) {
        const reply = JSON.parse(buffer.slice(0, nl)) as Reply;
        buffer = buffer.slice(nl + 1);
        for (const c of reply.calls) assertEquals(c.code, 0, c.stderr);
        return reply;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error("The pi stand-in exited");
      buffer += value;
    }
  };
  const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);
  try {
    await t.step("the stand-in is a process named pi", () => {
      assertEquals(Deno.readTextFileSync(`/proc/${child.pid}/comm`).trim(), "pi");
    });
    await t.step("session_start registers the pi process with its session id", async () => {
      const reply = await fire("session_start s-1");
      assertEquals(reply.calls.map((c) => [c.command, c.args[0], c.args[1]]), [
        ["roster", "register", "--pid"],
        ["roster", "activity", "idle"],
      ]);
      const all = await rows();
      assertEquals(
        all.map((r) => [r.session_pid, r.agent, r.pid_source, r.pid_verified, r.session_id]),
        [[child.pid, "pi", "flag", true, "s-1"]],
      );
      assertEquals([all[0].liveness, all[0].reason], ["alive", "running"]);
    });
    await t.step("agent and tool events record what the session is doing", async () => {
      const now = async () => {
        const [r] = await rows() as (Row & { open_tool_calls: { id: string; name: string }[] })[];
        return [r.activity, r.open_tool_calls.map((c) => [c.id, c.name])];
      };
      assertEquals(await now(), ["idle", []]);
      await fire("agent_start");
      assertEquals(await now(), ["working", []]);
      await fire('tool_execution_start {"toolCallId":"call_1","toolName":"bash"}');
      assertEquals(await now(), ["working", [["call_1", "bash"]]]);
      await fire('tool_execution_end {"toolCallId":"call_1","toolName":"bash"}');
      assertEquals(await now(), ["working", []]);
      await fire('tool_execution_start {"toolCallId":"call_2","toolName":"bash"}');
      await fire("agent_end");
      assertEquals(await now(), ["idle", []]);
    });
    await t.step("session_start again leaves one record", async () => {
      await fire("session_start s-1");
      assertEquals((await rows()).length, 1);
    });
    await t.step(
      "/new (shutdown, then start on a new id) leaves one record, with the new id",
      async () => {
        await fire("session_shutdown");
        await fire("session_start s-2");
        assertEquals((await rows()).map((r) => [r.session_pid, r.session_id]), [[
          child.pid,
          "s-2",
        ]]);
      },
    );
    await t.step("session_shutdown removes it", async () => {
      const reply = await fire("session_shutdown");
      assertEquals(reply.calls.map((c) => c.args[0]), ["unregister"]);
      assertEquals(await rows(), []);
    });
  } finally {
    await writer.close().catch(() => {});
    await child.status;
    await lines.cancel().catch(() => {});
  }
});
