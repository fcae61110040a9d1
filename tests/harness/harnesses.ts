/**
 * How each real harness is set up and started for the suite: its config pointing at the stand-in
 * model, the recipe from docs/hooks.md installed as written, and the dialogs a first run shows
 * answered. What a harness does on its own (process tree, hooks, env) is left untouched.
 */
import { recipe } from "../recipes/harness.ts";
import { harnessBin, type Pane, type Rig, waitFor } from "./rig.ts";

const API_KEY = "sk-ant-api03-roster-test-key-0000000000000000000000000000000000000000";

export interface StartOptions {
  /** The harness's own sandbox for tool commands (Claude `sandbox.enabled`; Codex's default). */
  sandbox?: boolean;
  /** Extra environment (e.g. an outer session's variables). */
  env?: Record<string, string>;
  /** Extra command-line arguments. */
  args?: string[];
  /** Shell tool calls ask the person first (Claude Code without its Bash allow, Gemini CLI
   * without yolo). */
  ask?: boolean;
}

function merge(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] = cur && v && typeof cur === "object" && typeof v === "object" && !Array.isArray(v)
      ? merge(cur as Record<string, unknown>, v as Record<string, unknown>)
      : v;
  }
  return out;
}

// --- Claude Code ----------------------------------------------------------------------------
export function claudeEnv(rig: Rig): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: rig.server.url,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
  };
}

export function setUpClaude(rig: Rig, opts: StartOptions = {}, cwd = rig.proj): void {
  let state: Record<string, unknown> = {};
  try {
    state = JSON.parse(Deno.readTextFileSync(`${rig.home}/.claude.json`));
  } catch { /* first time */ }
  rig.write(
    ".claude.json",
    JSON.stringify(merge(state, {
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
      projects: { [cwd]: { hasTrustDialogAccepted: true } },
    })),
  );
  // The recipe as written, plus what a test needs: Bash runs without asking ("auto" mode's
  // safety check needs Anthropic's servers), and the sandbox when asked for.
  const settings = merge(JSON.parse(recipe("claude")), {
    permissions: { defaultMode: "acceptEdits", allow: opts.ask ? [] : ["Bash(*)"] },
    ...(opts.sandbox ? { sandbox: { enabled: true } } : {}),
  });
  rig.write(".claude/settings.json", JSON.stringify(settings, null, 2));
}

export async function startClaude(rig: Rig, opts: StartOptions = {}): Promise<Pane> {
  setUpClaude(rig, opts);
  const env = rig.baseEnv({ ...claudeEnv(rig), ...opts.env });
  const pane = await rig.launch([harnessBin("claude"), ...(opts.args ?? [])], env);
  await pane.waitScreen(/❯/, 120_000);
  return pane;
}

// --- Codex ----------------------------------------------------------------------------------
export function setUpCodex(rig: Rig, opts: StartOptions = {}, cwd = rig.proj): void {
  const sandbox = opts.sandbox === false ? 'sandbox_mode = "danger-full-access"\n' : "";
  rig.write(
    ".codex/config.toml",
    `model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
${sandbox}
[model_providers.mock]
name = "mock"
base_url = "${rig.server.url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"

[projects."${cwd}"]
trust_level = "trusted"

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
`,
  );
  rig.write(".codex/hooks.json", recipe("codex"));
}

export interface CodexOptions extends StartOptions {
  /** `--no-daemon`: the session runs inside the TUI process. */
  noDaemon?: boolean;
}

export async function startCodex(rig: Rig, opts: CodexOptions = {}): Promise<Pane> {
  setUpCodex(rig, opts);
  const env = rig.baseEnv({ MOCK_API_KEY: "sk-mock", ...opts.env });
  const args = [...(opts.noDaemon ? ["--no-daemon"] : []), ...(opts.args ?? [])];
  const pane = await rig.launch([harnessBin("codex"), ...args], env);
  await codexReady(pane);
  return pane;
}

/** Waits for Codex's prompt, trusting the recipe's hooks when it asks (once per HOME). */
export async function codexReady(pane: Pane): Promise<void> {
  for (let i = 0; i < 10; i++) {
    // The prompt is drawn before the session is up (and the hook dialog comes over it): the
    // status line naming the model and the cwd says it is ready.
    const screen = await pane.waitScreen(/Hooks need review|t trust · esc|GPT-5\.5 .*· /, 180_000);
    if (/t trust · esc back/.test(screen)) await pane.keys("t");
    else if (/Hooks need review/.test(screen)) {
      // "2. Trust all and continue"
      await pane.keys("Down");
      await pane.keys("Enter");
    } else return;
    await new Promise((ok) => setTimeout(ok, 1_000));
  }
  throw new Error(`Codex kept asking about its hooks:\n${await pane.screen()}`);
}

// --- pi -------------------------------------------------------------------------------------
export function setUpPi(rig: Rig): void {
  rig.write(
    ".pi/agent/models.json",
    JSON.stringify({
      providers: {
        mock: {
          baseUrl: `${rig.server.url}/v1`,
          api: "openai-completions",
          apiKey: "sk-mock",
          compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
          models: [{ id: "mock-model", name: "Mock" }],
        },
      },
    }),
  );
  rig.write(".pi/agent/extensions/roster.ts", recipe("pi"));
}

export async function startPi(rig: Rig, opts: StartOptions = {}): Promise<Pane> {
  setUpPi(rig);
  // PI_OFFLINE: pi would otherwise try to download fd and ripgrep from GitHub at start-up.
  const env = rig.baseEnv({ PI_OFFLINE: "1", ...opts.env });
  const args = ["--provider", "mock", "--model", "mock-model", ...(opts.args ?? [])];
  const pane = await rig.launch([harnessBin("pi"), ...args], env);
  await pane.waitScreen(/mock-model/, 120_000);
  return pane;
}

// --- Gemini CLI -----------------------------------------------------------------------------
export function geminiEnv(rig: Rig): Record<string, string> {
  return { GEMINI_API_KEY: "mock-gemini-key", GOOGLE_GEMINI_BASE_URL: rig.server.url };
}

export function setUpGemini(rig: Rig): void {
  const settings = merge(JSON.parse(recipe("gemini")), {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
  });
  rig.write(".gemini/settings.json", JSON.stringify(settings, null, 2));
}

export async function startGemini(rig: Rig, opts: StartOptions = {}): Promise<Pane> {
  setUpGemini(rig);
  const env = rig.baseEnv({ ...geminiEnv(rig), ...opts.env });
  const args = [...(opts.ask ? [] : ["--approval-mode", "yolo"]), ...(opts.args ?? [])];
  const pane = await rig.launch([harnessBin("gemini"), ...args], env);
  await pane.waitScreen(/Type your message/, 120_000);
  return pane;
}

export { waitFor };
