/**
 * A small argument parser over Deno.args, driven by the command table in spec.ts. Chosen
 * over npm parsers by measured start-up cost (docs/decisions.md). Accepts `--flag value`,
 * `--flag=value`, `-x`, and `--` to end flags; global flags may stand before or after the
 * command. Every mistake is a UsageError naming the flag and the nearest valid one.
 */
import { isDigit } from "../chars.ts";
import { notOneOf, UsageError } from "../errors.ts";
import { COMMANDS, type CommandSpec, type FlagSpec, GLOBAL_FLAGS, usageOf } from "./spec.ts";

export class Parsed {
  readonly values = new Map<string, string[]>();
  readonly switches = new Set<string>();
  readonly positionals: string[] = [];
  command: CommandSpec | null = null;

  has(name: string): boolean {
    return this.switches.has(name) || this.values.has(name);
  }
  /** The last value given for a flag (a repeated single-value flag: the last one wins). */
  get(name: string): string | undefined {
    return this.values.get(name)?.at(-1);
  }
  all(name: string): string[] {
    return this.values.get(name) ?? [];
  }
}

export function parseArgs(argv: readonly string[]): Parsed {
  const out = new Parsed();
  let flags: FlagSpec[] = GLOBAL_FLAGS;
  let i = 0;
  let onlyPositionals = false;
  while (i < argv.length) {
    const arg = argv[i++];
    if (!onlyPositionals && arg === "--") {
      onlyPositionals = true;
      continue;
    }
    if (!onlyPositionals && arg.startsWith("-") && arg.length > 1 && !isDigit(arg.charCodeAt(1))) {
      const { spec, inline } = findFlag(arg, flags, out.command);
      if (spec.value === undefined) {
        if (inline !== undefined) {
          throw new UsageError(`Flag --${spec.name} takes no value: got ${JSON.stringify(arg)}`);
        }
        out.switches.add(spec.name);
        continue;
      }
      let value = inline;
      if (value === undefined) {
        const next = argv[i];
        if (next === undefined || (next.startsWith("--") && next.length > 2)) {
          const accepted = spec.choices ? `one of ${spec.choices.join(", ")}` : spec.value;
          throw new UsageError(`Missing value for --${spec.name}: expected ${accepted}`);
        }
        value = next;
        i++;
      }
      // A comma-separated list flag: each value must be one of the choices.
      const choices = spec.choices;
      const bad = choices === undefined
        ? undefined
        : (spec.commas ? value.split(",").map((v) => v.trim()) : [value])
          .find((v) => !choices.includes(v));
      if (choices !== undefined && bad !== undefined) {
        throw notOneOf(`--${spec.name}`, choices, value);
      }
      const list = out.values.get(spec.name);
      if (list && spec.repeatable) list.push(value);
      else out.values.set(spec.name, [value]);
      continue;
    }
    if (out.command === null && !onlyPositionals) {
      const cmd = COMMANDS.find((c) => c.name === arg);
      if (!cmd) {
        const near = nearest(arg, COMMANDS.map((c) => c.name));
        throw new UsageError(
          `Unknown command: ${arg}` + (near ? ` (did you mean ${near}?)` : "") +
            ". Run 'roster --help' for the list",
        );
      }
      out.command = cmd;
      flags = [...GLOBAL_FLAGS, ...cmd.flags];
      continue;
    }
    out.positionals.push(arg);
    // exec: everything after the command's name is the command's own (its flags included).
    if (out.command?.positionals?.rest) onlyPositionals = true;
  }
  if (out.has("help") || out.has("version")) return out;
  const cmd = out.command;
  if (cmd !== null) {
    const pos = cmd.positionals ?? { name: "", min: 0, max: 0 };
    if (out.positionals.length > pos.max) {
      throw new UsageError(
        `Unexpected argument for ${cmd.name}: ${out.positionals[pos.max]}. Usage: ${usageOf(cmd)}`,
      );
    }
    const choices = pos.choices;
    const bad = choices ? out.positionals.find((p) => !choices.includes(p)) : undefined;
    if (choices && bad !== undefined) {
      throw notOneOf(pos.name, choices, bad);
    }
    if (out.positionals.length < pos.min) {
      throw new UsageError(`Missing ${pos.name} for ${cmd.name}. Usage: ${usageOf(cmd)}`);
    }
  } else if (out.positionals.length > 0) {
    throw new UsageError(`Unknown command: ${out.positionals[0]}`);
  }
  return out;
}

function findFlag(
  arg: string,
  flags: FlagSpec[],
  cmd: CommandSpec | null,
): { spec: FlagSpec; inline?: string } {
  let name: string;
  let inline: string | undefined;
  if (arg.startsWith("--")) {
    const eq = arg.indexOf("=");
    name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const spec = flags.find((f) => f.name === name);
    if (spec) return { spec, inline };
  } else {
    name = arg.slice(1);
    const spec = flags.find((f) => f.short === name);
    if (spec) return { spec };
  }
  const where = cmd ? ` for ${cmd.name}` : "";
  const names = flags.map((f) => f.name);
  const near = nearest(name.replace(/^-+/, ""), names);
  throw new UsageError(
    `Unknown flag${where}: ${arg.split("=")[0]}` + (near ? ` (did you mean --${near}?)` : "") +
      `. Run 'roster ${cmd ? cmd.name + " " : ""}--help' for the flags`,
  );
}

/** The candidate closest to `word` by edit distance, if it is close enough to be a typo. */
export function nearest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(word) && word.length >= 2 ? 0.5 : distance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/** Edit distance where swapping two neighbours counts as one edit (`wiat` is one from `wait`). */
function distance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        cur[j] = Math.min(cur[j], before[j - 2] + 1);
      }
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length];
}
