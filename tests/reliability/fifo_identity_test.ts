/**
 * A FIFO where roster reads who it is (retest of issue 24): bound over /etc/machine-id or
 * /proc/sys/kernel/random/boot_id (bwrap), it hung every command for ever, since a plain open
 * waits for a writer that never comes. Each read of /proc and the machine id now refuses a file
 * that is not regular without opening it for reading: the command finishes, the identity unknown.
 */
import { assert, assertEquals } from "../assert.ts";
import { cleanEnv, cliArgs, DEFAULT_TIMEOUT_MS, run, spawnSleeper, tempDir } from "../helpers.ts";

const ENV = { ...cleanEnv(), NO_COLOR: "1" };

function bwrapUsable(): boolean {
  try {
    return new Deno.Command("bwrap", {
      args: ["--dev-bind", "/", "/", "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
}

/** `roster args` under bwrap with `fifo` bound over each of `over`; a hang fails at the bound. */
function withFifoOver(fifo: string, over: string[], args: string[]) {
  const binds = over.flatMap((p) => ["--bind", fifo, p]);
  // --die-with-parent: killing bwrap at the bound kills the roster stuck inside, which holds
  // the pipes this test reads.
  return run(
    "bwrap",
    ["--die-with-parent", "--dev-bind", "/", "/", ...binds, Deno.execPath(), ...cliArgs(args)],
    ENV,
    undefined,
    DEFAULT_TIMEOUT_MS,
  );
}

const existing = (paths: string[]) =>
  paths.filter((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });

Deno.test({
  name: "a FIFO over the machine id or the boot id never hangs a command",
  ignore: Deno.build.os !== "linux",
}, async (t) => {
  if (!bwrapUsable()) {
    console.log("skipped: bwrap cannot run here");
    return;
  }
  await using dir = await tempDir();
  const fifo = `${dir.path}/fifo`;
  new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
  await using sleeper = spawnSleeper();

  const cases: [string, string[], "machine_id" | "boot_id"][] = [
    ["machine id", existing(["/etc/machine-id", "/var/lib/dbus/machine-id"]), "machine_id"],
    ["boot id", existing(["/proc/sys/kernel/random/boot_id"]), "boot_id"],
  ];
  for (const [what, over, field] of cases) {
    await t.step(
      `a FIFO over the ${what}: register and list finish, it reads unknown`,
      async () => {
        if (over.length === 0) return; // nothing to bind over on this machine
        await using home = await tempDir();
        const h = ["--home", home.path];
        const reg = await withFifoOver(fifo, over, [
          "register",
          "--pid",
          String(sleeper.pid),
          "--agent",
          "claude",
          "--json",
          ...h,
        ]);
        assertEquals(reg.code, 0, reg.stderr);
        const path = JSON.parse(reg.stdout).path as string;
        const record = JSON.parse(Deno.readTextFileSync(path));
        assertEquals(record[field], null, `${field} read through a FIFO`);
        assert(record.start_token !== null, "the process is still known");
        const list = await withFifoOver(fifo, over, ["list", "--all", "--json", ...h]);
        assertEquals(list.code, 0, list.stderr);
        const rows = JSON.parse(list.stdout) as { session_pid: number; liveness: string }[];
        assertEquals(rows.map((r) => [r.session_pid, r.liveness]), [[sleeper.pid, "alive"]]);
        const doctor = await withFifoOver(fifo, over, ["doctor", ...h]);
        assert(doctor.code === 0 || doctor.code === 1, doctor.stderr);
      },
    );
  }
});
