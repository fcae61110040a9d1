/** The ledger's file formats: what is written, field for field and in order, and what is read. */
import { assert, assertEquals } from "../assert.ts";
import { PLAN } from "./fixtures.ts";
import {
  claimEvent,
  dispatchedOutcome,
  lastDispatchOf,
  lostOutcome,
  modeOf,
  outcomeIdOf,
  skipEvent,
  skippedOutcome,
  validateClaim,
  validateLockOwner,
  validatePlan,
} from "../../src/continuation/schema.ts";

const AT = "2026-03-01T12:00:00.000Z";
const CLAIM = { key: "k", token: "t1", continuation_id: "c1", pid: 7, at: AT };
const SKIP = { class: "veto" as const, reason: "hold", token: "t1", pid: 8, at: AT };

/** Field order is what the file holds: JSON text, not just equal values. */
const text = (v: unknown) => JSON.stringify(v);

Deno.test("records written: the documented fields, in order", async (t) => {
  await t.step("outcomes: outcome, continuation_id, at, key, token first", () => {
    assertEquals(
      text(dispatchedOutcome(CLAIM)),
      text({ outcome: "dispatched", continuation_id: "c1", at: AT, key: "k", token: "t1", pid: 7 }),
    );
    assertEquals(
      text(lostOutcome(CLAIM, "2026-03-01T13:00:00.000Z", 9)),
      text({
        outcome: "lost",
        continuation_id: "c1",
        at: "2026-03-01T13:00:00.000Z",
        key: "k",
        token: "t1",
        pid: 9,
        claim_pid: 7,
        recovered: true,
      }),
    );
    assertEquals(
      text(skippedOutcome("k", SKIP)),
      text({
        outcome: "skipped",
        continuation_id: null,
        at: AT,
        key: "k",
        token: "t1",
        class: "veto",
        reason: "hold",
      }),
    );
  });
  await t.step("audit events: claim (recovered only when so), skip", () => {
    assertEquals(
      text(claimEvent(CLAIM)),
      text({ event: "claim", key: "k", token: "t1", continuation_id: "c1" }),
    );
    assertEquals(
      text(claimEvent(CLAIM, true)),
      text({ event: "claim", key: "k", token: "t1", continuation_id: "c1", recovered: true }),
    );
    assertEquals(
      text(skipEvent("k", SKIP)),
      text({ event: "skip", key: "k", token: "t1", class: "veto", reason: "hold" }),
    );
  });
});

Deno.test("records read", async (t) => {
  await t.step("a plan reads back in schema order, whatever the file's order", () => {
    const plan = { ...PLAN, tool_calls: [{ id: "c", name: "Bash" }] };
    const reversed = (o: object) => Object.fromEntries(Object.entries(o).reverse());
    const r = validatePlan({ ...reversed(plan), session: reversed(plan.session) }, plan.key);
    assert(r.ok);
    assertEquals(text(r.value), text(plan));
  });
  await t.step("a claim: only for its own key, every field valid", () => {
    assertEquals(validateClaim(CLAIM, "k"), CLAIM);
    assertEquals(validateClaim(CLAIM, "other"), null);
    assertEquals(validateClaim({ ...CLAIM, continuation_id: "" }, "k"), null);
    assertEquals(validateClaim({ ...CLAIM, at: "then" }, "k"), null);
    assertEquals(validateClaim([CLAIM], "k"), null);
  });
  await t.step("a lock owner: every field, the nonce included", () => {
    const owner = { pid: 7, start_token: null, host: "h", boot_id: null, at: AT, nonce: "n" };
    assertEquals(validateLockOwner(owner), owner);
    assertEquals(validateLockOwner({ ...owner, nonce: undefined }), null);
    assertEquals(validateLockOwner({ ...owner, host: "" }), null);
    assertEquals(validateLockOwner({ ...owner, start_token: "" }), null);
  });
  await t.step("config, .last-dispatch and outcome values", () => {
    assertEquals([modeOf({ mode: "dry-run" }), modeOf({ mode: "ON" }), modeOf([])], [
      "dry-run",
      "off",
      "off",
    ]);
    assertEquals(lastDispatchOf({ at: AT }), Date.parse(AT));
    assertEquals([lastDispatchOf({ at: "x" }), lastDispatchOf("x")], [null, null]);
    assertEquals(outcomeIdOf({ continuation_id: "c1" }), "c1");
    assertEquals(outcomeIdOf({ continuation_id: null }), null);
    assertEquals([outcomeIdOf({ continuation_id: 1 }), outcomeIdOf(null)], [undefined, undefined]);
  });
});
