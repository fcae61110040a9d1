/**
 * The I/O floor of `roster activity --tool-start ID --pid PID`: the system calls that call makes
 * on Linux (strace of the bundle), one for one, through the same Deno APIs and with as little
 * code as can make them: what the hook would cost if roster's own code cost nothing.
 * Usage: deno run -A <V8_FLAGS> scripts/floor/activity_floor.ts <host-dir> <pid> <tool-id>
 *
 * The host identity is read (machine id, boot id, the pid namespace) but the host directory is
 * given, so the floor holds no copy of how roster names it; the record is changed as roster
 * changes it (the call opened, `working`), which tests/scripts/floor_test.ts checks.
 */
const [dir, pidText, toolId] = Deno.args;
const pid = Number(pidText);
const decoder = new TextDecoder();
const buffer = new Uint8Array(16 * 1024);

/** stat, open, fstat, read to the end, close: how roster reads a small system file. */
function readText(path: string, options: Deno.OpenOptions = { read: true }): string {
  Deno.statSync(path);
  const file = Deno.openSync(path, options);
  file.statSync();
  let length = 0;
  for (let n; (n = file.readSync(buffer.subarray(length))) !== null && n > 0;) length += n;
  file.close();
  return decoder.decode(buffer.subarray(0, length));
}

// The host identity and the check that /proc is this process's own.
Deno.hostname();
readText("/etc/machine-id");
readText("/proc/sys/kernel/random/boot_id");
Deno.readLinkSync("/proc/self/ns/pid");
Deno.readLinkSync("/proc/self");
readText("/proc/self/status");
Deno.pid, Deno.ppid; // the caller's own pids, where no --pid is given
// The owner's identity: its start time, this reader's time namespace, its status.
Deno.readFileSync(`/proc/${pid}/stat`);
readText("/proc/self/timens_offsets", { read: true, write: true });
readText(`/proc/${pid}/status`);
// The home, then the walk from / to the record, each directory looked at without following a
// link (the place directory's parent twice: once walked, once made sure of).
const home = dir.slice(0, dir.lastIndexOf("/", dir.lastIndexOf("/") - 1));
Deno.statSync(home);
let walked = "";
for (const part of dir.split("/").filter((p) => p !== "")) {
  Deno.lstatSync(walked === "" ? "/" : walked);
  walked += `/${part}`;
  if (walked === `${home}/places`) Deno.lstatSync(walked);
}
Deno.lstatSync(walked);
const path = `${dir}/${pid}.json`;
Deno.lstatSync(path);
// The directory's lock, handed over by moving its mtime.
const lockPath = `${dir}/.lock`;
try {
  Deno.lstatSync(lockPath);
} catch { /* the first holder makes it */ }
const lock = Deno.openSync(lockPath, { read: true, write: true, create: true, mode: 0o600 });
lock.statSync();
lock.lockSync(true);
const mtime = lock.statSync().mtime?.getTime() ?? 0;
const at = new Date(Math.max(Date.now(), mtime + 1));
lock.utimeSync(at, at);
// The record read under the lock, its owner judged again, the change written atomically.
Deno.lstatSync(path);
const file = Deno.openSync(path, { read: true, write: true });
file.statSync();
const record = new Uint8Array(64 * 1024 + 1);
const length = file.readSync(record) ?? 0;
file.close();
const value = JSON.parse(decoder.decode(record.subarray(0, length)));
Deno.readFileSync(`/proc/${pid}/stat`);
const now = new Date().toISOString();
const calls: { id: string; name: string | null; started_at: string }[] = value.open_tool_calls ??
  [];
if (!calls.some((c) => c.id === toolId)) calls.push({ id: toolId, name: null, started_at: now });
Object.assign(value, { activity: "working", activity_at: now, open_tool_calls: calls });
const temp = `${path}.${Deno.pid}.floor.tmp`;
const out = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
out.statSync();
const text = new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);
for (let written = 0; written < text.length;) written += out.writeSync(text.subarray(written));
out.close();
Deno.renameSync(temp, path);
lock.close();
Deno.exit(0); // as roster's main ends
