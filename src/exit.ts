/**
 * Every exit code roster returns, in one place: help, errors, the README and the tests cite
 * this list. Errors carry their code (errors.ts); main.ts turns them into the exit status.
 */

/** The exit codes of every command. */
export const EXIT = {
  /** Success (check: all alive; token --verify: the token still matches). */
  OK: 0,
  /** A runtime failure (I/O, a lock, a full disk), with a message on stderr. */
  FAILURE: 1,
  /** Usage or invalid input, with a message naming the flag or value and what is accepted. */
  USAGE: 2,
  /**
   * check, token: a process is dead (gone, a zombie, its pid reused), or a token differs;
   * whoami, wait --session-id: no such session (not found).
   */
  DEAD: 3,
  /** check, token: roster cannot tell (permissions, an unsupported OS). */
  UNKNOWN: 4,
  /** wait: the processes were still running when --timeout ran out (as timeout(1) exits). */
  TIMEOUT: 124,
  /** exec: the command was found but could not be run (as a shell exits). */
  CANNOT_EXECUTE: 126,
  /** exec: no such command (as a shell exits). exec otherwise exits with the command's status. */
  COMMAND_NOT_FOUND: 127,
} as const;

/** continuation-check: one exit code per verdict kind (docs/continuation.md). */
export const VERDICT_EXIT = {
  dispatch: 0,
  wait: 10,
  skip: 11,
  stop: 12,
  vetoed: 13,
} as const;

/** The summary help and the README print: every code, one line. */
export const EXIT_SUMMARY = "Exit codes: 0 success, 1 runtime failure, 2 usage error " +
  "(see each command for more).";
