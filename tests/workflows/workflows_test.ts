/**
 * Lints .github/workflows: each file parses (tests/workflows/yaml.ts, strict), jobs are well
 * formed, `needs` names jobs that exist, and every runs-on label (matrix values included) is
 * one GitHub offers, from .github/runner-labels.txt. A retired runner label (macos-13 was one)
 * would leave a job queued forever and a release unpublished.
 */
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { parseYaml, type Yaml, YamlError } from "./yaml.ts";

type Map = { [key: string]: Yaml };
const isMap = (v: Yaml): v is Map => v !== null && typeof v === "object" && !Array.isArray(v);

const ROOT = new URL("../../", import.meta.url);

/** A runner label as .github/runner-labels.txt lists it, with its end once GitHub announced it. */
export interface RunnerLabel {
  label: string;
  /** From this day (YYYY-MM-DD, UTC) on, a workflow must not use it. */
  deprecated?: string;
  retired?: string;
  source?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The list's labels and the day it was last checked; throws on a line it cannot read. */
export function parseRunnerLabels(text: string): { checked: string; labels: RunnerLabel[] } {
  const checked = /^# checked: (\S+)$/m.exec(text)?.[1] ?? "";
  if (!DAY.test(checked)) throw new Error("runner-labels.txt has no `# checked: YYYY-MM-DD` line");
  const labels: RunnerLabel[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const f = line.split(/\s+/);
    if (f.length === 1) {
      labels.push({ label: f[0] });
      continue;
    }
    const [label, d, deprecated, r, retired, source, ...rest] = f;
    if (
      d !== "deprecated" || r !== "retired" || !DAY.test(deprecated) || !DAY.test(retired) ||
      !/^https:\/\/\S+$/.test(source ?? "") || rest.length > 0 || deprecated > retired
    ) {
      throw new Error(
        `runner-labels.txt line ${i + 1}: expected LABEL or LABEL deprecated DAY retired DAY URL`,
      );
    }
    labels.push({ label, deprecated, retired, source });
  }
  return { checked, labels };
}

/** The labels a workflow may use on `today` (YYYY-MM-DD): listed, and not deprecated yet. */
export function usableLabels(labels: readonly RunnerLabel[], today: string): Set<string> {
  return new Set(
    labels.filter((l) => l.deprecated === undefined || today < l.deprecated).map((l) => l.label),
  );
}

export function runnerLabelsText(): string {
  return Deno.readTextFileSync(new URL(".github/runner-labels.txt", ROOT));
}

const today = () => new Date().toISOString().slice(0, 10);

/** The labels a job's runs-on can take: literals, or `${{ matrix.KEY }}` over the matrix. */
export function runsOnLabels(job: Map): string[] {
  const runsOn = job["runs-on"];
  const values = Array.isArray(runsOn) ? runsOn : [runsOn];
  const out: string[] = [];
  for (const v of values) {
    if (typeof v !== "string") throw new Error(`runs-on is not a label: ${JSON.stringify(v)}`);
    const expr = /^\$\{\{\s*matrix\.([\w-]+)\s*\}\}$/.exec(v);
    if (expr === null) {
      if (v.includes("${{")) throw new Error(`runs-on expression not understood: ${v}`);
      out.push(v);
      continue;
    }
    const strategy = job.strategy;
    const matrix = isMap(strategy) && isMap(strategy.matrix) ? strategy.matrix : null;
    if (matrix === null) throw new Error(`runs-on uses matrix.${expr[1]} without a matrix`);
    const found: string[] = [];
    const listed = matrix[expr[1]];
    if (Array.isArray(listed)) found.push(...listed.map(String));
    const include = matrix.include;
    if (Array.isArray(include)) {
      for (const row of include) {
        if (isMap(row) && row[expr[1]] != null) found.push(String(row[expr[1]]));
      }
    }
    if (found.length === 0) throw new Error(`matrix.${expr[1]} has no values`);
    out.push(...found);
  }
  return out;
}

/** Every problem in one workflow file, as sentences; empty when it is fine. */
export function lintWorkflow(text: string, labels: Set<string>): string[] {
  const problems: string[] = [];
  let doc: Yaml;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return [`does not parse: ${(err as Error).message}`];
  }
  if (!isMap(doc)) return ["is not a mapping"];
  for (const key of ["name", "on", "jobs"]) if (!(key in doc)) problems.push(`has no ${key}`);
  const jobs = isMap(doc.jobs) ? doc.jobs : {};
  for (const [id, job] of Object.entries(jobs)) {
    if (!isMap(job)) {
      problems.push(`job ${id} is not a mapping`);
      continue;
    }
    try {
      for (const label of runsOnLabels(job)) {
        if (!labels.has(label)) {
          problems.push(`job ${id} runs on ${label}, not a current runner`);
        }
      }
    } catch (err) {
      problems.push(`job ${id}: ${(err as Error).message}`);
    }
    const needs = job.needs == null ? [] : Array.isArray(job.needs) ? job.needs : [job.needs];
    for (const n of needs) {
      if (typeof n !== "string" || !(n in jobs)) problems.push(`job ${id} needs unknown ${n}`);
    }
    if (!Array.isArray(job.steps) || job.steps.length === 0) {
      problems.push(`job ${id} has no steps`);
      continue;
    }
    job.steps.forEach((step, i) => {
      if (!isMap(step)) return problems.push(`job ${id} step ${i + 1} is not a mapping`);
      if (("uses" in step) === ("run" in step)) {
        problems.push(`job ${id} step ${i + 1} needs exactly one of uses and run`);
      }
      if (typeof step.uses === "string" && !/^[\w.-]+\/[\w./-]+@[\w.-]+$/.test(step.uses)) {
        problems.push(`job ${id} step ${i + 1} uses an unpinned action: ${step.uses}`);
      }
    });
  }
  return problems;
}

Deno.test("the workflow lint", async (t) => {
  const list = parseRunnerLabels(runnerLabelsText());
  const labels = usableLabels(list.labels, today());
  await t.step("every workflow in .github/workflows is clean", () => {
    const dir = new URL(".github/workflows/", ROOT);
    const files = [...Deno.readDirSync(dir)].filter((e) => /\.ya?ml$/.test(e.name));
    assert(files.length >= 2, "ci.yml and release.yml");
    for (const f of files) {
      assertEquals(lintWorkflow(Deno.readTextFileSync(new URL(f.name, dir)), labels), [], f.name);
    }
  });
  await t.step("the linux job runs .ci/run, so it installs what .ci/setup.d installs", () => {
    const ci = parseYaml(Deno.readTextFileSync(new URL(".github/workflows/ci.yml", ROOT)));
    const linux = isMap(ci) && isMap(ci.jobs) ? ci.jobs.linux : null;
    assert(isMap(linux) && Array.isArray(linux.steps), "ci.yml has a linux job");
    const runs = linux.steps.map((s) => isMap(s) && typeof s.run === "string" ? s.run : "");
    assert(runs.some((r) => /^CI=true bash \.ci\/run$/m.test(r)), runs.join("\n"));
    // Bounded: a hang ends the job well before GitHub's six hours.
    assert(Number(linux["timeout-minutes"]) > 0 && Number(linux["timeout-minutes"]) <= 120);
  });
  await t.step("the runner list is dated, each label once, each end with its source", () => {
    assert(list.checked <= today(), `checked ${list.checked} is in the future`);
    const names = list.labels.map((l) => l.label);
    assertEquals(names.length, new Set(names).size, "a label is listed twice");
    // Labels GitHub has retired (announcements in actions/runner-images): rejected however
    // the list is edited, since a retired label leaves a job queued and a release unpublished.
    for (const gone of ["macos-14", "macos-13", "macos-12", "ubuntu-20.04", "windows-2019"]) {
      assert(!labels.has(gone), gone);
      assert(list.labels.some((l) => l.label === gone && l.source !== undefined), gone);
    }
    // Deprecated since 2026-09-17 (retired 2027-04-17): no workflow moves onto it.
    assert(!labels.has("ubuntu-22.04"));
  });
  await t.step("a label is refused from its deprecation day on", () => {
    const dated = parseRunnerLabels([
      "# checked: 2026-06-01",
      "macos-14 deprecated 2026-07-06 retired 2026-11-02 https://example.invalid/13518",
      "macos-26",
    ].join("\n")).labels;
    const wf =
      "name: x\non: push\njobs:\n  a:\n    runs-on: macos-14\n    steps:\n      - run: true";
    assertEquals(lintWorkflow(wf, usableLabels(dated, "2026-07-05")), []);
    for (const day of ["2026-07-06", "2026-11-02", "2027-01-01"]) {
      assertEquals(lintWorkflow(wf, usableLabels(dated, day)), [
        "job a runs on macos-14, not a current runner",
      ]);
    }
    for (
      const bad of [
        "macos-14 retired 2026-11-02",
        "macos-14 deprecated 2026-11-03 retired 2026-11-02 https://x",
      ]
    ) {
      assertThrows(() => parseRunnerLabels(`# checked: 2026-06-01\n${bad}`));
    }
    assertThrows(() => parseRunnerLabels("macos-26"));
  });
  await t.step("a retired runner, a matrix value, a bad need and a bare step are caught", () => {
    const wf = [
      "name: x",
      "on: push",
      "jobs:",
      "  a:",
      "    runs-on: macos-13",
      "    steps:",
      "      - run: true",
      "  b:",
      "    needs: [a, c]",
      "    strategy:",
      "      matrix:",
      "        include:",
      "          - { os: ubuntu-latest }",
      "          - { os: windows-2019 }",
      "    runs-on: ${{ matrix.os }}",
      "    steps:",
      "      - name: nothing",
      "      - uses: actions/checkout",
    ].join("\n");
    assertEquals(lintWorkflow(wf, labels), [
      "job a runs on macos-13, not a current runner",
      "job b runs on windows-2019, not a current runner",
      "job b needs unknown c",
      "job b step 1 needs exactly one of uses and run",
      "job b step 2 uses an unpinned action: actions/checkout",
    ]);
  });
});

Deno.test("the YAML subset parser", async (t) => {
  await t.step("mappings, sequences, flow, quotes, comments and block scalars", () => {
    const doc = parseYaml([
      "# a comment",
      "a: 1 # trailing",
      'b: "x: #y"',
      "c: 'it''s'",
      "d: [one, 'two, three', { k: v }]",
      "e:",
      "  - f: 1",
      "    g: [ ]",
      "  - plain ${{ matrix.os }}",
      "h: |",
      "  line 1",
      "    indented",
      "",
      "  line 3",
      "i: >-",
      "  folded",
      "  text",
      "j:",
      "k:",
      "- at the key's indent",
    ].join("\n"));
    assertEquals(doc, {
      a: "1",
      b: "x: #y",
      c: "it's",
      d: ["one", "two, three", { k: "v" }],
      e: [{ f: "1", g: [] }, "plain ${{ matrix.os }}"],
      h: "line 1\n  indented\n\nline 3\n",
      i: "folded text",
      j: null,
      k: ["at the key's indent"],
    });
  });
  await t.step("what it does not support fails with a line number", () => {
    for (
      const [text, why] of [
        ["a: 1\na: 2", "line 2: duplicate key a"],
        ["a: &x 1", "unsupported"],
        ["a:\n\t- b", "tab"],
        ["a: [1, 2", "expected , or ]"],
        ["a:\n  b: 1\n c: 2", "line 3"],
        ['a: "open', "unterminated"],
      ]
    ) {
      const err = assertThrows(() => parseYaml(text), YamlError);
      assert(err.message.includes(why), `${JSON.stringify(text)}: ${err.message}`);
    }
  });
});
