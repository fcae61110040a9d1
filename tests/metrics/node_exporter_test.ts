/**
 * `roster metrics` against the real components: the text it writes is what promtool accepts,
 * and what Debian's node_exporter (textfile collector only, on 127.0.0.1) serves over HTTP
 * holds the values of the store and ledger the test built with real processes.
 */
import { assert, assertEquals } from "../assert.ts";
import { roster, tempDir } from "../helpers.ts";
import { buildFleet, EXPECTED_LEDGER } from "./fleet.ts";
import {
  freePort,
  type ParsedSample,
  parseExposition,
  promtoolCheck,
  startNodeExporter,
  valueOf,
} from "./servers.ts";

async function scrape(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`);
  assertEquals(res.status, 200);
  return await res.text();
}

function checkStore(samples: ParsedSample[], fleet: Awaited<ReturnType<typeof buildFleet>>) {
  const sessions = samples.filter((s) => s.name === "roster_sessions");
  assertEquals(
    sessions.map((s) => [s.labels.agent, s.labels.liveness, s.labels.reason, s.value]).sort(),
    fleet.sessions.map((s) => [s.agent, s.liveness, s.reason, s.count]).sort(),
  );
  // No label per session by default (no pid: no new series per session): each agent's oldest.
  const starts = samples.filter((s) => s.name === "roster_session_start_time_seconds");
  const oldest = new Map<string, number>();
  for (const row of fleet.live) {
    const at = Date.parse(row.process_started_at!) / 1000;
    oldest.set(row.agent!, Math.min(oldest.get(row.agent!) ?? Infinity, at));
  }
  assertEquals(
    starts.map((s) => [s.labels, s.value]).sort(),
    [...oldest].map(([agent, at]) => [{ agent }, at]).sort(),
  );
  for (const [name, labels, value] of EXPECTED_LEDGER) {
    assertEquals(valueOf(samples, name, labels), value, `${name}${JSON.stringify(labels)}`);
  }
}

Deno.test("roster metrics through the real node_exporter", async (t) => {
  await using home = await tempDir();
  await using work = await tempDir("roster-metrics-");
  const textfiles = `${work.path}/textfile`;
  Deno.mkdirSync(textfiles);
  await using fleet = await buildFleet(home.path, work.path);

  const stdout = await roster(["metrics", "--home", home.path]);
  assertEquals(stdout.code, 0, stdout.stderr);
  assertEquals(stdout.stderr, "");

  await t.step("promtool check metrics accepts the output, without a lint", async () => {
    const r = await promtoolCheck(stdout.stdout);
    assertEquals(r, { code: 0, out: "" });
  });

  await t.step("stdout holds the store's and the ledger's values", () => {
    checkStore(parseExposition(stdout.stdout), fleet);
  });

  const file = `${textfiles}/roster.prom`;
  await t.step("--textfile writes the file whole, readable by node_exporter", async () => {
    const r = await roster(["metrics", "--home", home.path, "--textfile", file]);
    assertEquals([r.code, r.stdout, r.stderr], [0, "", ""]);
    // Readable by node_exporter's own user; no temp file left beside it.
    assertEquals(Deno.statSync(file).mode! & 0o777, 0o644);
    assertEquals([...Deno.readDirSync(textfiles)].map((e) => e.name), ["roster.prom"]);
  });

  await using exporter = await startNodeExporter(textfiles, work.path);
  await t.step("node_exporter serves the store's and the ledger's values", async () => {
    const served = await scrape(exporter.url);
    const samples = parseExposition(served);
    assertEquals(valueOf(samples, "node_textfile_scrape_error"), 0, exporter.log());
    assert(
      valueOf(samples, "node_textfile_mtime_seconds", { file }),
      "node_exporter read the file",
    );
    checkStore(samples, fleet);
    const at = valueOf(samples, "roster_scrape_timestamp_seconds")!;
    assert(Math.abs(at - Date.now() / 1000) < 120, `scrape time ${at}`);
    // What node_exporter serves passes promtool too.
    const check = await promtoolCheck(served);
    assertEquals(check.code, 0, check.out);
  });

  await t.step("a rewrite replaces the file whole while node_exporter reads it", async () => {
    // Rewrite many times while scraping: every scrape sees a whole file, never a torn one.
    const writes = (async () => {
      for (let i = 0; i < 5; i++) {
        const w = await roster(["metrics", "--home", home.path, "--textfile", file]);
        assertEquals(w.code, 0, w.stderr);
      }
    })();
    let scrapes = 0;
    let done = false;
    writes.finally(() => done = true);
    while (!done || scrapes === 0) {
      const s = parseExposition(await scrape(exporter.url));
      assertEquals(valueOf(s, "node_textfile_scrape_error"), 0, exporter.log());
      checkStore(s, fleet);
      scrapes++;
    }
    await writes;
  });

  await t.step("--session-labels adds session id and cwd to each live session", async () => {
    const r = await roster(["metrics", "--home", home.path, "--session-labels"]);
    assertEquals(r.code, 0, r.stderr);
    const starts = parseExposition(r.stdout).filter((s) =>
      s.name === "roster_session_start_time_seconds"
    );
    assertEquals(
      starts.map((s) => [s.labels.pid, s.labels.session_id, s.labels.cwd]).sort(),
      fleet.live.map((row) => [String(row.session_pid), row.session_id, row.cwd]).sort(),
    );
    assertEquals((await promtoolCheck(r.stdout)).code, 0);
  });

  await t.step("--json prints the same families as JSON", async () => {
    const r = await roster(["metrics", "--home", home.path, "--json"]);
    assertEquals(r.code, 0, r.stderr);
    const families = JSON.parse(r.stdout) as {
      name: string;
      type: string;
      help: string;
      samples: { labels: Record<string, string>; value: number }[];
    }[];
    const fromJson = families.flatMap((f) =>
      f.samples.map((s) => ({ name: f.name, labels: s.labels, value: s.value }))
    );
    checkStore(fromJson, fleet);
    assertEquals(
      families.find((f) => f.name === "roster_continuation_dispatches_total")?.type,
      "counter",
    );
  });

  await t.step("a textfile in a missing directory is exit 1 naming the path", async () => {
    const r = await roster([
      "metrics",
      "--home",
      home.path,
      "--textfile",
      `${work.path}/nowhere/roster.prom`,
    ]);
    assertEquals(r.code, 1);
    assert(r.stderr.includes(`${work.path}/nowhere/roster.prom`), r.stderr);
    assertEquals(r.stdout, "");
  });
});

Deno.test("roster metrics --label: usage errors name the flag, exit 2", async () => {
  await using home = await tempDir();
  for (
    const [label, message] of [
      ["agent=x", "roster uses the label agent itself"],
      ["user", "expected NAME=VALUE"],
      ["1user=x", "expected NAME=VALUE"],
      ["__name__=x", "expected NAME=VALUE"],
    ]
  ) {
    const r = await roster(["metrics", "--home", home.path, "--label", label]);
    assertEquals([r.code, r.stdout], [2, ""], label);
    assert(
      r.stderr.startsWith("roster: Invalid --label: ") && r.stderr.includes(message),
      r.stderr,
    );
  }
  const twice = await roster(["metrics", "--home", home.path, "--label", "u=1", "--label", "u=2"]);
  assertEquals(twice.code, 2);
  assert(twice.stderr.includes("u is given twice"), twice.stderr);
  const ok = await roster(["metrics", "--home", home.path, "--label", "user=a=b"]);
  assertEquals(ok.code, 0, ok.stderr);
  assertEquals(valueOf(parseExposition(ok.stdout), "roster_continuation_hold"), 0);
  assert(ok.stdout.includes('roster_continuation_hold{user="a=b"} 0'), ok.stdout);
});

Deno.test("roster metrics on an empty home: zeroes, and promtool accepts it", async () => {
  await using home = await tempDir();
  const r = await roster(["metrics", "--home", home.path]);
  assertEquals(r.code, 0, r.stderr);
  const samples = parseExposition(r.stdout);
  assertEquals(samples.filter((s) => s.name === "roster_sessions"), []);
  assertEquals(valueOf(samples, "roster_prunable_records", { kind: "dead" }), 0);
  assertEquals(valueOf(samples, "roster_continuation_mode", { mode: "off" }), 1);
  // metrics only reads: it creates no store.
  assertEquals([...Deno.readDirSync(home.path)], []);
  assertEquals(await promtoolCheck(r.stdout), { code: 0, out: "" });
});

Deno.test("the test's node_exporter takes another port where its first was taken", async () => {
  await using dir = await tempDir();
  // Taken the way a test beside this one may take it between freePort and the bind: a
  // listener that takes connections and never answers them.
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const busy = (taken.addr as Deno.NetAddr).port;
  const picked: number[] = [];
  const pick = () => {
    const port = picked.length === 0 ? busy : freePort();
    picked.push(port);
    return port;
  };
  await using server = await startNodeExporter(dir.path, dir.path, pick);
  assertEquals(picked.length, 2);
  assertEquals(server.url, `http://127.0.0.1:${picked[1]}`);
  assertEquals((await fetch(`${server.url}/metrics`)).status, 200);
});
