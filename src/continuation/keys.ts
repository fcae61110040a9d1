/**
 * A continuation key's state, decided once: from a ledger file's name back to its key, and
 * from the key's files to one state that `continuation-list`, `continuation-show` and
 * `roster metrics` all report (each in its own words, mapped from this one decision).
 */
import { readJson } from "../fs/read.ts";
import { parseTime } from "../time.ts";
import {
  isClaimed,
  outcomePath,
  type PlanRead,
  readPlan,
  readSkip,
  type SkipRead,
} from "./ledger.ts";
import { isObject } from "../format/result.ts";
import { isValidKey, type Plan, type SkipClass } from "./schema.ts";

/** The four files a key can have, by the suffix after the key in their names. */
const KEY_FILES = { plan: ".plan.json", claim: ".claim", skip: ".skip", outcome: ".outcome" };
type KeyFile = keyof typeof KEY_FILES;

/** The key a ledger file belongs to and which of its files it is; null for global and temp files. */
export function keyOfFile(name: string): { key: string; file: KeyFile } | null {
  for (const [file, suffix] of Object.entries(KEY_FILES) as [KeyFile, string][]) {
    if (name.endsWith(suffix)) {
      const key = name.slice(0, -suffix.length);
      return isValidKey(key) ? { key, file } : null;
    }
  }
  return null;
}

/** Every key with a file in the ledger at `dir` (of any of the four); null without a ledger. */
export function ledgerKeys(dir: string): Set<string> | null {
  const keys = new Set<string>();
  try {
    for (const e of Deno.readDirSync(dir)) {
      const of = keyOfFile(e.name);
      if (of !== null) keys.add(of.key);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  return keys;
}

/**
 * Every state a key can be in, in the precedence keyState decides them: a claim (with what its
 * outcome says of the dispatch) decides the key, then a skip, then the plan.
 */
export type KeyState =
  | "claimed"
  | "dispatched"
  | "lost"
  | "skipped"
  | "declined"
  | "none"
  | "damaged"
  | "expired"
  | "planned"
  | "released";

/** What keyState looks at, each read when first asked for (a claim needs no plan read). */
export interface KeyFacts {
  readonly claimed: boolean;
  /** The outcome file's `outcome`, null without a readable one. */
  readonly outcome: string | null;
  readonly skip: SkipRead;
  readonly plan: PlanRead;
}

/** The one decision of a key's state, pure over its facts. */
export function keyState(facts: KeyFacts, now: number): KeyState {
  if (facts.claimed) {
    const outcome = facts.outcome;
    return outcome === "dispatched" || outcome === "lost" ? outcome : "claimed";
  }
  const skip = facts.skip;
  if (skip !== null) return "class" in skip && skip.class === "declined" ? "declined" : "skipped";
  const plan = facts.plan;
  if (plan === null) return "none";
  if (!plan.ok) return "damaged";
  const deadline = plan.value.deadline ? parseTime(plan.value.deadline) : null;
  return deadline !== null && now > deadline ? "expired" : plan.value.state;
}

/** A skip's class and reason as both reports give them: a damaged skip is `skip-damaged`. */
export function skipClassReason(
  skip: NonNullable<SkipRead>,
): { class: SkipClass | null; reason: string } {
  return "damaged" in skip
    ? { class: null, reason: "skip-damaged" }
    : { class: skip.class, reason: skip.reason };
}

/** The facts of `key` in the ledger at `dir`, each file read once, when first asked for. */
export class KeyFiles implements KeyFacts {
  #claimed?: boolean;
  #outcome?: string | null;
  #skip?: SkipRead;
  #plan?: PlanRead;

  constructor(readonly dir: string, readonly key: string) {}

  get claimed(): boolean {
    return this.#claimed ??= isClaimed(this.dir, this.key);
  }
  get outcome(): string | null {
    if (this.#outcome === undefined) {
      const read = readJson(outcomePath(this.dir, this.key));
      this.#outcome = read !== null && read.ok && isObject(read.value) &&
          typeof read.value.outcome === "string"
        ? read.value.outcome
        : null;
    }
    return this.#outcome;
  }
  get skip(): SkipRead {
    if (this.#skip === undefined) this.#skip = readSkip(this.dir, this.key);
    return this.#skip;
  }
  get plan(): PlanRead {
    if (this.#plan === undefined) this.#plan = readPlan(this.dir, this.key);
    return this.#plan;
  }
}

/** The words `continuation-list` and `continuation-show` use: there a claim's outcome is a
 * field of its own, so a dispatched or lost key is `claimed`. */
export type ShownState = Exclude<KeyState, "dispatched" | "lost">;
/** In the order the JSON Schema lists them (schemas/*.json). */
export const SHOWN_STATES: readonly ShownState[] = [
  "none",
  "planned",
  "released",
  "claimed",
  "skipped",
  "declined",
  "expired",
  "damaged",
];
export const shownState = (s: KeyState): ShownState =>
  s === "dispatched" || s === "lost" ? "claimed" : s;

/** The states `roster_continuation_keys` counts (docs/fleet.md): a declined key is skipped,
 * an expired one counted by its plan's state, and a key without a plan, claim or skip not at
 * all. */
export type CountedState = Exclude<KeyState, "declined" | "expired" | "none">;
export const COUNTED_STATES: readonly CountedState[] = [
  "planned",
  "released",
  "damaged",
  "claimed",
  "dispatched",
  "lost",
  "skipped",
];
export function countedState(s: KeyState, facts: KeyFacts): CountedState | null {
  if (s === "none") return null;
  if (s === "declined") return "skipped";
  if (s === "expired") return (facts.plan as { value: Plan }).value.state;
  return s;
}
