/**
 * docs/fleet.md as written: its systemd units pass `systemd-analyze verify`, the commands of the
 * timer and the cron line write a textfile for the user's store when run as systemd and cron
 * run them, and its alerting rules pass `promtool check rules` and fire (and stay quiet) as
 * `promtool test rules` says they must.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { markedBlock } from "../docs.ts";
import { MAIN, roster, run, spawnSleeper, tempDir } from "../helpers.ts";
import { parseExposition, startNodeExporter, valueOf } from "./servers.ts";

const DOC = new URL("../../docs/fleet.md", import.meta.url).pathname;
/** Where the docs install roster and write the file; the tests put their own in their place. */
const DOC_ROSTER = "/usr/local/bin/roster";
const DOC_TEXTFILES = "/var/lib/prometheus/node-exporter";

/** A block docs/fleet.md marks `<!-- example: NAME -->`. */
const example = (name: string) => markedBlock(DOC, "example", name);

/** An executable that runs roster from this checkout, standing in for the installed binary. */
function launcher(dir: string): string {
  const path = `${dir}/roster`;
  Deno.writeTextFileSync(
    path,
    `#!/bin/sh\nexec '${Deno.execPath()}' run --quiet --allow-all '${MAIN}' "$@"\n`,
  );
  Deno.chmodSync(path, 0o755);
  return path;
}

/** The command part of `ExecStart=` in a unit. */
function execStart(unit: string): string {
  const m = /^ExecStart=(.*)$/m.exec(unit);
  if (!m) throw new Error("no ExecStart= in the unit");
  return m[1];
}

/**
 * Runs `command` (the docs' roster and textfile directory replaced by the test's) through
 * /bin/sh with only the environment cron gives a job, as `user` whose HOME is `home`.
 */
async function runAsCron(
  command: string,
  user: string,
  home: string,
  bin: string,
  textfiles: string,
) {
  const line = command.replaceAll(DOC_ROSTER, bin).replaceAll(DOC_TEXTFILES, textfiles);
  assert(line !== command, "the command names the installed roster");
  return await run("/bin/sh", ["-c", line], {
    HOME: home,
    LOGNAME: user,
    SHELL: "/bin/sh",
    PATH: "/usr/bin:/bin",
  }, "/");
}

/** A store in `home`'s default place with `n` live sessions of claude. */
async function userStore(home: string, n = 1): Promise<AsyncDisposable> {
  const sleepers = Array.from({ length: n }, () => spawnSleeper());
  const dispose = async () => {
    for (const s of sleepers) await s.kill();
  };
  for (const s of sleepers) {
    const r = await roster(["register", "--pid", String(s.pid), "--agent", "claude", "--quiet"], {
      env: { HOME: home, XDG_STATE_HOME: "" },
    });
    if (r.code !== 0) {
      await dispose();
      throw new Error(`register exited ${r.code}: ${r.stderr}`);
    }
  }
  return { [Symbol.asyncDispose]: dispose };
}

/** Checks that `textfile` holds `n` live claude sessions, every sample labelled with `user`. */
function checkTextfile(textfile: string, user: string, n = 1) {
  const samples = parseExposition(Deno.readTextFileSync(textfile));
  assertEquals(
    valueOf(samples, "roster_sessions", { agent: "claude", liveness: "alive", user }),
    n,
  );
  assert(valueOf(samples, "roster_scrape_timestamp_seconds", { user })! > 0);
  assertEquals(samples.filter((s) => s.labels.user !== user), []);
}

Deno.test("docs/fleet.md: the systemd units", async (t) => {
  await using dir = await tempDir();
  const service = example("roster-metrics@.service");
  const timer = example("roster-metrics@.timer");

  await t.step("systemd-analyze verify accepts an instance, without a warning", async () => {
    const bin = launcher(dir.path);
    Deno.writeTextFileSync(
      `${dir.path}/roster-metrics@.service`,
      service.replaceAll(DOC_ROSTER, bin),
    );
    Deno.writeTextFileSync(`${dir.path}/roster-metrics@.timer`, timer);
    const r = await run("systemd-analyze", [
      "verify",
      `${dir.path}/roster-metrics@ci.service`,
      `${dir.path}/roster-metrics@ci.timer`,
    ], { PATH: Deno.env.get("PATH")! });
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
  });

  await t.step("systemd-analyze verify does check them (a broken unit fails)", async () => {
    Deno.writeTextFileSync(`${dir.path}/roster-metrics@.service`, service);
    const r = await run("systemd-analyze", [
      "verify",
      `${dir.path}/roster-metrics@ci.service`,
    ], { PATH: Deno.env.get("PATH")! });
    assert(r.code !== 0 || r.stderr !== "", "a missing ExecStart binary is reported");
  });

  await t.step("the timer runs the service every 30 s; it writes only the textfile", () => {
    assertMatch(timer, /^OnUnitActiveSec=30s$/m);
    assertMatch(timer, /^WantedBy=timers\.target$/m);
    assertMatch(service, /^Type=oneshot$/m);
    assertMatch(service, /^User=%i$/m);
    assertMatch(service, new RegExp(`^ReadWritePaths=${DOC_TEXTFILES}$`, "m"));
  });

  await t.step("its ExecStart writes the user's sessions to the user's textfile", async () => {
    await using home = await tempDir();
    await using _sessions = await userStore(home.path);
    // systemd expands %i to the instance, the user's name.
    const command = execStart(service).replaceAll("%i", "ci");
    const r = await runAsCron(command, "ci", home.path, launcher(dir.path), dir.path);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    checkTextfile(`${dir.path}/roster-ci.prom`, "ci");
  });
});

Deno.test("docs/fleet.md: the cron line, for two users, served side by side", async () => {
  await using dir = await tempDir();
  await using alice = await tempDir();
  await using bob = await tempDir();
  const textfiles = `${dir.path}/textfile`;
  Deno.mkdirSync(textfiles);
  await using _a = await userStore(alice.path, 1);
  await using _b = await userStore(bob.path, 2);
  const line = example("crontab").trim();
  const fields = line.split(/\s+/);
  // minute hour day-of-month month day-of-week: every minute.
  assertEquals(fields.slice(0, 5), ["*", "*", "*", "*", "*"]);
  const command = line.replace(/^(\S+\s+){5}/, "");
  const bin = launcher(dir.path);
  for (const [user, home] of [["alice", alice.path], ["bob", bob.path]]) {
    const r = await runAsCron(command, user, home, bin, textfiles);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
  }
  checkTextfile(`${textfiles}/roster-alice.prom`, "alice", 1);
  checkTextfile(`${textfiles}/roster-bob.prom`, "bob", 2);
  // One node_exporter serves both files whole: the user label keeps every series apart.
  await using exporter = await startNodeExporter(textfiles, dir.path);
  const samples = parseExposition(await (await fetch(`${exporter.url}/metrics`)).text());
  assertEquals(valueOf(samples, "roster_sessions", { user: "alice" }), 1);
  assertEquals(valueOf(samples, "roster_sessions", { user: "bob" }), 2);
  assertEquals(valueOf(samples, "roster_continuation_mode", { user: "bob", mode: "off" }), 1);
  assertEquals(valueOf(samples, "node_textfile_scrape_error"), 0);
  assert(!exporter.log().includes("collected before"), exporter.log());
});

/** Series over time that must and must not fire each of the docs' alerts. */
const RULE_TESTS = `
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'roster_prunable_records{instance="a",kind="dead"}'
        values: '1x90'
      - series: 'roster_prunable_records{instance="b",kind="dead"}'
        values: '1x50 0x40'
      - series: 'roster_prunable_records{instance="c",kind="malformed"}'
        values: '3x90'
    alert_rule_test:
      - alertname: RosterDeadSessionRegistered
        eval_time: 55m
        exp_alerts: []
      - alertname: RosterDeadSessionRegistered
        eval_time: 61m
        exp_alerts:
          - exp_labels: {severity: warning, instance: a, kind: dead}
            exp_annotations:
              summary: "a: 1 dead session record(s) for over an hour"
              description: "Run \`roster list --state dead\` on the host: \`roster restore\` brings back the crashed sessions; \`roster prune\` removes only what no restore needs."

  - interval: 1m
    input_series:
      # Runner r1 loses its last live session after 10 minutes; r2 keeps one; d1 is no runner.
      - series: 'roster_scrape_timestamp_seconds{instance="r1",role="runner"}'
        values: '0+60x40'
      - series: 'roster_sessions{instance="r1",agent="claude",liveness="alive",reason="running"}'
        values: '1x10'
      - series: 'roster_sessions{instance="r1",agent="claude",liveness="dead",reason="exited"}'
        values: '0x10 1x30'
      - series: 'roster_scrape_timestamp_seconds{instance="r2",role="runner"}'
        values: '0+60x40'
      - series: 'roster_sessions{instance="r2",agent="codex",liveness="alive",reason="running"}'
        values: '2x40'
      - series: 'roster_scrape_timestamp_seconds{instance="d1"}'
        values: '0+60x40'
      # Runner r3 has two users' files (--label user=...): ci's live session must not hide that
      # bob has had none since minute 10.
      - series: 'roster_scrape_timestamp_seconds{instance="r3",role="runner",user="ci"}'
        values: '0+60x40'
      - series: 'roster_sessions{instance="r3",user="ci",agent="claude",liveness="alive",reason="running"}'
        values: '1x40'
      - series: 'roster_scrape_timestamp_seconds{instance="r3",role="runner",user="bob"}'
        values: '0+60x40'
      - series: 'roster_sessions{instance="r3",user="bob",agent="codex",liveness="alive",reason="running"}'
        values: '1x10'
    alert_rule_test:
      - alertname: RosterNoLiveSession
        eval_time: 9m
        exp_alerts: []
      - alertname: RosterNoLiveSession
        eval_time: 35m
        exp_alerts:
          - exp_labels: {severity: critical, instance: r3, role: runner, user: bob}
            exp_annotations:
              summary: "r3: no live agent session for 10 minutes"
              description: "Check the runner's agent service and \`roster list --all\` on the host."
          - exp_labels: {severity: critical, instance: r1, role: runner}
            exp_annotations:
              summary: "r1: no live agent session for 10 minutes"
              description: "Check the runner's agent service and \`roster list --all\` on the host."

  - interval: 1m
    input_series:
      # The counter is reported at 0 from the start, so the first veto is an increase.
      - series: 'roster_continuation_vetoes_total{instance="a",reason="disabled"}'
        values: '0x10 1x40'
      - series: 'roster_continuation_vetoes_total{instance="a",reason="hold"}'
        values: '0x50'
    alert_rule_test:
      - alertname: RosterContinuationVetoed
        eval_time: 9m
        exp_alerts: []
      - alertname: RosterContinuationVetoed
        eval_time: 15m
        exp_alerts:
          - exp_labels: {severity: info, instance: a, reason: disabled}
            exp_annotations:
              summary: "a: a continuation was vetoed (disabled)"
              description: "See the ledger's audit.ndjson on the host; docs/continuation.md lists the rules."
      - alertname: RosterContinuationVetoed
        eval_time: 45m
        exp_alerts: []

  - interval: 1m
    input_series:
      # Refreshed every minute until minute 10, then the timer stops.
      - series: 'roster_scrape_timestamp_seconds{instance="a"}'
        values: '0+60x10 600x30'
    alert_rule_test:
      - alertname: RosterMetricsStale
        eval_time: 12m
        exp_alerts: []
      - alertname: RosterMetricsStale
        eval_time: 25m
        exp_alerts:
          - exp_labels: {severity: warning, instance: a}
            exp_annotations:
              summary: "a: roster metrics are 15m 0s old"
              description: "Check \`systemctl list-timers 'roster-metrics@*'\` (or the cron line) on the host."
`;

Deno.test("docs/fleet.md: the alerting rules", async (t) => {
  await using dir = await tempDir();
  Deno.writeTextFileSync(`${dir.path}/rules.yml`, example("roster-rules.yml"));
  const env = { PATH: Deno.env.get("PATH")! };

  await t.step("promtool check rules accepts them", async () => {
    const r = await run("promtool", ["check", "rules", "rules.yml"], env, dir.path);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertMatch(r.stdout, /SUCCESS: 4 rules found/);
  });

  await t.step("promtool test rules: each alert fires when it must, and only then", async () => {
    Deno.writeTextFileSync(`${dir.path}/tests.yml`, RULE_TESTS);
    const r = await run("promtool", ["test", "rules", "tests.yml"], env, dir.path);
    assertEquals(r.code, 0, r.stdout + r.stderr);
  });

  await t.step("a broken expression fails the check (the check can fail)", async () => {
    Deno.writeTextFileSync(
      `${dir.path}/broken.yml`,
      example("roster-rules.yml").replace("> 0\n", "> > 0\n"),
    );
    const r = await run("promtool", ["check", "rules", "broken.yml"], env, dir.path);
    assertEquals(r.code, 1, r.stdout + r.stderr);
  });
});
