/**
 * `roster restore` with the real Codex (`--no-daemon` and its default server mode), pi and
 * Gemini CLI releases (tests/harness/restore.ts).
 */
import { geminiEnv } from "./harnesses.ts";
import { CODEX, GEMINI, PI } from "./kits.ts";
import { crashAndRestore } from "./restore.ts";
import { Rig } from "./rig.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "Codex --no-daemon: SIGKILLed mid-conversation, roster restore resumes it",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await crashAndRestore(
      t,
      CODEX,
      "codex",
      rig,
      {
        noDaemon: true,
        sandbox: false,
        harnessEnv: { MOCK_API_KEY: "sk-mock" },
        expectContinue: true,
        inTool: true,
      } as Parameters<typeof crashAndRestore>[4],
    );
  },
});

Deno.test({
  name: "Codex default (server) mode: SIGKILLed with its server, roster restore resumes it",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await crashAndRestore(
      t,
      CODEX,
      "codex",
      rig,
      {
        sandbox: false,
        killServer: true,
        harnessEnv: { MOCK_API_KEY: "sk-mock" },
        expectContinue: true,
        inTool: true,
      } as Parameters<typeof crashAndRestore>[4],
    );
  },
});

Deno.test({
  name: "pi: SIGKILLed mid-conversation, roster restore resumes it",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await crashAndRestore(t, PI, "pi", rig, {
      harnessEnv: { PI_OFFLINE: "1" },
      expectContinue: true,
      inTool: true,
    });
  },
});

Deno.test({
  name: "Gemini CLI: SIGKILLed mid-conversation, roster restore resumes it",
  ...opts,
  async fn(t) {
    await using rig = await Rig.create();
    await crashAndRestore(t, GEMINI, "gemini", rig, {
      harnessEnv: geminiEnv(rig),
      expectContinue: true,
      inTool: true,
    });
  },
});
