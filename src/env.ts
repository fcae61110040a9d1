/**
 * Environment variables as roster reads them: a value that is not valid UTF-8 (Deno cannot
 * hand it over as a string) is the caller's bad input, named, never an unexpected failure.
 */
import { UsageError } from "./errors.ts";

/** The value of `name`; undefined when unset; a usage error naming it when not UTF-8. */
export function envVar(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    throw new UsageError(`Invalid ${name}: not valid UTF-8`);
  }
}
