/** Help text, generated from the command table so it can never disagree with the parser. */
import { VERSION } from "../version.ts";
import { EXIT_SUMMARY } from "../exit.ts";
import { COMMANDS, type CommandSpec, type FlagSpec, GLOBAL_FLAGS, usageOf } from "./spec.ts";

function flagLines(flags: FlagSpec[]): string[] {
  const left = flags.map((f) =>
    (f.short ? `-${f.short}, ` : "    ") + `--${f.name}` + (f.value ? ` ${f.value}` : "")
  );
  const width = Math.max(...left.map((l) => l.length)) + 2;
  return flags.flatMap((f, i) => {
    const [first, ...rest] = wrap(f.help, 96 - width);
    return [`  ${left[i].padEnd(width)}${first}`, ...rest.map((l) => " ".repeat(width + 2) + l)];
  });
}

export function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `roster ${VERSION}: a host-local registry of running AI-agent sessions`,
    "",
    "Usage: roster <command> [flags]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "Global flags:",
    ...flagLines(GLOBAL_FLAGS),
    "",
    EXIT_SUMMARY,
    "Run 'roster <command> --help' for a command's flags.",
    "",
  ].join("\n");
}

export function commandHelp(cmd: CommandSpec): string {
  return [
    `roster ${cmd.name}: ${cmd.summary}`,
    "",
    ...usageLines(usageOf(cmd)),
    ...(cmd.details ? ["", ...wrap(cmd.details, 88)] : []),
    "",
    "Flags:",
    ...flagLines(cmd.flags),
    "",
    "Global flags:",
    ...flagLines(GLOBAL_FLAGS),
    "",
  ].join("\n");
}

/** Wraps a usage line between bracketed groups, never inside one. */
function usageLines(usage: string): string[] {
  const words = usage.match(/\[[^\]]*\]\S*|\S+/g) ?? [];
  const lines: string[] = [];
  let line = "Usage:";
  for (const w of words) {
    if (line.length + 1 + w.length > 96) {
      lines.push(line);
      line = " ".repeat(6);
    }
    line += ` ${w}`;
  }
  return [...lines, line];
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split("\n")) {
    let line = "";
    for (const word of para.split(" ")) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return lines;
}
