/**
 * Named pause points for crash drills, tests only. With ROSTER_TEST_PAUSE_AT=<point>, the
 * process writes `<dir>/.pause-<point>-<pid>` when it arrives there, then blocks (the
 * thread sleeps; nothing runs) until that file is removed, the process is killed, or a minute
 * has passed. Tests
 * SIGKILL it there to prove that no crash at that moment loses or tears anything.
 */
import { envVar } from "./env.ts";
import { notOneOf } from "./errors.ts";

const PAUSE_POINTS = [
  "register:after-lock",
  "register:before-rename",
  "register:before-cleanup",
  "prune:after-lock",
  "prune:before-remove",
  "sweep:before-open",
  "read:before-open",
  "hooks:before-rename",
  "after-lock",
  "after-claim",
  "before-outcome",
] as const;
type PausePoint = typeof PAUSE_POINTS[number];

let setting: PausePoint | null | undefined;

/** ROSTER_TEST_PAUSE_AT, read once; an unknown value is a usage error, never ignored. */
export function pauseSetting(): PausePoint | null {
  if (setting !== undefined) return setting;
  const v = envVar("ROSTER_TEST_PAUSE_AT");
  if (v === undefined || v === "") return setting = null;
  if (!(PAUSE_POINTS as readonly string[]).includes(v)) {
    throw notOneOf("ROSTER_TEST_PAUSE_AT", PAUSE_POINTS, v);
  }
  return setting = v as PausePoint;
}

/** A drill that forgot its process must not hold a lock forever: give up after this. */
const MAX_PAUSE_MS = 60_000;

/** Blocks at `point` when the drill asks for it; a no-op otherwise. */
export function pause(point: PausePoint, dir: string) {
  if (pauseSetting() !== point) return;
  const marker = `${dir}/.pause-${point}-${Deno.pid}`;
  Deno.writeTextFileSync(marker, `${Deno.pid}\n`, { mode: 0o600 });
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (const until = Date.now() + MAX_PAUSE_MS; Date.now() < until;) {
    try {
      Deno.lstatSync(marker);
    } catch {
      return;
    }
    Atomics.wait(cell, 0, 0, 20);
  }
  Deno.removeSync(marker);
}
