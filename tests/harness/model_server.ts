/**
 * A stand-in model on 127.0.0.1 for the real harnesses: it speaks Anthropic Messages, OpenAI
 * Responses, OpenAI chat completions and Gemini streamGenerateContent, all as SSE. A prompt that
 * names a job (`job-N`) is answered with one shell tool call running that job's command; the
 * turn after the tool's result, and every other request, gets a short final text.
 */

export interface ModelServer extends AsyncDisposable {
  port: number;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Registers a shell command; the returned `job-N` in a prompt makes the model run it. */
  job(command: string): string;
  /** Every request body seen, by path, for debugging and for tests that inspect them. */
  readonly requests: { path: string; body: unknown }[];
}

type Json = Record<string, unknown>;

const SHELL_TOOLS = ["Bash", "bash", "shell", "exec_command", "run_shell_command", "shell_command"];
const JOB = /\bjob-(\d+)\b/;

const sse = (events: [string | null, unknown][]) =>
  new Response(
    events.map(([name, data]) =>
      (name ? `event: ${name}\n` : "") +
      `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`
    ).join(""),
    { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
  );

/** All text in a value, depth-first (message contents come in many shapes). */
function textOf(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(textOf).join("\n");
  if (v && typeof v === "object") {
    const o = v as Json;
    if (typeof o.text === "string") return o.text;
    if ("content" in o) return textOf(o.content);
    if ("parts" in o) return textOf(o.parts);
  }
  return "";
}

/** What the model should do next: run a job's command, or answer with text. */
type Turn = { kind: "tool"; command: string; tool: ToolSpec } | { kind: "text"; text: string };

interface ToolSpec {
  name: string;
  /** The argument that holds the command (`command`, or Codex's `cmd`). */
  key: string;
  /** The command as the tool wants it: a string, or argv (`["bash", "-lc", cmd]`). */
  argv: boolean;
  /** Whether the tool takes a `description` (Claude Code's and Gemini CLI's do). */
  description: boolean;
}

type Props = Record<string, { type?: string }>;

/** The first shell tool the request offers, read from its JSON schema. */
function pickTool(tools: { name: string; params: unknown }[]): ToolSpec | null {
  for (const want of SHELL_TOOLS) {
    const t = tools.find((x) => x.name === want);
    if (!t) continue;
    const props = ((t.params as { properties?: Props } | undefined)?.properties ?? {}) as Props;
    const key = ["command", "cmd"].find((k) => k in props) ?? "command";
    return {
      name: t.name,
      key,
      argv: props[key]?.type === "array",
      description: "description" in props,
    };
  }
  return null;
}

function decide(
  lastIsToolResult: boolean,
  lastUserText: string,
  tools: ToolSpec | null,
  jobs: Map<string, string>,
): Turn {
  if (lastIsToolResult) return { kind: "text", text: "Done." };
  const m = JOB.exec(lastUserText);
  const command = m ? jobs.get(m[1]) : undefined;
  if (command !== undefined && tools) return { kind: "tool", command, tool: tools };
  return { kind: "text", text: "Ok." };
}

function toolArgs(turn: Extract<Turn, { kind: "tool" }>): Json {
  const { key, argv, description } = turn.tool;
  const args: Json = { [key]: argv ? ["bash", "-lc", turn.command] : turn.command };
  if (description) args.description = "Run the job";
  return args;
}

let ids = 0;
const id = (p: string) => `${p}_${Date.now().toString(36)}${(++ids).toString(36)}`;

// --- Anthropic Messages -------------------------------------------------------------------
function anthropic(body: Json, jobs: Map<string, string>): Response {
  const messages = (body.messages ?? []) as { role: string; content: unknown }[];
  const last = messages.at(-1);
  const lastIsToolResult = Array.isArray(last?.content) &&
    (last.content as Json[]).some((b) => b.type === "tool_result");
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const tools = ((body.tools ?? []) as { name: string; input_schema?: unknown }[])
    .map((t) => ({ name: t.name, params: t.input_schema }));
  const turn = decide(lastIsToolResult, textOf(lastUser?.content), pickTool(tools), jobs);
  const usage = { input_tokens: 10, output_tokens: 5 };
  const message = {
    id: id("msg"),
    type: "message",
    role: "assistant",
    model: body.model ?? "mock",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage,
  };
  if (body.stream !== true) {
    const content = turn.kind === "tool"
      ? [{ type: "tool_use", id: id("toolu"), name: turn.tool.name, input: toolArgs(turn) }]
      : [{ type: "text", text: turn.text }];
    return Response.json({
      ...message,
      content,
      stop_reason: turn.kind === "tool" ? "tool_use" : "end_turn",
    });
  }
  const block = turn.kind === "tool"
    ? [
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: id("toolu"), name: turn.tool.name, input: {} },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(toolArgs(turn)) },
      }],
    ] as [string, unknown][]
    : [
      ["content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      }],
      ["content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: turn.text },
      }],
    ] as [string, unknown][];
  return sse([
    ["message_start", { type: "message_start", message }],
    ...block,
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { stop_reason: turn.kind === "tool" ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 5 },
    }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

// --- OpenAI Responses ---------------------------------------------------------------------
function responses(body: Json, jobs: Map<string, string>): Response {
  const input = (Array.isArray(body.input) ? body.input : []) as Json[];
  const last = input.at(-1);
  const lastIsToolResult = typeof last?.type === "string" && last.type.endsWith("_output");
  const lastUser = [...input].reverse().find((m) => m.role === "user");
  const tools = ((body.tools ?? []) as Json[]).map((t) => ({
    name: String(t.name ?? t.type ?? ""),
    params: t.parameters,
  }));
  const turn = decide(lastIsToolResult, textOf(lastUser), pickTool(tools), jobs);
  const respId = id("resp");
  const item = turn.kind === "tool"
    ? {
      type: "function_call",
      id: id("fc"),
      call_id: id("call"),
      name: turn.tool.name,
      arguments: JSON.stringify(toolArgs(turn)),
      status: "completed",
    }
    : {
      type: "message",
      id: id("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    };
  const base = {
    id: respId,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? "mock",
  };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  return sse([
    ["response.created", {
      type: "response.created",
      response: { ...base, status: "in_progress", output: [] },
    }],
    ["response.output_item.added", {
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress" },
    }],
    ...(turn.kind === "text"
      ? [["response.output_text.delta", {
        type: "response.output_text.delta",
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: turn.text,
      }] as [string, unknown]]
      : []),
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", {
      type: "response.completed",
      response: { ...base, status: "completed", output: [item], usage },
    }],
  ]);
}

// --- OpenAI chat completions --------------------------------------------------------------
function chat(body: Json, jobs: Map<string, string>): Response {
  const messages = (body.messages ?? []) as Json[];
  const lastIsToolResult = messages.at(-1)?.role === "tool";
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const tools = ((body.tools ?? []) as { function?: { name: string; parameters?: unknown } }[])
    .map((t) => ({ name: t.function?.name ?? "", params: t.function?.parameters }));
  const turn = decide(lastIsToolResult, textOf(lastUser), pickTool(tools), jobs);
  const base = {
    id: id("chatcmpl"),
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "mock",
  };
  const delta = turn.kind === "tool"
    ? {
      role: "assistant",
      content: null,
      tool_calls: [{
        index: 0,
        id: id("call"),
        type: "function",
        function: { name: turn.tool.name, arguments: JSON.stringify(toolArgs(turn)) },
      }],
    }
    : { role: "assistant", content: turn.text };
  return sse([
    [null, { ...base, choices: [{ index: 0, delta, finish_reason: null }] }],
    [null, {
      ...base,
      choices: [{
        index: 0,
        delta: {},
        finish_reason: turn.kind === "tool" ? "tool_calls" : "stop",
      }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }],
    [null, "[DONE]"],
  ]);
}

// --- Gemini -------------------------------------------------------------------------------
function gemini(body: Json, jobs: Map<string, string>, stream: boolean, model: string): Response {
  const contents = (body.contents ?? []) as { role?: string; parts?: Json[] }[];
  const last = contents.at(-1);
  const lastIsToolResult = (last?.parts ?? []).some((p) => "functionResponse" in p);
  const lastUser = [...contents].reverse().find((c) =>
    c.role === "user" && !(c.parts ?? []).some((p) => "functionResponse" in p)
  );
  const decls = ((body.tools ?? []) as { functionDeclarations?: Json[] }[])
    .flatMap((t) => t.functionDeclarations ?? [])
    .map((d) => ({ name: String(d.name), params: d.parametersJsonSchema ?? d.parameters }));
  let turn = decide(lastIsToolResult, textOf(lastUser?.parts), pickTool(decls), jobs);
  // Side requests (routing, next-speaker checks) ask for JSON: give them an empty object.
  const config = body.generationConfig as Json | undefined;
  if (turn.kind === "text" && config?.responseMimeType === "application/json") {
    turn = { kind: "text", text: "{}" };
  }
  const part = turn.kind === "tool"
    ? { functionCall: { name: turn.tool.name, args: toolArgs(turn) } }
    : { text: turn.text };
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: model,
  };
  return stream ? sse([[null, chunk]]) : Response.json(chunk);
}

/** Starts the server on an ephemeral loopback port. */
export function startModelServer(): ModelServer {
  const jobs = new Map<string, string>();
  const requests: { path: string; body: unknown }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const path = url.pathname;
      let body: Json = {};
      if (req.method === "POST") {
        try {
          body = await req.json();
        } catch { /* not JSON */ }
      }
      requests.push({ path, body });
      if (path.endsWith("/messages/count_tokens")) return Response.json({ input_tokens: 10 });
      if (path.endsWith("/messages")) return anthropic(body, jobs);
      if (path.endsWith("/responses")) return responses(body, jobs);
      if (path.endsWith("/chat/completions")) return chat(body, jobs);
      const g = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(
        path,
      );
      if (g) {
        if (g[2] === "countTokens") return Response.json({ totalTokens: 10 });
        return gemini(body, jobs, g[2] === "streamGenerateContent", g[1]);
      }
      if (path.endsWith("/models")) return Response.json({ object: "list", data: [] });
      return new Response("{}", { status: 404, headers: { "content-type": "application/json" } });
    },
  );
  const port = (server.addr as Deno.NetAddr).port;
  let n = 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    job(command: string) {
      const k = String(++n);
      jobs.set(k, command);
      return `job-${k}`;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

if (import.meta.main) {
  // By hand: `deno run -A tests/harness/model_server.ts DUMPDIR 'echo hi > /tmp/x'` prints the
  // port and the job names, and writes each request to DUMPDIR/<n>.json.
  const [dump, ...commands] = Deno.args;
  const s = startModelServer();
  for (const c of commands) console.log(s.job(c), "=", c);
  console.log(`listening on ${s.url}`);
  let n = 0;
  setInterval(() => {
    while (s.requests.length) {
      const r = s.requests.shift()!;
      Deno.writeTextFileSync(`${dump}/${++n}.json`, JSON.stringify(r, null, 1));
      console.log(n, r.path);
    }
  }, 300);
}
