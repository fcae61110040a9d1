/**
 * A directory's advisory lock (flock on `<dir>/.lock`), waited for with a time limit.
 * flock locks die with their process, so a crashed holder never blocks anyone.
 */
import { ioError, RosterError } from "../errors.ts";
import { join } from "./dir.ts";

/** The lock file's name in the directory it locks. */
const LOCK_NAME = ".lock";
const LOCK_TIMEOUT_MS = 10_000;

/** The advisory lock stayed held by another process for longer than the caller would wait. */
export class LockTimeoutError extends RosterError {
  constructor(path: string, ms: number) {
    super(
      `Could not take the store lock in ${ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`}: ${path}`,
    );
    this.name = "LockTimeoutError";
  }
}

/**
 * Holds the advisory lock of one directory while `fn` runs. Waits at most `timeoutMs` (10 s),
 * then throws LockTimeoutError: a holder that hangs must not hang every hook behind it.
 */
export async function withLock<T>(
  dir: string,
  fn: () => T | Promise<T>,
  timeoutMs = LOCK_TIMEOUT_MS,
): Promise<T> {
  const path = join(dir, LOCK_NAME);
  // Never through a link: opening `.lock -> /etc/passwd` with create would lock (or, dangling,
  // create) another file. What was checked must be what was opened.
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
  try {
    if (!file.tryLockSync(true)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LockTimeoutError(path, timeoutMs)), timeoutMs);
      });
      try {
        await Promise.race([file.lock(true), timeout]);
      } finally {
        clearTimeout(timer);
      }
    }
    return await fn();
  } finally {
    file.close();
  }
}
