/**
 * `roster metrics`: the registry and the continuation ledger in Prometheus's text format, on
 * stdout or written atomically to a file for node_exporter's textfile collector.
 */
import { UsageError } from "../../errors.ts";
import { writeAtomic } from "../../fs/write.ts";
import { tallyLedger, tallyStore } from "../../metrics/collect.ts";
import { isLabelName, renderText, withLabels } from "../../metrics/exposition.ts";
import { MetricsTally, OWN_LABELS } from "../../metrics/tally.ts";
import { VERSION } from "../../version.ts";
import type { Parsed } from "../args.ts";
import type { Context } from "../context.ts";
import { ledgerDir } from "../ledger_flags.ts";

export async function run(ctx: Context, args: Parsed): Promise<number> {
  const textfile = args.get("textfile");
  if (textfile === "") {
    throw new UsageError("Invalid --textfile: expected a file path, got an empty string");
  }
  const ledger = ledgerDir(ctx, args);
  const labels = parseLabels(args.all("label"));
  const atMs = Date.now();
  const started = performance.now();
  const tally = new MetricsTally({ sessionLabels: args.has("session-labels") });
  tallyStore(ctx.home, await ctx.judge(), tally);
  const summary = tallyLedger(ledger, tally);
  const families = withLabels(
    tally.families(summary, { atMs, durationMs: performance.now() - started, version: VERSION }),
    labels,
  );
  if (textfile !== undefined) {
    if (!textfile.endsWith(".prom")) {
      ctx.err(
        `Note: node_exporter's textfile collector reads only files ending in .prom: ${textfile}`,
      );
    }
    // 0644: node_exporter runs as its own user. The file holds counts, agents and pids; cwd and
    // session ids only with --session-labels.
    writeAtomic(textfile, renderText(families), true, undefined, 0o644);
  }
  if (ctx.json) ctx.printJson(families);
  else if (textfile === undefined) {
    // The exposition as it is, the bytes --textfile writes: the format has no escape for a
    // control character in a label value, so the terminal escaper's `\x1b` made promtool and
    // Prometheus reject the whole text. Only a terminal, which no parser reads, gets it escaped.
    const text = renderText(families);
    if (Deno.stdout.isTerminal()) ctx.out(text);
    else ctx.stdout.write(text);
  }
  return 0;
}

/** `--label NAME=VALUE`, repeatable: labels for every sample, checked before anything is read. */
export function parseLabels(values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf("=");
    const name = at === -1 ? value : value.slice(0, at);
    if (at === -1 || !isLabelName(name)) {
      throw new UsageError(
        `Invalid --label: expected NAME=VALUE, NAME of A-Z a-z 0-9 _ not starting with a digit ` +
          `or __, got ${JSON.stringify(value)}`,
      );
    }
    if (OWN_LABELS.includes(name)) {
      throw new UsageError(`Invalid --label: roster uses the label ${name} itself: ${value}`);
    }
    if (Object.hasOwn(labels, name)) {
      throw new UsageError(`Invalid --label: ${name} is given twice`);
    }
    labels[name] = value.slice(at + 1);
  }
  return labels;
}
