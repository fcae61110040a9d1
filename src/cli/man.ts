/**
 * The manual page roster(1), generated from the command table like the help, so it can never
 * disagree with the parser: `roster man` prints it, the build writes it to dist/roster.1.
 */
import { EXIT_SUMMARY } from "../exit.ts";
import { VERSION } from "../version.ts";
import { COMMANDS, type FlagSpec, GLOBAL_FLAGS, usageOf } from "./spec.ts";

/** One word or line as roff reads it: backslashes escaped, hyphens as minus signs. */
function esc(text: string): string {
  return text.replaceAll("\\", "\\e").replaceAll("-", "\\-");
}

/** A line that roff could take for a request (a leading dot or quote) made text. */
const safe = (line: string) => /^[.']/.test(line) ? `\\&${line}` : line;

/** Text as lines of at most 78 bytes of roff source, broken between words. */
function roff(text: string, width = 78): string {
  const lines: string[] = [];
  let line = "";
  for (const w of text.split(/\s+/).filter((x) => x !== "").map(esc)) {
    if (line !== "" && line.length + 1 + w.length > width) {
      lines.push(safe(line));
      line = w;
    } else line = line === "" ? w : `${line} ${w}`;
  }
  if (line !== "") lines.push(safe(line));
  return lines.join("\n");
}

function flags(list: FlagSpec[]): string[] {
  return list.flatMap((f) => [
    ".TP",
    `.B "${f.short ? `\\-${f.short}, ` : ""}\\-\\-${esc(f.name)}${
      f.value ? ` ${esc(f.value)}` : ""
    }"`,
    roff(f.help),
  ]);
}

/** The page, in man(7) macros. `date` is the page's date (YYYY-MM-DD): today (UTC) unless given. */
export function manPage(date = new Date().toISOString().slice(0, 10)): string {
  return [
    `.TH ROSTER 1 ${date} "roster ${VERSION}" "User Commands"`,
    ".SH NAME",
    "roster \\- a host\\-local registry of running AI\\-agent sessions",
    ".SH SYNOPSIS",
    ".B roster",
    ".I command",
    "[flags]",
    ".SH DESCRIPTION",
    roff(
      "roster keeps a registry of the AI-agent sessions running on this host (Claude Code, " +
        "Codex, pi, Gemini CLI), written by their hooks, with no daemon; it brings every " +
        "session a crash interrupted back, and sends it one automatic continue at most once.",
    ),
    ".SH COMMANDS",
    ...COMMANDS.flatMap((c) => [
      ".SS " + roff(c.name),
      roff(c.summary) + ".",
      ".PP",
      ".nf",
      // Continuation lines of a long usage, indented, as the help shows them.
      roff(usageOf(c), 70).split("\n").map((l, i) => i === 0 ? l : `    ${l}`).join("\n"),
      ".fi",
      ...(c.details ? [".PP", roff(c.details)] : []),
      ...(c.flags.length > 0 ? [".RS", ...flags(c.flags), ".RE"] : []),
    ]),
    ".SH OPTIONS",
    "These global flags apply to every command.",
    ...flags(GLOBAL_FLAGS),
    ".SH EXIT STATUS",
    roff(EXIT_SUMMARY),
    ".SH SEE ALSO",
    roff("roster help COMMAND, roster COMMAND --help; docs/ in the source repository."),
    "",
  ].join("\n");
}
