/**
 * A directory's advisory lock (flock on `<dir>/.lock`), waited for while it keeps changing
 * hands. flock locks die with their process, so a crashed holder never blocks anyone.
 */
import { ioError, RosterError } from "../errors.ts";
import { join } from "./path.ts";

/** The lock file's name in the directory it locks. */
const LOCK_NAME = ".lock";
/**
 * The gate in front of it: a holder-alone that has to wait closes it (flock exclusive) until it
 * has the lock, and a shared holder that has to wait passes through it first. So a burst of
 * registers holding the lock together cannot keep prune or unregister out (writer preference).
 */
const GATE_NAME = ".lock.gate";

/**
 * How long a waiter lets one holder keep the lock, and how long it waits in all. Under a burst
 * of sessions starting at once (200 on 2 cores) the queue is long but moves: a waiter keeps
 * waiting while holders come and go, and gives up only on a holder that hangs (no hand-over
 * for 10 s), or after 30 s in all (a person or a script waits; a harness that gives its hook
 * less, as the recipes' 10 s do, ends the register first, before it has written anything).
 */
export interface LockPatience {
  stallMs: number;
  totalMs: number;
}
export const STORE_PATIENCE: LockPatience = { stallMs: 10_000, totalMs: 30_000 };

const seconds = (ms: number) => ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;

/** The advisory lock stayed held by another process for longer than the caller would wait. */
export class LockTimeoutError extends RosterError {
  override name = "LockTimeoutError";
  constructor(path: string, ms: number, stalled: boolean) {
    super(
      stalled
        ? `Could not take the store lock: one holder kept it for ${seconds(ms)}: ${path}`
        : `Could not take the store lock in ${seconds(ms)}: ${path}`,
    );
  }
}

/**
 * Opens `<dir>/.lock`, never through a link: opening `.lock -> /etc/passwd` with create would
 * lock (or, dangling, create) another file. What was checked must be what was opened.
 */
function openLock(path: string): Deno.FsFile {
  let before: Deno.FileInfo | null = null;
  try {
    before = Deno.lstatSync(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw ioError("Could not open the lock", path, err);
  }
  if (before !== null && !before.isFile) {
    throw new RosterError(`The lock is not a regular file: ${path}`);
  }
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
  } catch (err) {
    throw ioError("Could not open the lock", path, err);
  }
  if (before !== null && file.statSync().ino !== before.ino) {
    file.close();
    throw new RosterError(`The lock changed while being opened: ${path}`);
  }
  return file;
}

/** The lock file's hand-over mark: its mtime, which every new holder moves (`handedOver`). */
function mark(file: Deno.FsFile): number {
  try {
    return file.statSync().mtime?.getTime() ?? 0;
  } catch {
    return 0;
  }
}

/**
 * A new holder moves the lock file's mtime forward by at least a millisecond (whatever the
 * clock says), so waiters can tell a queue that moves from a holder that hangs. Best effort.
 */
function handedOver(file: Deno.FsFile) {
  try {
    const at = new Date(Math.max(Date.now(), mark(file) + 1));
    file.utimeSync(at, at);
  } catch { /* waiters then see no progress, and give up as before */ }
}

/** How a caller holds the lock: how long it waits, and whether others may hold it too. */
export interface LockOptions {
  patience?: LockPatience;
  /**
   * A shared hold (flock LOCK_SH) for work that never conflicts with another shared holder's:
   * `register` writing its own record and queueing its name. Everything that judges a record
   * and then removes or rewrites it holds the lock alone, so no record is removed across a
   * register's write.
   */
  shared?: boolean;
}

/**
 * Holds the advisory lock of one directory while `fn` runs. Waits while the lock changes hands,
 * and throws LockTimeoutError once one holder kept it for `patience.stallMs` or the wait has
 * lasted `patience.totalMs`: a holder that hangs must not hang every hook behind it.
 */
export async function withLock<T>(
  dir: string,
  fn: () => T | Promise<T>,
  { patience = STORE_PATIENCE, shared = false }: LockOptions = {},
): Promise<T> {
  const path = join(dir, LOCK_NAME);
  const file = openLock(path);
  try {
    const wait = { mark: file, path, patience, started: Date.now() };
    if (shared) {
      // Through the gate first, always: a holder-alone that waits keeps it closed, and flock
      // would otherwise admit each new shared holder ahead of it, so registers that keep
      // overlapping could keep prune or unregister out for good.
      const gate = openLock(join(dir, GATE_NAME));
      try {
        await waitFor(gate, false, wait);
      } finally {
        gate.close();
      }
      await waitFor(file, false, wait);
    } else if (!file.tryLockSync(true)) {
      const gate = openLock(join(dir, GATE_NAME));
      try {
        await waitFor(gate, true, wait);
        await waitFor(file, true, wait);
      } finally {
        gate.close();
      }
    }
    handedOver(file);
    return await fn();
  } finally {
    file.close();
  }
}

/**
 * Holds the lock while `fn` runs only when it is free right now; otherwise returns
 * `undefined` without waiting (for work another holder will do as well, such as cleanup).
 */
export async function withLockIfFree<T>(
  dir: string,
  fn: () => T | Promise<T>,
): Promise<T | undefined> {
  const file = openLock(join(dir, LOCK_NAME));
  try {
    if (!file.tryLockSync(true)) return undefined;
    handedOver(file);
    return await fn();
  } finally {
    file.close();
  }
}

/** One wait for the lock: its file (whose mark tells a queue that moves), and since when. */
interface Wait {
  mark: Deno.FsFile;
  path: string;
  patience: LockPatience;
  started: number;
}

/**
 * Waits for `file`'s flock (the lock's, or the gate's), giving up once the lock's mark did not
 * move for `stallMs` or the whole wait (gate included) reached `totalMs`.
 */
async function waitFor(file: Deno.FsFile, exclusive: boolean, wait: Wait) {
  const { patience, path, started } = wait;
  if (file.tryLockSync(exclusive)) return;
  let seen = mark(wait.mark);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Looks again after the stall time, or when the whole patience ends if that is sooner.
    const arm = () => {
      const left = patience.totalMs - (Date.now() - started);
      if (left <= 0) reject(new LockTimeoutError(path, patience.totalMs, false));
      else timer = setTimeout(look, Math.min(patience.stallMs, left));
    };
    const look = () => {
      const now = mark(wait.mark);
      if (Date.now() - started < patience.totalMs && now === seen) {
        reject(new LockTimeoutError(path, patience.stallMs, true));
      } else {
        seen = now;
        arm();
      }
    };
    arm();
  });
  try {
    await Promise.race([file.lock(exclusive), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
