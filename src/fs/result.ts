/** The one result type of careful reads and checks: a value, or what is wrong with it. */

/** A value, or a sentence saying what is wrong (never a throw for bad data). */
export type Result<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A result read from a file, with the file's mtime (null when it could not be read). */
export type FileResult<T> = Result<T> & { mtimeMs: number | null };
