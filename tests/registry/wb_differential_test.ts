/**
 * The lifecycle run against wb's rules (the reference registry issue 11 and 22 name: parked never
 * live, never continued, kept; resumed links append-only; lookups exact), one scenario per rule,
 * each through the CLI in a home of its own. docs/continuation.md's differential table names
 * exactly these scenarios, so the table cannot drift from what is run.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  type CliResult,
  roster,
  rosterJson,
  spawnSleeper,
  type TempDir,
  tempDir,
} from "../helpers.ts";
import { check, deadSession, FACTS, PANE, plan } from "../continuation/fixtures.ts";

type Row = Record<string, unknown> & {
  session_pid: number;
  session_id: string | null;
  liveness: string;
  reason: string;
  path: string;
  successor: { pid: number; session_id: string | null } | null;
  predecessor: { pid: number } | null;
};

const DOC = new URL("../../docs/continuation.md", import.meta.url).pathname;
const MARKER = "<!-- wb-differential: tests/registry/wb_differential_test.ts -->";

const rows = (home: string) => rosterJson<Row[]>(home, ["list", "--all"]);
const rowOf = async (home: string, pid: number) =>
  (await rows(home)).find((r) => r.session_pid === pid);
const cli = (home: string, args: string[]): Promise<CliResult> => roster([...args, "--home", home]);

/** A running session (a sleeper) registered under `sid`. */
async function running(home: string, sid: string, env: Record<string, string> = {}) {
  const s = spawnSleeper();
  await rosterJson(home, ["register", "--pid", String(s.pid), "--session-id", sid], { env });
  return s;
}

/** wb's rules, by the name docs/continuation.md's table gives each; `pending`: not landed yet. */
const RULES: { name: string; pending?: string; run: (home: string) => Promise<void> }[] = [
  {
    name: "parked: never live",
    async run(h) {
      await using s = await running(h, "P");
      assertEquals((await cli(h, ["park", "--pid", String(s.pid)])).code, 0);
      const row = await rowOf(h, s.pid);
      assertEquals([row?.liveness, row?.reason], ["dead", "parked"]);
      const live = await rosterJson<Row[]>(h, ["list"]);
      assert(!live.some((r) => r.session_pid === s.pid), "list shows it");
      assertEquals((await cli(h, ["check", String(s.pid)])).code, 3, "check calls it live");
    },
  },
  {
    name: "parked: stays parked when its hooks register again",
    async run(h) {
      await using s = await running(h, "P");
      assertEquals((await cli(h, ["park", "--pid", String(s.pid)])).code, 0);
      const again = await rosterJson<Row>(h, ["register", "--pid", String(s.pid)]);
      assertEquals([again.liveness, again.reason], ["dead", "parked"]);
    },
  },
  {
    name: "parked: never planned for a continue",
    async run(h) {
      const pid = await deadSession(h, "P");
      assertEquals((await cli(h, ["park", "--pid", String(pid)])).code, 0);
      const r = await cli(h, ["continuation-plan", "--key", "k", "--session", String(pid)]);
      assertEquals(r.code, 2, r.stdout);
      assertMatch(r.stderr, /parked/);
    },
  },
  {
    name: "parked: never continued by a plan made before it was parked",
    async run(h) {
      assertEquals((await cli(h, ["continuation-mode", "on"])).code, 0);
      const pid = await deadSession(h, "P");
      await plan(h, "k", pid, ["--release"]);
      assertEquals((await cli(h, ["park", "--pid", String(pid)])).code, 0);
      const r = await check(h, "k", ["--claim", "--json"], { ...FACTS, session_id: "P" });
      assertEquals([r.code, r.v], [12, { kind: "stop", reason: "parked" }], r.stderr);
    },
  },
  {
    name: "parked: kept by register's cleanup and by prune",
    async run(h) {
      const pid = await deadSession(h, "P");
      assertEquals((await cli(h, ["park", "--pid", String(pid)])).code, 0);
      for (let i = 0; i < 10; i++) await (await running(h, `x${i}`)).kill();
      const p = await rosterJson<{ parked: number }>(h, ["prune"]);
      assertEquals(p.parked, 1);
      assertEquals((await rowOf(h, pid))?.reason, "parked");
    },
  },
  {
    name: "parked: still addressable by its session id",
    async run(h) {
      await using s = await running(h, "P");
      assertEquals((await cli(h, ["park", "--session-id", "P"])).code, 0);
      await using next = await running(h, "Q");
      const r = await cli(h, ["resume", "--session-id", "P", "--successor-pid", String(next.pid)]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals((await rowOf(h, s.pid))?.successor?.pid, next.pid);
    },
  },
  {
    name: "resumed: never live, though its process runs",
    async run(h) {
      await using s = await running(h, "R");
      assertEquals((await cli(h, ["park", "--pid", String(s.pid)])).code, 0);
      await using next = await running(h, "R2");
      const resume = ["resume", "--pid", String(s.pid), "--successor-pid", String(next.pid)];
      assertEquals((await cli(h, resume)).code, 0);
      const row = await rowOf(h, s.pid);
      assertEquals([row?.liveness, row?.reason], ["dead", "resumed"]);
      assertEquals((await cli(h, ["check", String(s.pid)])).code, 3);
      assertEquals((await rowOf(h, next.pid))?.predecessor?.pid, s.pid);
    },
  },
  {
    name: "resumed: the link is append-only",
    async run(h) {
      const old = await deadSession(h, "R");
      await using first = await running(h, "R");
      await using second = await running(h, "T");
      const resume = (pid: number) =>
        cli(h, ["resume", "--pid", String(old), "--successor-pid", String(pid)]);
      assertEquals((await resume(first.pid)).code, 0);
      assertEquals((await resume(first.pid)).code, 0, "an identical retry");
      const other = await resume(second.pid);
      assertEquals(other.code, 2, "another successor");
      assertMatch(other.stderr, new RegExp(`already resumed by pid ${first.pid}`));
      assertEquals((await rowOf(h, old))?.successor?.pid, first.pid);
    },
  },
  {
    name: "resumed: continued only through its successor",
    async run(h) {
      assertEquals((await cli(h, ["continuation-mode", "on"])).code, 0);
      const old = await deadSession(h, "R");
      await plan(h, "k", old, ["--release"]);
      await using next = await running(h, "R", { TMUX_PANE: "%9" });
      const link = ["resume", "--pid", String(old), "--successor-pid", String(next.pid)];
      assertEquals((await cli(h, link)).code, 0);
      const late = await cli(h, ["continuation-plan", "--key", "k2", "--session", String(old)]);
      assertEquals(late.code, 2, "a resumed session planned");
      const pred = await check(h, "k", ["--json"], { ...FACTS, session_id: "R", pane_key: PANE });
      assertEquals([pred.code, pred.v.reason], [11, "identity"], "the predecessor's pane");
      const succ = await check(h, "k", ["--json"], { ...FACTS, session_id: "R", pane_key: "%9" });
      assertEquals([succ.code, succ.v], [0, { kind: "dispatch" }], succ.stderr);
      await next.kill();
      const gone = await check(h, "k", ["--claim", "--json"], {
        ...FACTS,
        session_id: "R",
        pane_key: "%9",
      });
      assertEquals([gone.code, gone.v], [12, { kind: "stop", reason: "resumed" }]);
    },
  },
  {
    name: "lookups: a session id matches exactly",
    async run(h) {
      await using s = await running(h, "Sess-1");
      for (const near of ["Sess", "sess-1", "Sess-1 ", "Sess-10"]) {
        const r = await cli(h, ["park", "--session-id", near]);
        assertEquals(r.code, 2, `park --session-id ${JSON.stringify(near)}: ${r.stdout}`);
      }
      assertEquals((await rowOf(h, s.pid))?.reason, "running");
    },
  },
  {
    name: "lookups: resume --session-id picks the ended record, not the live successor",
    async run(h) {
      const old = await deadSession(h, "S");
      await using next = await running(h, "S");
      const r = await cli(h, ["resume", "--session-id", "S", "--successor-pid", String(next.pid)]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals((await rowOf(h, old))?.successor?.pid, next.pid);
      assertEquals((await rowOf(h, next.pid))?.liveness, "alive");
    },
  },
  {
    name: "records: the model and the harness's own session id are kept",
    async run(h) {
      await using s = spawnSleeper();
      const args = ["--model", "m-1", "--native-session-id", "n-1", "--session-id", "S"];
      await rosterJson(h, ["register", "--pid", String(s.pid), ...args]);
      const row = await rowOf(h, s.pid);
      assertEquals([row?.model, row?.native_session_id], ["m-1", "n-1"]);
    },
  },
  {
    name: "ended: a crashed row within retention is kept by prune",
    async run(h) {
      const pid = await deadSession(h, "E");
      assertEquals((await cli(h, ["prune"])).code, 0);
      assertEquals((await rowOf(h, pid))?.liveness, "dead", "prune removed it");
    },
  },
];

/** The table's rows after the marker: [rule, agrees] per row, in order. */
function tableRows(text: string): string[][] {
  const at = text.indexOf(MARKER);
  if (at === -1) throw new Error(`docs/continuation.md has no ${MARKER}`);
  const lines = text.slice(at + MARKER.length).trimStart().split("\n");
  const out: string[][] = [];
  for (const line of lines.slice(2)) {
    if (!line.startsWith("|")) break;
    out.push(line.split("|").slice(1, -1).map((c) => c.trim()));
  }
  return out;
}

Deno.test("wb's rules, run against roster's CLI", async (t) => {
  for (const rule of RULES) {
    await t.step({
      name: rule.name,
      ignore: rule.pending !== undefined,
      async fn() {
        await using home: TempDir = await tempDir();
        await rule.run(home.path);
      },
    });
  }
  await t.step(
    "docs/continuation.md's table has exactly these rules, pending ones so marked",
    () => {
      const table = tableRows(Deno.readTextFileSync(DOC));
      assertEquals(table.map((r) => r[0].replaceAll("`", "")), RULES.map((r) => r.name));
      for (const [i, rule] of RULES.entries()) {
        const agrees = table[i].at(-1)!;
        if (rule.pending) assertMatch(agrees, /^not landed yet/, rule.name);
        else assertMatch(agrees, /^yes\b/, rule.name);
      }
    },
  );
});
