/** Plans: built from a registry row (pure), and released under the lock. */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import { PLAN, put, testJudge } from "./fixtures.ts";
import { ensureLedger, planPath, readPlan, writePlan } from "../../src/continuation/ledger.ts";
import { buildPlan, type PlanRequest, releasePlan } from "../../src/continuation/plan.ts";
import type { Plan } from "../../src/continuation/schema.ts";
import { RosterError, UsageError } from "../../src/errors.ts";
import { malformedRow, type Row } from "../../src/registry/row.ts";

const NOW = Date.parse("2026-03-01T12:00:00.000Z");

const SESSION = PLAN.session;
/** The registry row of that session, dead. */
const ROW: Row = {
  ...malformedRow("/s/h/42.json", SESSION.session_pid, "h", null, ""),
  ...SESSION,
  malformed: false,
  detail: null,
  liveness: "dead",
  reason: "exited",
};

const REQUEST: PlanRequest = {
  key: "k",
  pid: SESSION.session_pid,
  deadlineMs: 3_600_000,
  notBeforeMs: null,
  spacingMs: 5_000,
  frozenMarker: null,
  cause: null,
  release: false,
};

Deno.test("buildPlan", async (t) => {
  await t.step("the row's session, the request's times, planned", () => {
    assertEquals(buildPlan(REQUEST, ROW, NOW, "tok"), {
      schema: 1,
      key: "k",
      token: "tok",
      state: "planned",
      session: SESSION,
      frozen_marker: null,
      interrupted_at: "2026-03-01T12:00:00.000Z",
      cause: null,
      tool_calls: [],
      not_before: null,
      deadline: "2026-03-01T13:00:00.000Z",
      spacing_ms: 5_000,
      chain: 1,
      chain_limit: 3,
    });
  });
  await t.step("released, with not_before, marker and cause as asked", () => {
    const p = buildPlan(
      { ...REQUEST, release: true, notBeforeMs: 60_000, frozenMarker: "m1", cause: "hard" },
      ROW,
      NOW,
      "tok",
    );
    assertEquals([p.state, p.not_before, p.frozen_marker, p.cause], [
      "released",
      "2026-03-01T12:01:00.000Z",
      "m1",
      "hard",
    ]);
  });
  await t.step("a session not (yet) dead dates no interruption", () => {
    for (const liveness of ["alive", "unknown"] as const) {
      assertEquals(buildPlan(REQUEST, { ...ROW, liveness }, NOW, "t").interrupted_at, null);
    }
  });
});

Deno.test("releasePlan", async (t) => {
  await using tmp = await tempDir();
  const judge = await testJudge();
  const plan = buildPlan(REQUEST, ROW, NOW, "tok");

  await t.step("no plan: a usage error, and no ledger created", async () => {
    const dir = `${tmp.path}/none`;
    let err: unknown;
    try {
      await releasePlan(dir, judge, "k");
    } catch (e) {
      err = e;
    }
    assert(err instanceof UsageError);
    assertMatch(err.message, /^Invalid --key: no plan for k in /);
    assertEquals([...Deno.readDirSync(tmp.path)], []);
  });

  const dir = ensureLedger(`${tmp.path}/l`);
  await t.step("flips the state, keeps the token; released again is left alone", async () => {
    writePlan(dir, plan);
    const released = await releasePlan(dir, judge, "k");
    assertEquals(released, { ...plan, state: "released" });
    assertEquals(readPlan(dir, "k"), { ok: true, value: released });
    const bytes = Deno.readTextFileSync(planPath(dir, "k"));
    const mtime = Deno.statSync(planPath(dir, "k")).mtime;
    assertEquals(await releasePlan(dir, judge, "k"), released);
    assertEquals(Deno.readTextFileSync(planPath(dir, "k")), bytes);
    assertEquals(Deno.statSync(planPath(dir, "k")).mtime, mtime);
  });

  await t.step("a damaged plan: a failure naming why, the file untouched", async () => {
    put(planPath(dir, "d"), JSON.stringify({ ...plan, key: "d", token: "" } satisfies Plan));
    const before = Deno.readTextFileSync(planPath(dir, "d"));
    let err: unknown;
    try {
      await releasePlan(dir, judge, "d");
    } catch (e) {
      err = e;
    }
    assert(err instanceof RosterError && !(err instanceof UsageError));
    assertEquals(err.message, "Could not release: the plan is damaged (invalid field: token): d");
    assertEquals(Deno.readTextFileSync(planPath(dir, "d")), before);
  });
});
