/** What a careful read returns: the one result type (src/format/result.ts), with the file's mtime. */
import type { Result } from "../format/result.ts";

/** A result read from a file, with the file's mtime (null when it could not be read). */
export type FileResult<T> = Result<T> & { mtimeMs: number | null };
