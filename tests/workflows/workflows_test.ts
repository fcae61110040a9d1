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

export function runnerLabels(): Set<string> {
  const text = Deno.readTextFileSync(new URL(".github/runner-labels.txt", ROOT));
  return new Set(
    text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#")),
  );
}

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
        if (!labels.has(label)) problems.push(`job ${id} runs on ${label}, not a current runner`);
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
  const labels = runnerLabels();
  await t.step("every workflow in .github/workflows is clean", () => {
    const dir = new URL(".github/workflows/", ROOT);
    const files = [...Deno.readDirSync(dir)].filter((e) => /\.ya?ml$/.test(e.name));
    assert(files.length >= 2, "ci.yml and release.yml");
    for (const f of files) {
      assertEquals(lintWorkflow(Deno.readTextFileSync(new URL(f.name, dir)), labels), [], f.name);
    }
  });
  await t.step("the runner list has no retired label", () => {
    for (const gone of ["macos-13", "ubuntu-20.04", "windows-2019", "macos-12"]) {
      assert(!labels.has(gone), gone);
    }
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
