/**
 * The one message a claimed dispatch hands to the resumed agent: when and how it was
 * interrupted, which tool calls were left open, that it must check the real state before
 * repeating anything that may have run, then carry on, and the continuation id. Pure, one
 * paragraph, with every value from the plan made printable.
 */
import { cutText } from "../chars.ts";
import { UNSAFE } from "../unsafe_text.ts";
import type { Plan } from "./schema.ts";

const MAX_LISTED = 20;

/**
 * What a terminal may act on (../unsafe_text.ts) becomes a space and long values are cut, so a
 * plan cannot forge lines or reorder what is shown.
 */
function spaced(value: string, max = 120): string {
  const clean = value.replace(UNSAFE, " ").trim();
  return clean.length > max ? cutText(clean, max - 1) + "…" : cutText(clean, max);
}

export function dispatchMessage(plan: Plan, continuationId: string): string {
  const when = plan.interrupted_at === null
    ? "at an unknown time"
    : `at or before ${plan.interrupted_at}`;
  const how = plan.cause === "signal"
    ? "by a signal (its process was told to stop)"
    : plan.cause === "hard"
    ? "hard (the machine, terminal or tmux went away without warning)"
    : "for an unknown reason";
  const calls = plan.tool_calls.slice(0, MAX_LISTED).map((c) =>
    `${spaced(c.name, 60)} (${spaced(c.id, 80)})`
  );
  const more = plan.tool_calls.length - calls.length;
  const open = calls.length === 0
    ? "No tool calls were recorded as open at that moment."
    : `These tool calls were left open and may or may not have taken effect: ${calls.join(", ")}${
      more > 0 ? ` and ${more} more` : ""
    }.`;
  return [
    `Roster continuation ${continuationId}: this session was interrupted ${when}, ${how},`,
    "and has been resumed.",
    open,
    "Before repeating anything that may already have run, check the real state: files,",
    "git status and history, running processes, and remote effects such as pushes,",
    "deployments or messages sent.",
    "Then carry on with the original task from where it stopped.",
    `Continuation id: ${continuationId}.`,
  ].join(" ");
}
