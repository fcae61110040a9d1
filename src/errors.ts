/**
 * roster's own error classes. Each carries the exit code it maps to, so that main.ts
 * turns every failure into an exit code in one place (the codes: exit.ts). Messages are
 * sentence case with the detail after a colon.
 */
import { EXIT } from "./exit.ts";

/** A runtime failure (I/O, lock, full disk): exit code 1. */
export class RosterError extends Error {
  readonly exitCode: number = EXIT.FAILURE;
  override name = "RosterError";
}

/** Usage or invalid input: exit code 2. The message names the flag or value and what is accepted. */
export class UsageError extends RosterError {
  override readonly exitCode = EXIT.USAGE;
  override name = "UsageError";
}

/** A value that is none of its choices: `Invalid WHAT: expected one of a, b, got "v"`. */
export function notOneOf(what: string, choices: readonly string[], got: string): UsageError {
  return new UsageError(
    `Invalid ${what}: expected one of ${choices.join(", ")}, got ${JSON.stringify(got)}`,
  );
}

/** No process holds the pid (ESRCH, ENOENT under /proc, Windows error 87): exit code 3. */
export class NoSuchProcessError extends RosterError {
  override readonly exitCode = EXIT.DEAD;
  override name = "NoSuchProcessError";
  constructor(readonly pid: number) {
    super(`No such process: ${pid}`);
  }
}

/** The process exists but roster cannot read what it needs (EPERM, hidepid): exit code 4. */
export class CannotTellError extends RosterError {
  override readonly exitCode = EXIT.UNKNOWN;
  override name = "CannotTellError";
}

/** Turns an error from a Deno file-system call into roster's own, naming what failed. */
export function ioError(what: string, path: string, err: unknown): RosterError {
  if (err instanceof RosterError) return err;
  const detail = err instanceof Deno.errors.NotFound
    ? "no such file or directory"
    : err instanceof Deno.errors.PermissionDenied
    ? "permission denied"
    : err instanceof Deno.errors.AlreadyExists
    ? "already exists"
    : err instanceof Deno.errors.NotADirectory
    ? "not a directory"
    : err instanceof Deno.errors.IsADirectory
    ? "is a directory"
    : isNoSpace(err)
    ? "no space left on device"
    : err instanceof Error
    ? err.message
    : String(err);
  return new RosterError(`${what}: ${detail}: ${path}`, { cause: err });
}

function isNoSpace(err: unknown): boolean {
  return err instanceof Error && /no space left|ENOSPC|os error 28\b/i.test(err.message);
}
