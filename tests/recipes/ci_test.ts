/**
 * The CI recipe of docs/hooks.md: the step's `run:` script, run as GitHub Actions runs a
 * `shell: bash` step (`bash --noprofile --norc -eo pipefail FILE`), with a stand-in `claude`
 * that runs until the test lets it finish.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { HANG_MS, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import type { Row } from "../../src/registry/row.ts";
import { installRoster, recipe, recipeEnv, waitingProgram } from "./harness.ts";

/** The `run: |` block of the workflow, dedented. */
function runScript(workflow: string): string {
  const lines = workflow.split("\n");
  const at = lines.findIndex((l) => /^\s+run: \|\s*$/.test(l));
  if (at === -1) throw new Error("The CI recipe has no run: | block");
  const body: string[] = [];
  let indent = -1;
  for (const line of lines.slice(at + 1)) {
    if (line.trim() === "") {
      body.push("");
      continue;
    }
    const n = line.length - line.trimStart().length;
    if (indent === -1) indent = n;
    if (n < indent) break;
    body.push(line.slice(indent));
  }
  return body.join("\n").trimEnd() + "\n";
}

Deno.test("recipe: a CI step runs the agent as a registered session", async (t) => {
  await using dir = await tempDir("roster-recipe-");
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  const release = `${dir.path}/release`;
  waitingProgram(dir.path, "claude", release);
  Deno.writeTextFileSync(`${dir.path}/step.sh`, runScript(recipe("ci")));
  const env = recipeEnv(dir.path, home, { GITHUB_RUN_ID: "4242" });
  const rows = () => rosterJson<Row[]>(home, ["list", "--all"]);

  // A record left by an earlier job on a self-hosted runner, of a process now gone.
  const old = spawnSleeper();
  await rosterJson(home, ["register", "--pid", String(old.pid)]);
  await old.kill();

  const step = new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", `${dir.path}/step.sh`],
    env,
    clearEnv: true,
    cwd: dir.path,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    await t.step("while the agent runs it is registered and alive", async () => {
      let all: Row[] = [];
      for (const deadline = Date.now() + HANG_MS; Date.now() < deadline;) {
        all = await rows();
        if (all.some((r) => r.agent === "claude")) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // prune removed the stale record before the agent started.
      assertEquals(all.map((r) => [r.agent, r.session_id, r.pid_source, r.liveness]), [[
        "claude",
        "gh-4242",
        "exec",
        "alive",
      ]]);
      const agent = all[0].session_pid!;
      assertEquals(Deno.readTextFileSync(`/proc/${agent}/comm`).trim(), "claude");
      const check = await roster(["check", String(agent), "--home", home]);
      assertEquals(check.code, 0, check.stderr);
    });
    await t.step(
      "when it finishes, the step succeeds and the record says how it ended",
      async () => {
        Deno.writeTextFileSync(release, "");
        const out = await step.output();
        assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
        const after = await rows();
        assertEquals(after.map((r) => [r.agent, r.liveness, r.ended_reason]), [
          ["claude", "dead", "exit:0"],
        ]);
      },
    );
  } finally {
    Deno.writeTextFileSync(release, "");
    await step.status;
  }
});

/** Runs the step's script with `claude` replaced by `agent` (a script body), or missing. */
async function runStep(agent: string | null) {
  await using dir = await tempDir("roster-recipe-");
  const home = `${dir.path}/home`;
  installRoster(dir.path);
  if (agent !== null) {
    Deno.writeTextFileSync(`${dir.path}/claude`, `#!/bin/sh\n${agent}\n`);
    Deno.chmodSync(`${dir.path}/claude`, 0o755);
  }
  Deno.writeTextFileSync(`${dir.path}/step.sh`, runScript(recipe("ci")));
  // PATH without any other claude: the recipe's bin first, then only the system's.
  const env = {
    ...recipeEnv(dir.path, home, { GITHUB_RUN_ID: "7" }),
    PATH: `${dir.path}:/usr/bin:/bin`,
  };
  const out = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", `${dir.path}/step.sh`],
    env,
    clearEnv: true,
    cwd: dir.path,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const all = await rosterJson<Row[]>(home, ["list", "--all"]);
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr), rows: all };
}

Deno.test("recipe: a CI step whose agent exits at once, or is missing, exits with its status", async (t) => {
  await t.step(
    "an agent that exits 7 at once: the step exits 7, the agent was recorded",
    async () => {
      const r = await runStep("exit 7");
      assertEquals(r.code, 7, r.stderr);
      assertEquals(r.rows.map((x) => [x.agent, x.session_id, x.ended_reason]), [
        ["claude", "gh-7", "exit:7"],
      ]);
      assert(r.rows[0].start_token !== null, "recorded with its start token");
    },
  );
  await t.step("no claude at all: the step exits 127, saying so", async () => {
    const r = await runStep(null);
    assertEquals(r.code, 127);
    assertMatch(r.stderr, /roster: Command not found: claude/);
  });
});
