/**
 * Writing a file never clears the process's umask where the umask does not narrow the file's
 * mode: the umask is the process's, and a test runner runs other tests on other threads while
 * one writes. Cleared around every temp file's open, it made a shell spawned meanwhile create
 * every file writable by others, and a unit file written meanwhile 0666 (two CI failures).
 */
import { assert, assertEquals } from "../assert.ts";
import { tempDir } from "../helpers.ts";
import { writeAtomic } from "../../src/fs/write.ts";

/** The process's umask in /proc/self/status (the kernel's, read without changing it). */
const UMASK_LINE = /^Umask:\s*([0-7]+)$/m;

/** What a thread of this process reads as the process's umask until `stop` holds 1. */
const SAMPLER = `
self.onmessage = (e) => {
  const stop = new Int32Array(e.data);
  const seen = {};
  let samples = 0;
  while (Atomics.load(stop, 0) === 0) {
    const m = ${UMASK_LINE}.exec(Deno.readTextFileSync("/proc/self/status"));
    const umask = m === null ? "none" : m[1];
    seen[umask] = (seen[umask] ?? 0) + 1;
    samples++;
    if (samples === 1) self.postMessage("started");
  }
  self.postMessage({ seen, samples });
};
`;

Deno.test({
  name: "writeAtomic leaves the process's umask as it is where it does not narrow the mode",
  ignore: Deno.build.os !== "linux",
}, async () => {
  await using dir = await tempDir();
  // Read as the sampler reads it: Deno.umask() clears it for a moment to learn it.
  const own = UMASK_LINE.exec(Deno.readTextFileSync("/proc/self/status"))![1];
  // The default 0600 is narrowed only by a umask that takes the owner's bits: none here.
  assertEquals(parseInt(own, 8) & 0o600, 0, `this run's umask ${own}`);
  const url = URL.createObjectURL(new Blob([SAMPLER], { type: "application/javascript" }));
  const worker = new Worker(url, { type: "module" });
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const messages: unknown[] = [];
  let heard: () => void = () => {};
  worker.onmessage = (e) => {
    messages.push(e.data);
    heard();
  };
  const next = () => new Promise<void>((ok) => heard = ok);
  try {
    const started = next();
    worker.postMessage(stop.buffer);
    await started;
    // Each write held the umask cleared for its open: a sampler on the other core caught that
    // within a few dozen writes.
    for (let n = 0; n < 2000; n++) writeAtomic(`${dir.path}/record.json`, `{"n":${n}}\n`, false);
    const done = next();
    Atomics.store(stop, 0, 1);
    await done;
    const { seen, samples } = messages.at(-1) as { seen: Record<string, number>; samples: number };
    assert(samples > 100, `the sampler looked ${samples} times: too few to tell`);
    assertEquals(Object.keys(seen), [own]);
    assertEquals(Deno.statSync(`${dir.path}/record.json`).mode! & 0o777, 0o600);
  } finally {
    Atomics.store(stop, 0, 1);
    worker.terminate();
    URL.revokeObjectURL(url);
  }
});
