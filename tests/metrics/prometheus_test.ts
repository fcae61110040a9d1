/**
 * The whole fleet path, end to end with the real components: roster writes the textfile,
 * node_exporter serves it, a real Prometheus scrapes node_exporter, and PromQL over
 * Prometheus's HTTP API returns the sessions the test started, by agent and liveness; after a
 * session's process is killed and the file rewritten, the query shows it dead.
 */
import { assertEquals } from "../assert.ts";
import { markedBlock } from "../docs.ts";
import { roster, tempDir } from "../helpers.ts";
import { buildFleet, ODD_AGENT } from "./fleet.ts";
import { startNodeExporter, startPrometheus } from "./servers.ts";

interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(url: string, promql: string): Promise<VectorResult[]> {
  const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = await res.json();
  if (body.status !== "success") throw new Error(`query failed: ${JSON.stringify(body)}`);
  return body.data.result as VectorResult[];
}

/** `sum by (agent, liveness) (roster_sessions)` as sorted [agent, liveness, count] rows. */
async function sessionsByAgent(url: string): Promise<[string, string, number][]> {
  const rows = await query(url, "sum by (agent, liveness) (roster_sessions)");
  return rows.map((r): [string, string, number] => [
    r.metric.agent ?? "",
    r.metric.liveness,
    Number(r.value[1]),
  ]).sort();
}

/** Polls `sessionsByAgent` until it equals `want`, at most `ms`; returns the last answer. */
async function untilSessions(url: string, want: [string, string, number][], ms = 45_000) {
  const deadline = Date.now() + ms;
  let got: [string, string, number][] = [];
  while (Date.now() < deadline) {
    got = await sessionsByAgent(url);
    if (JSON.stringify(got) === JSON.stringify(want)) return got;
    await new Promise((r) => setTimeout(r, 500));
  }
  return got;
}

const DOC = new URL("../../docs/fleet.md", import.meta.url).pathname;

/** The alerting rules of docs/fleet.md, written to `dir`. */
function rulesFile(dir: string): string {
  Deno.writeTextFileSync(`${dir}/rules.yml`, markedBlock(DOC, "example", "roster-rules.yml"));
  return `${dir}/rules.yml`;
}

Deno.test("a real Prometheus scrapes roster's sessions through node_exporter", async (t) => {
  await using home = await tempDir();
  await using work = await tempDir("roster-prometheus-");
  const textfiles = `${work.path}/textfile`;
  Deno.mkdirSync(textfiles);
  const file = `${textfiles}/roster.prom`;
  await using fleet = await buildFleet(home.path, work.path);
  const write = async () => {
    const r = await roster(["metrics", "--home", home.path, "--textfile", file]);
    assertEquals(r.code, 0, r.stderr);
  };
  await write();

  await using exporter = await startNodeExporter(textfiles, work.path);
  await using prometheus = await startPrometheus(
    exporter.url.replace("http://", ""),
    work.path,
    [rulesFile(work.path)],
  );

  await t.step("PromQL returns the sessions by agent and liveness", async () => {
    const want = fleet.sessions
      .map((s): [string, string, number] => [s.agent, s.liveness, s.count])
      .sort();
    const got = await untilSessions(prometheus.url, want);
    assertEquals(got, want, `${prometheus.log()}\n${exporter.log()}`);
  });

  await t.step("live sessions' start times arrive per agent, no pid label", async () => {
    const rows = await query(prometheus.url, "roster_session_start_time_seconds");
    const oldest = new Map<string, number>();
    for (const row of fleet.live) {
      const at = Date.parse(row.process_started_at!) / 1000;
      oldest.set(row.agent!, Math.min(oldest.get(row.agent!) ?? Infinity, at));
    }
    assertEquals(
      rows.map((r) => [r.metric.agent, r.metric.pid, Number(r.value[1])]).sort(),
      [...oldest].map(([agent, at]) => [agent, undefined, at]).sort(),
    );
    // Scraped by the job the configuration names, from the node_exporter the test started.
    assertEquals(rows.every((r) => r.metric.job === "node" && r.metric.role === "runner"), true);
  });

  await t.step("the docs' alerting rules load and evaluate", async () => {
    const res = await fetch(`${prometheus.url}/api/v1/rules`);
    const body = await res.json();
    const rules = body.data.groups.flatMap((g: { rules: { name: string; health: string }[] }) =>
      g.rules.map((r) => [r.name, r.health])
    );
    assertEquals(rules.map((r: string[]) => r[0]).sort(), [
      "RosterContinuationVetoed",
      "RosterDeadSessionRegistered",
      "RosterMetricsStale",
      "RosterNoLiveSession",
    ]);
    // "unknown" until the first evaluation (every second here); never "err".
    assertEquals(rules.filter((r: string[]) => r[1] === "err"), []);
  });

  await t.step("a session killed is dead at the next write and scrape", async () => {
    const claude = fleet.live.find((r) => r.agent === "claude")!;
    await fleet.end(claude.session_pid!);
    await write();
    const want = fleet.sessions.map((s): [string, string, number] => {
      if (s.agent === "claude") return [s.agent, s.liveness, s.count - 1];
      return [s.agent, s.liveness, s.count];
    });
    want.push(["claude", "dead", 1]);
    want.sort();
    const got = await untilSessions(prometheus.url, want);
    assertEquals(got, want, prometheus.log());
    // The escaped agent name arrives intact.
    assertEquals(got.some(([agent]) => agent === ODD_AGENT), true);
  });
});
