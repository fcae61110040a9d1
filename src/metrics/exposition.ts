/**
 * The Prometheus text exposition format (version 0.0.4), pure: metric families in, text out.
 * Names are checked, HELP text and label values escaped, so no value from a record (an agent
 * name, a cwd) can break a line or forge a sample.
 */

export type MetricType = "gauge" | "counter";

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value inside double quotes: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);
}

/** HELP text: backslash and line feed escaped (a double quote is literal there). */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => c === "\n" ? "\\n" : "\\\\");
}

/** A sample value as Prometheus's parser reads it (Go's ParseFloat, plus its spellings of ±Inf). */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/**
 * Checks a family against the naming rules this exporter keeps (a `roster_` prefix, counters
 * ending in `_total`, valid and unreserved label names). A mistake here is roster's own bug,
 * so it throws rather than writing a file Prometheus would reject.
 */
export function checkFamily(f: Family) {
  if (!METRIC_NAME.test(f.name) || !f.name.startsWith("roster_")) {
    throw new Error(`Invalid metric name: ${f.name}`);
  }
  if (f.type === "counter" && !f.name.endsWith("_total")) {
    throw new Error(`A counter's name must end in _total: ${f.name}`);
  }
  for (const s of f.samples) {
    for (const name of Object.keys(s.labels)) {
      if (!isLabelName(name)) {
        throw new Error(`Invalid label name on ${f.name}: ${name}`);
      }
    }
  }
}

function sampleLine(name: string, s: Sample): string {
  const labels = Object.entries(s.labels);
  const body = labels.length === 0
    ? ""
    : `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`;
  return `${name}${body} ${formatValue(s.value)}\n`;
}

/** One family as text: its HELP and TYPE lines, then one line per sample. */
export function renderFamily(f: Family): string {
  checkFamily(f);
  let text = `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
  for (const s of f.samples) text += sampleLine(f.name, s);
  return text;
}

/** Every family, in the order given (each name once: the format forbids a family split in two). */
export function renderText(families: Iterable<Family>): string {
  const seen = new Set<string>();
  let text = "";
  for (const f of families) {
    if (seen.has(f.name)) throw new Error(`Metric family written twice: ${f.name}`);
    seen.add(f.name);
    text += renderFamily(f);
  }
  return text;
}

/** Whether `name` may name a label (and is not one of the names Prometheus reserves). */
export function isLabelName(name: string): boolean {
  return LABEL_NAME.test(name) && !name.startsWith("__");
}

/**
 * Every family with `extra` labels added to each of its samples (such as `user`, to tell two
 * users' files on one host apart). Throws when a sample already has one of those names.
 */
export function withLabels(families: Family[], extra: Labels): Family[] {
  if (Object.keys(extra).length === 0) return families;
  return families.map((f) => ({
    ...f,
    samples: f.samples.map((s) => {
      for (const name of Object.keys(extra)) {
        if (Object.hasOwn(s.labels, name)) {
          throw new Error(`${f.name} has its own label ${name}`);
        }
      }
      return { ...s, labels: { ...s.labels, ...extra } };
    }),
  }));
}
