/**
 * The JSON Schemas: schemas/*.json are the schema module's, exactly as `roster schema NAME`
 * prints them; the validator the suite checks every JSON output with rejects what they forbid.
 */
import { assert, assertEquals, assertMatch, assertThrows } from "../assert.ts";
import { hostDir, roster, rosterJson, spawnSleeper, tempDir } from "../helpers.ts";
import { assertSchema, NO_JSON_OUTPUT, schemaFor, validate } from "../schema.ts";
import { COMMANDS } from "../../src/cli/spec.ts";
import { SCHEMA_DIR, schemaText } from "../../scripts/schemas.ts";
import { schemaDocument, SCHEMAS } from "../../src/cli/schemas.ts";

Deno.test("schemas/*.json are current (deno run -A scripts/schemas.ts rewrites them)", async () => {
  const files = [...Deno.readDirSync(SCHEMA_DIR)].map((e) => e.name).sort();
  assertEquals(files, Object.keys(SCHEMAS).map((n) => `${n}.json`).sort());
  for (const name of Object.keys(SCHEMAS)) {
    assertEquals(await Deno.readTextFile(`${SCHEMA_DIR}${name}.json`), schemaText(name), name);
  }
  const r = await roster(["schema", "prune"]);
  assertEquals(r.stdout, schemaText("prune"));
});

Deno.test("no schema's enum lists a value twice (JSON Schema requires unique items)", () => {
  const twice: string[] = [];
  const walk = (v: unknown, at: string) => {
    if (typeof v !== "object" || v === null) return;
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.enum)) {
      const seen = o.enum.map((e) => JSON.stringify(e));
      if (new Set(seen).size !== seen.length) twice.push(`${at}: ${seen.join(", ")}`);
    }
    for (const [k, child] of Object.entries(o)) walk(child, `${at}.${k}`);
  };
  for (const name of Object.keys(SCHEMAS)) walk(schemaDocument(name), name);
  assertEquals(twice, []);
});

Deno.test("the validator rejects what a schema forbids", () => {
  const row = schemaDocument("token")!;
  const good = {
    pid: 1,
    token: "1@b",
    start_token: "1",
    boot_id: "b",
    process_started_at: "2026-01-01T00:00:00.000Z",
    state: "running",
  };
  assertEquals(validate(row, good), []);
  assert(validate(row, { ...good, extra: 1 }).some((e) => /unexpected field extra/.test(e)));
  assert(validate(row, { ...good, pid: "1" }).some((e) => /\$\.pid: expected integer/.test(e)));
  assert(validate(row, { ...good, state: "x" }).some((e) => /expected one of/.test(e)));
  const { state: _, ...missing } = good;
  assert(validate(row, missing).some((e) => /missing state/.test(e)));
  assert(validate(row, { ...good, process_started_at: "yesterday" }).length > 0);
});

Deno.test("every command's --json output has a schema (a missing one fails the suite)", async (t) => {
  await t.step("the command table: each command has a schema, or says why it prints none", () => {
    for (const c of COMMANDS) {
      const name = schemaFor([c.name, "--json"]);
      assert(name !== null, `roster ${c.name} --json has no schema`);
      if (name !== "none") assert(name in SCHEMAS, `${c.name}: no schema ${name}`);
    }
    for (const c of Object.keys(NO_JSON_OUTPUT)) {
      assert(COMMANDS.some((x) => x.name === c), `NO_JSON_OUTPUT names no command ${c}`);
    }
    // Flags that change what is printed have their own schema.
    assertEquals(schemaFor(["token", "1", "x", "--verify", "--json"]), "token-verify");
    assertEquals(schemaFor(["hooks", "show", "pi", "--json"]), "hooks-show");
    assertEquals(schemaFor(["--home", "/h", "park", "--json"]), "row");
  });

  await t.step("output of a command with no schema is a failure, not a skip", () => {
    const e = assertThrows(() => assertSchema(["no-such-command", "--json"], "{}"));
    assertMatch(e.message, /no schema for this output/);
  });

  await t.step("rows are closed: a field the schema does not list is refused", async () => {
    await using dir = await tempDir();
    await using s = spawnSleeper();
    const row = await rosterJson<Record<string, unknown>>(dir.path, [
      "register",
      "--pid",
      String(s.pid),
    ]);
    const stdout = JSON.stringify({ ...row, parked_by: "someone" });
    const e = assertThrows(() => assertSchema(["register", "--json"], stdout));
    assertMatch(e.message, /unexpected field parked_by/);
    const list = JSON.stringify([{ ...row, chain: 1 }]);
    assertMatch(assertThrows(() => assertSchema(["list", "--json"], list)).message, /field chain/);
  });
});

Deno.test("the lifecycle commands' JSON and the records they write match their schemas", async (t) => {
  await using dir = await tempDir();
  const home = dir.path;
  const record = schemaDocument("record")!;
  /** Every record file in the store validates against the record schema. */
  const recordsValid = () => {
    let n = 0;
    for (const e of Deno.readDirSync(hostDir(home))) {
      if (!e.name.endsWith(".json")) continue;
      const value = JSON.parse(Deno.readTextFileSync(`${hostDir(home)}/${e.name}`));
      assertEquals(validate(record, value), [], e.name);
      n++;
    }
    return n;
  };
  await using old = spawnSleeper();
  await using next = spawnSleeper();
  // rosterJson validates each output against its schema (tests/helpers.ts).
  await t.step("register, park, resume", async () => {
    await rosterJson(home, ["register", "--pid", String(old.pid), "--session-id", "s-old"]);
    await rosterJson(home, ["register", "--pid", String(next.pid), "--session-id", "s-new"]);
    const parked = await rosterJson<{ parked_at: string }>(home, [
      "park",
      "--pid",
      String(old.pid),
    ]);
    assert(parked.parked_at !== null);
    const resumed = await rosterJson<{ successor: { pid: number } }>(home, [
      "resume",
      "--session-id",
      "s-old",
      "--successor-pid",
      String(next.pid),
    ]);
    assertEquals(resumed.successor.pid, next.pid);
    const rows = await rosterJson<{ predecessor?: { pid: number } | null }[]>(home, [
      "list",
      "--all",
    ]);
    assert(rows.some((r) => r.predecessor?.pid === old.pid));
    assertEquals(recordsValid(), 2);
  });

  await t.step("exec writes how the session ended", async () => {
    const r = await roster(["exec", "--home", home, "--session-id", "s-exec", "--", "true"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(recordsValid(), 3);
  });

  await t.step("the ledger commands", async () => {
    await rosterJson(home, ["continuation-mode"]);
    await rosterJson(home, ["continuation-mode", "on"]);
    await rosterJson(home, ["continuation-hold", "on"]);
    await rosterJson(home, ["continuation-hold", "off"]);
    await using crashed = spawnSleeper();
    await rosterJson(home, ["register", "--pid", String(crashed.pid), "--session-id", "s-k"]);
    await crashed.kill();
    await rosterJson(home, ["continuation-plan", "--key", "k1", "--session", String(crashed.pid)]);
    // The plan holds the row: its record names the key.
    assertEquals(recordsValid(), 4);
    const list = await rosterJson<{ key: string; state: string }[]>(home, ["continuation-list"]);
    assertEquals(list.map((k) => [k.key, k.state]), [["k1", "planned"]]);
    await rosterJson(home, ["continuation-show", "--key", "k1"]);
    const declined = await rosterJson<{ outcome: string }>(home, [
      "continuation-decline",
      "--key",
      "k1",
    ]);
    assertEquals(declined.outcome, "declined");
    await rosterJson(home, ["continuation-show", "--key", "k1"]);
    await rosterJson(home, ["continuation-clean", "--dry-run"]);
    await rosterJson(home, ["continuation-clean", "--older-than", "0s"]);
  });

  await t.step("hooks show", async () => {
    for (const h of ["claude", "pi"]) {
      const shown = await rosterJson<{ kind: string }>(home, ["hooks", "show", h]);
      assertEquals(shown.kind, h === "pi" ? "file" : "settings");
    }
  });
});
