/** The ledger's files: safe reads, exclusive creation, atomic writes, and the audit log. */
import { assert, assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { cleanEnv, pauseMarker, tempDir } from "../helpers.ts";
import { iso, mkfifo, PLAN, put } from "./fixtures.ts";
import {
  appendAudit,
  auditHasClaim,
  readAudit,
  readAuditText,
} from "../../src/continuation/audit.ts";
import {
  claimPath,
  createClaim,
  createSkip,
  ensureLedger,
  planPath,
  readClaim,
  readLastDispatch,
  readMode,
  readOutcomeId,
  readPlan,
  readSkip,
  readState,
  writeLastDispatch,
  writeOutcome,
  writePlan,
} from "../../src/continuation/ledger.ts";
import { claimUnfinished } from "../../src/continuation/recover.ts";
import { isValidKey, validatePlan } from "../../src/continuation/schema.ts";
import { RosterError } from "../../src/errors.ts";

const AT = "2026-03-01T12:00:00.000Z";

Deno.test("keys are file names, never paths", async (t) => {
  for (const key of ["a", "abc-1.2_3", "A".repeat(128), "-x", "_"]) {
    await t.step(`accepts ${key.slice(0, 20)}`, () => assert(isValidKey(key)));
  }
  for (const key of ["", ".x", "..", "../x", "a/b", "a\\b", "a b", "é", "A".repeat(129), "a\n"]) {
    await t.step(`rejects ${JSON.stringify(key.slice(0, 20))}`, () => assert(!isValidKey(key)));
  }
});

Deno.test("validatePlan", async (t) => {
  await t.step("a valid plan, and a full list row as the session", () => {
    assertEquals(validatePlan(PLAN, "k1"), { ok: true, value: PLAN });
    const row = { ...PLAN.session, liveness: "dead", reason: "exited", path: "/x", extra: 1 };
    const r = validatePlan({ ...PLAN, session: row, future_field: true }, "k1");
    assert(r.ok);
    assertEquals(r.value.session, PLAN.session);
  });
  const bad: [string, unknown, RegExp][] = [
    ["not an object", [], /not a JSON object/],
    ["another schema", { ...PLAN, schema: 2 }, /invalid field: schema/],
    ["key of another file", { ...PLAN, key: "k2" }, /key differs/],
    ["no token", { ...PLAN, token: "" }, /invalid field: token/],
    ["unknown state", { ...PLAN, state: "done" }, /invalid field: state/],
    ["missing session", { ...PLAN, session: undefined }, /session/],
    ["bad session pid", { ...PLAN, session: { ...PLAN.session, session_pid: 0 } }, /session_pid/],
    ["no host", { ...PLAN, session: { ...PLAN.session, host: "" } }, /session\.host/],
    ["bad time", { ...PLAN, deadline: "tomorrow" }, /invalid field: deadline/],
    ["bad cause", { ...PLAN, cause: "oom" }, /invalid field: cause/],
    ["bad tool call", { ...PLAN, tool_calls: [{ id: 1 }] }, /tool_calls\[0\]/],
    ["negative spacing", { ...PLAN, spacing_ms: -1 }, /spacing_ms/],
    ["fractional spacing", { ...PLAN, spacing_ms: 1.5 }, /spacing_ms/],
  ];
  for (const [name, value, re] of bad) {
    await t.step(`rejects ${name}`, () => {
      const r = validatePlan(JSON.parse(JSON.stringify(value)), "k1");
      assert(!r.ok, name);
      assertMatch(r.problem, re);
    });
  }
});

Deno.test("reading the ledger safely", async (t) => {
  await using tmp = await tempDir();
  const dir = ensureLedger(`${tmp.path}/ledger`);
  assertEquals((Deno.statSync(dir).mode ?? 0) & 0o777, 0o700);

  await t.step("an empty ledger: no plan, no claim, no skip, mode off, no hold", () => {
    const state = readState(dir, "k1");
    assertEquals({ ...state, mode: state.mode.mode }, {
      plan: null,
      claimed: false,
      skip: null,
      lastDispatchMs: null,
      mode: "off",
      hold: false,
    });
    assertMatch(state.mode.detail ?? "", /no config\.json/);
  });

  await t.step("a written plan reads back", () => {
    writePlan(dir, PLAN);
    assertEquals(readPlan(dir, "k1"), { ok: true, value: PLAN });
    assertEquals((Deno.statSync(planPath(dir, "k1")).mode ?? 0) & 0o777, 0o600);
  });

  await t.step("damaged plans are damaged, never trusted, never hang", () => {
    const cases: [string, () => void, RegExp][] = [
      ["s", () => Deno.symlinkSync(planPath(dir, "k1"), planPath(dir, "s")), /symbolic/],
      ["f", () => mkfifo(planPath(dir, "f")), /not a regular file/],
      ["d", () => Deno.mkdirSync(planPath(dir, "d")), /not a regular file/],
      ["h", () => put(planPath(dir, "h"), " ".repeat(70_000)), /larger than/],
      [
        "w",
        () => put(planPath(dir, "w"), JSON.stringify({ ...PLAN, key: "w" }), 0o666),
        /writable/,
      ],
      ["j", () => put(planPath(dir, "j"), "{"), /not valid JSON/],
      ["u", () => {
        Deno.writeFileSync(planPath(dir, "u"), new Uint8Array([0x7b, 0xff, 0x7d]));
        Deno.chmodSync(planPath(dir, "u"), 0o600);
      }, /UTF-8/],
      ["o", () => put(planPath(dir, "o"), JSON.stringify(PLAN)), /key differs/],
    ];
    for (const [key, make, re] of cases) {
      make();
      const r = readPlan(dir, key);
      assert(r !== null && !r.ok, key);
      assertMatch(r.problem, re, key);
    }
  });

  await t.step("skip files: valid, damaged (a veto), any type counts", () => {
    assert(
      createSkip(dir, "k1", { class: "veto", reason: "hold", token: "t1", pid: 9, at: iso() }),
    );
    const skip = readSkip(dir, "k1");
    assert(skip !== null && !("damaged" in skip));
    assertEquals([skip.class, skip.reason, skip.token, skip.pid], ["veto", "hold", "t1", 9]);
    put(`${dir}/k2.skip`, "");
    assertEquals(readSkip(dir, "k2"), { damaged: "not valid JSON" });
    Deno.mkdirSync(`${dir}/k3.skip`);
    assert("damaged" in (readSkip(dir, "k3") ?? {}));
    Deno.symlinkSync("/nonexistent", `${dir}/k4.skip`);
    assert("damaged" in (readSkip(dir, "k4") ?? {}));
    put(`${dir}/k5.skip`, JSON.stringify({ class: "maybe", reason: "x", token: null, pid: 1 }));
    assert("damaged" in (readSkip(dir, "k5") ?? {}));
  });

  await t.step("config: missing, unreadable or invalid means off", () => {
    const cfg = `${dir}/config.json`;
    assertEquals(readMode(dir).mode, "off");
    for (const mode of ["on", "off", "dry-run"]) {
      put(cfg, JSON.stringify({ mode }));
      assertEquals(readMode(dir).mode, mode);
    }
    put(cfg, JSON.stringify({ mode: "ON" }));
    assertEquals(readMode(dir).mode, "off");
    put(cfg, "not json");
    assertEquals(readMode(dir).mode, "off");
    put(cfg, JSON.stringify({ mode: "on" }), 0o666);
    assertEquals(readMode(dir).mode, "off");
    Deno.removeSync(cfg);
    put(`${tmp.path}/elsewhere.json`, JSON.stringify({ mode: "on" }));
    Deno.symlinkSync(`${tmp.path}/elsewhere.json`, cfg);
    assertEquals(readMode(dir).mode, "off");
  });

  await t.step("hold: any file of that name, even a dangling link", () => {
    Deno.symlinkSync("/nonexistent", `${dir}/hold`);
    assertEquals(readState(dir, "k1").hold, true);
  });

  await t.step(".last-dispatch: written time; a damaged one falls back to its mtime", () => {
    writeLastDispatch(dir, Date.parse("2026-01-02T03:04:05.000Z"));
    assertEquals(readLastDispatch(dir), Date.parse("2026-01-02T03:04:05.000Z"));
    put(`${dir}/.last-dispatch`, "garbage");
    const mtime = Deno.statSync(`${dir}/.last-dispatch`).mtime!.getTime();
    assertEquals(readLastDispatch(dir), mtime);
  });
});

Deno.test("claims and skips are exclusive and never torn", async (t) => {
  await using tmp = await tempDir();
  const dir = ensureLedger(`${tmp.path}/l`);
  const claim = { key: "k1", token: "t1", continuation_id: "c1", pid: Deno.pid, at: iso() };
  await t.step("the first claim wins, the second is refused", () => {
    assertEquals(createClaim(dir, claim), true);
    assertEquals(createClaim(dir, { ...claim, continuation_id: "c2" }), false);
    assertEquals(JSON.parse(Deno.readTextFileSync(claimPath(dir, "k1"))).continuation_id, "c1");
    assertEquals(readState(dir, "k1").claimed, true);
  });
  await t.step("the first skip wins", () => {
    const s = { class: "veto" as const, reason: "hold", token: "t1", pid: 1, at: iso() };
    assertEquals(createSkip(dir, "k2", s), true);
    assertEquals(createSkip(dir, "k2", { ...s, reason: "busy" }), false);
    assertEquals((readSkip(dir, "k2") as { reason: string }).reason, "hold");
  });
  await t.step("no temp files are left behind", () => {
    writeOutcome(dir, "k1", { outcome: "dispatched", continuation_id: "c1", at: iso() });
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(names, ["k1.claim", "k1.outcome", "k2.skip"]);
  });
  await t.step("ensureLedger tightens a loose directory and refuses a symlink", () => {
    Deno.chmodSync(dir, 0o755);
    ensureLedger(dir);
    assertEquals((Deno.statSync(dir).mode ?? 0) & 0o777, 0o700);
    Deno.symlinkSync(dir, `${tmp.path}/link`);
    assertThrows(() => ensureLedger(`${tmp.path}/link`), RosterError);
  });
});

Deno.test("the audit log", async (t) => {
  await using tmp = await tempDir();
  const dir = ensureLedger(`${tmp.path}/l`);
  await t.step("one JSON line per event, with time and pid", () => {
    appendAudit(dir, { event: "claim", key: "a" });
    appendAudit(dir, { event: "skip", key: "b" });
    const lines = readAudit(dir);
    assertEquals(lines.map((l) => [l.event, l.key, l.pid]), [
      ["claim", "a", Deno.pid],
      ["skip", "b", Deno.pid],
    ]);
    assert(typeof lines[0].at === "string");
  });
  await t.step("never appends through a link or into a FIFO", () => {
    const other = ensureLedger(`${tmp.path}/m`);
    Deno.symlinkSync(`${tmp.path}/target`, `${other}/audit.ndjson`);
    assertThrows(() => appendAudit(other, { event: "claim" }), RosterError);
    const third = ensureLedger(`${tmp.path}/n`);
    mkfifo(`${third}/audit.ndjson`);
    assertThrows(() => appendAudit(third, { event: "claim" }), RosterError);
  });
  await t.step("nor through a link put in place between its look and its open", async () => {
    // A first audit line: no file at the look, so it is created; the pause (src/pause.ts)
    // holds the appender between the two, in a process of its own, while a link is put there.
    const ledger = ensureLedger(`${tmp.path}/race`);
    const target = `${tmp.path}/race-target`;
    const script = `import { appendAudit } from ${
      JSON.stringify(new URL("../../src/continuation/audit.ts", import.meta.url).href)
    };\nappendAudit(${JSON.stringify(ledger)}, { event: "claim", key: "k" });\n`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      env: { ...cleanEnv(), ROSTER_TEST_PAUSE_AT: "read:before-open" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const marker = await pauseMarker(ledger, "read:before-open", child);
    assert(marker !== null, "the appender never reached its open");
    Deno.symlinkSync(target, `${ledger}/audit.ndjson`);
    Deno.removeSync(marker);
    const out = await child.output();
    // Looked at again, the link is refused; nothing was made or written where it points.
    assertEquals(out.code, 1);
    assertMatch(new TextDecoder().decode(out.stderr), /Could not audit: not a regular file/);
    assertThrows(() => Deno.lstatSync(target), Deno.errors.NotFound);
  });
});

Deno.test("a claim's record: claim, outcome, and its audit line", async (t) => {
  await using tmp = await tempDir();
  const dir = ensureLedger(`${tmp.path}/l`);
  const claim = { key: "k", token: "t1", continuation_id: "c".repeat(24), pid: 7, at: AT };
  await t.step("claimUnfinished: an outcome that does not name the claim", () => {
    assertEquals(claimUnfinished(claim, undefined), true);
    assertEquals(claimUnfinished(claim, null), true);
    assertEquals(claimUnfinished(claim, "another"), true);
    assertEquals(claimUnfinished(claim, claim.continuation_id), false);
  });
  await t.step("auditHasClaim: a claim line with that id, torn lines skipped", () => {
    const line = (v: unknown) => JSON.stringify(v);
    const id = claim.continuation_id;
    assertEquals(auditHasClaim("", id), false);
    assertEquals(auditHasClaim(line({ event: "claim", continuation_id: id }) + "\n", id), true);
    assertEquals(auditHasClaim(line({ event: "skip", continuation_id: id }), id), false);
    assertEquals(auditHasClaim(line({ event: "claim", continuation_id: "x" + id }), id), false);
    const torn = `{"event":"claim","continuation_id":"${id}`;
    assertEquals(auditHasClaim(torn + "\n" + line({ event: "skip" }), id), false);
  });
  await t.step("readClaim and readOutcomeId read what roster writes; damage is null", () => {
    assertEquals([readClaim(dir, "k"), readOutcomeId(dir, "k")], [null, undefined]);
    assert(createClaim(dir, claim));
    assertEquals(readClaim(dir, "k"), claim);
    writeOutcome(dir, "k", { outcome: "skipped", continuation_id: null, at: AT });
    assertEquals(readOutcomeId(dir, "k"), null);
    writeOutcome(dir, "k", { outcome: "dispatched", continuation_id: "c1", at: AT });
    assertEquals(readOutcomeId(dir, "k"), "c1");
    put(`${dir}/k.outcome`, "{torn");
    assertEquals(readOutcomeId(dir, "k"), undefined);
    put(claimPath(dir, "other"), JSON.stringify({ ...claim, key: "k" }));
    assertEquals(readClaim(dir, "other"), null, "a claim for another key");
  });
  await t.step("readAuditText: the end of it, whole lines only, bounded; never a FIFO", () => {
    const other = ensureLedger(`${tmp.path}/m`);
    assertEquals(readAuditText(other), "");
    for (let i = 0; i < 2000; i++) appendAudit(other, { event: "skip", key: `k${i}` });
    const text = readAuditText(other);
    assert(text.length > 64 * 1024, `${text.length} bytes`);
    assertEquals(text.trimEnd().split("\n").length, 2000);
    // Bounded: only the last bytes, starting at a whole line, ending with the newest.
    const tail = readAuditText(other, 4096);
    assert(tail.length <= 4096);
    const lines = tail.trimEnd().split("\n");
    for (const l of lines) JSON.parse(l);
    assertEquals(JSON.parse(lines.at(-1)!).key, "k1999");
    const third = ensureLedger(`${tmp.path}/n`);
    mkfifo(`${third}/audit.ndjson`);
    assertThrows(() => readAuditText(third), RosterError);
  });
});
