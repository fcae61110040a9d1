/**
 * A key's state is decided once (src/continuation/keys.ts): continuation-list,
 * continuation-show and roster metrics, run over one ledger holding a key in every state,
 * agree on each key.
 */
import { assertEquals } from "../assert.ts";
import { roster, rosterJson, tempDir } from "../helpers.ts";
import { KeyFiles, type KeyState, keyState } from "../../src/continuation/keys.ts";
import { parseExposition, valueOf } from "../metrics/servers.ts";
import { type Json, ledgerOf, PLAN, put } from "./fixtures.ts";

const HOUR = 3_600_000;
const at = new Date().toISOString();
const plan = (key: string, state: "planned" | "released", deadline: string | null = null) =>
  JSON.stringify({ ...PLAN, key, state, deadline });
const skip = (cls: string, reason: string) =>
  JSON.stringify({ class: cls, reason, token: "t1", pid: 4242, at });
const claim = (key: string) =>
  JSON.stringify({ key, token: "t1", continuation_id: `c-${key}`, pid: 4242, at });

/** Each key's files, by the state keyState gives it (precedence: claim, skip, plan). */
const LEDGER: Record<string, { state: KeyState; files: Record<string, string> }> = {
  planned: { state: "planned", files: { "plan.json": plan("planned", "planned") } },
  released: { state: "released", files: { "plan.json": plan("released", "released") } },
  expired: {
    state: "expired",
    files: { "plan.json": plan("expired", "released", new Date(Date.now() - HOUR).toISOString()) },
  },
  damaged: { state: "damaged", files: { "plan.json": "{" } },
  none: { state: "none", files: { outcome: JSON.stringify({ outcome: "dispatched" }) } },
  claimed: { state: "claimed", files: { "plan.json": plan("claimed", "released"), claim: "{" } },
  dispatched: {
    state: "dispatched",
    files: {
      "plan.json": "{",
      claim: claim("dispatched"),
      skip: skip("veto", "hold"),
      outcome: JSON.stringify({ outcome: "dispatched" }),
    },
  },
  lost: { state: "lost", files: { claim: "", outcome: JSON.stringify({ outcome: "lost" }) } },
  vetoed: {
    state: "skipped",
    files: { "plan.json": plan("vetoed", "released"), skip: skip("veto", "hold") },
  },
  ended: { state: "skipped", files: { skip: skip("process-end", "timeout") } },
  "skip-damaged": { state: "skipped", files: { "plan.json": "{", skip: "not json" } },
  declined: {
    state: "declined",
    files: { "plan.json": plan("declined", "released"), skip: skip("declined", "gave-up") },
  },
};

/** What continuation-list and -show call each state: a claim's outcome is its own field. */
const SHOWN: Record<KeyState, string> = {
  claimed: "claimed",
  dispatched: "claimed",
  lost: "claimed",
  skipped: "skipped",
  declined: "declined",
  none: "none",
  damaged: "damaged",
  expired: "expired",
  planned: "planned",
  released: "released",
};

Deno.test("a key's state: one decision that list, show and metrics all report", async (t) => {
  await using home = await tempDir();
  const dir = ledgerOf(home.path);
  Deno.mkdirSync(dir, { mode: 0o700 });
  for (const [key, { files }] of Object.entries(LEDGER)) {
    for (const [suffix, text] of Object.entries(files)) put(`${dir}/${key}.${suffix}`, text);
  }
  put(`${dir}/.hidden.claim`, "{}"); // not a key: starts with a dot
  put(`${dir}/x.claim.4242.abc.tmp`, "{"); // a writer's temp file
  const expected = Object.fromEntries(Object.entries(LEDGER).map(([k, v]) => [k, v.state]));

  await t.step("every state, decided from the key's files", () => {
    const got = Object.fromEntries(
      Object.keys(LEDGER).map((k) => [k, keyState(new KeyFiles(dir, k), Date.now())]),
    );
    assertEquals(got, expected);
  });

  const listed = await rosterJson<Json[]>(home.path, ["continuation-list"]);
  await t.step("continuation-list: every key, in the state decided for it", () => {
    const got = Object.fromEntries(listed.map((k) => [k.key, k.state]));
    assertEquals(
      got,
      Object.fromEntries(Object.entries(expected).map(([k, s]) => [k, SHOWN[s]])),
    );
  });

  await t.step("continuation-show: the same state as continuation-list, key by key", async () => {
    for (const row of listed) {
      if (row.state === "none") continue; // show refuses a key with nothing to show
      const shown = await rosterJson<Json>(home.path, [
        "continuation-show",
        "--key",
        row.key as string,
      ]);
      assertEquals({ ...shown, age_ms: null }, { ...row, age_ms: null }, row.key as string);
    }
  });

  await t.step("roster metrics: each key counted once, in the state list gives it", async () => {
    const r = await roster(["metrics", "--home", home.path]);
    assertEquals(r.code, 0, r.stderr);
    const samples = parseExposition(r.stdout);
    // Metrics' words: a claim by its outcome, a declined key skipped, an expired one by its
    // plan's state, a key with only an outcome not at all.
    const counted = new Map<string, number>();
    for (const row of listed) {
      const state: string = row.state === "claimed" &&
          (row.outcome === "dispatched" || row.outcome === "lost")
        ? row.outcome
        : row.state === "declined"
        ? "skipped"
        : row.state === "expired"
        ? row.plan as string
        : row.state as string;
      if (state !== "none") counted.set(state, (counted.get(state) ?? 0) + 1);
    }
    for (
      const state of ["planned", "released", "damaged", "claimed", "dispatched", "lost", "skipped"]
    ) {
      assertEquals(
        valueOf(samples, "roster_continuation_keys", { state }),
        counted.get(state) ?? 0,
        state,
      );
    }
    assertEquals(valueOf(samples, "roster_continuation_vetoes_total", { reason: "hold" }), 1);
    assertEquals(
      valueOf(samples, "roster_continuation_vetoes_total", { reason: "skip-damaged" }),
      1,
    );
    assertEquals(valueOf(samples, "roster_continuation_skips_total", { reason: "timeout" }), 1);
    assertEquals(valueOf(samples, "roster_continuation_skips_total", { reason: "gave-up" }), 1);
  });
});
