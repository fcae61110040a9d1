import { assertEquals } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import {
  enqueue,
  rewriteSweep,
  sweep,
  SWEEP_NAME,
  SWEEP_NEXT_NAME,
} from "../../src/registry/sweep.ts";

const read = (path: string) => {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
};

Deno.test("sweep: a queue of two stacks reaches every queued pid once a round", async (t) => {
  await using dir = await tempDir();
  const next = `${dir.path}/${SWEEP_NEXT_NAME}`;
  const current = `${dir.path}/${SWEEP_NAME}`;

  await t.step("a new pid is pushed; a dry queue takes over the pushed stack", () => {
    enqueue(dir.path, ["11"]);
    assertEquals(read(next), "11\n");
    assertEquals(sweep(dir.path, 2, () => "kept"), ["11"]);
    enqueue(dir.path, ["12"]);
    assertEquals([read(current), read(next)], ["", "11\n12\n"]);
  });

  await t.step("pops come off the end; kept ones are pushed again, removed ones are not", () => {
    Deno.writeTextFileSync(current, "1\n2\n3\n", { mode: 0o600 });
    Deno.writeTextFileSync(next, "", { mode: 0o600 });
    const examined: string[] = [];
    const popped = sweep(dir.path, 2, (name) => {
      examined.push(name);
      return name === "3" ? "removed" : "kept";
    });
    assertEquals(popped, ["3", "2"]);
    assertEquals(examined, ["3", "2"]);
    assertEquals([read(current), read(next)], ["1\n", "2\n"]);
  });

  await t.step("an empty enqueue writes nothing", () => {
    enqueue(dir.path, []);
    assertEquals(read(next), "2\n");
  });

  await t.step("lines that are not pids are dropped; a missing record leaves the queue", () => {
    Deno.writeTextFileSync(current, "junk\n0\n99999999999\n7\n\n8", { mode: 0o600 });
    Deno.removeSync(next);
    const popped = sweep(dir.path, 8, (name) => name === "7" ? "missing" : "kept");
    assertEquals(popped, ["8", "7"]);
    assertEquals(read(current), "");
    assertEquals(read(next), "8\n");
  });

  await t.step("an ended record moved aside is queued by its name, suffix and all", () => {
    Deno.writeTextFileSync(current, "", { mode: 0o600 });
    Deno.writeTextFileSync(next, "", { mode: 0o600 });
    enqueue(dir.path, ["21", "21.lq3zk0a1b2"]);
    assertEquals(read(next), "21\n21.lq3zk0a1b2\n");
    Deno.renameSync(next, current);
    const examined: string[] = [];
    sweep(dir.path, 2, (name) => {
      examined.push(name);
      return "removed";
    });
    assertEquals(examined, ["21.lq3zk0a1b2", "21"]);
    Deno.writeTextFileSync(current, "8\n", { mode: 0o600 });
    Deno.writeTextFileSync(next, "", { mode: 0o600 });
    assertEquals(sweep(dir.path, 1, () => "kept"), ["8"]);
  });

  await t.step("a line longer than any pid is cut away, not read whole", () => {
    Deno.writeTextFileSync(current, "5\n" + "9".repeat(10_000) + "\n", { mode: 0o600 });
    assertEquals(sweep(dir.path, 1, () => "kept"), []);
    assertEquals(sweep(dir.path, 1, () => "kept"), []);
    const left = read(current)!;
    assertEquals(left.startsWith("5\n"), true);
  });

  await t.step("prune's rewrite replaces the queue and keeps what registers pushed", () => {
    rewriteSweep(dir.path, ["1", "2", "3"]);
    assertEquals(read(current), "1\n2\n3\n");
    assertEquals(read(next), "8\n");
  });

  await t.step("a queue that is a link is left alone (the cleanup is skipped)", () => {
    Deno.removeSync(current);
    Deno.writeTextFileSync(`${dir.path}/target`, "42\n");
    Deno.symlinkSync(`${dir.path}/target`, current);
    Deno.removeSync(next);
    assertEquals(sweep(dir.path, 8, () => "kept"), []);
    assertEquals(read(`${dir.path}/target`), "42\n");
  });
});
