/**
 * Environment variables as roster reads them: a value that is not valid UTF-8 (Deno cannot
 * hand it over as a string) is the caller's bad input, named, never an unexpected failure.
 */
import { UsageError } from "./errors.ts";

/** A variable whose value is not valid UTF-8: a usage error naming it (exit 2). */
export class EnvEncodingError extends UsageError {
  override name = "EnvEncodingError";
  constructor(readonly variable: string) {
    super(`Invalid ${variable}: not valid UTF-8`);
  }
}

/** The value of `name`; undefined when unset; EnvEncodingError when it is not UTF-8. */
export function envVar(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    throw new EnvEncodingError(name);
  }
}
