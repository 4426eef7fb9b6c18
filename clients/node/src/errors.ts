/**
 * Errors this package throws. Every failure fnbox itself reports keeps the server's (or CLI's) own
 * `error.type` and message, so callers can branch on `type` whichever transport carried it.
 */

/** A failure reported by fnbox, or met while talking to it. */
export class FnboxError extends Error {
  /** fnbox's error type: `InvalidRequest`, `NotFound`, `Unauthorized`, `Overloaded`, ... */
  readonly type: string;
  /** The HTTP status of the answer, when the error came from `fnbox serve`. */
  readonly status: number | undefined;
  /** Node's error code where one applies (`ENOENT` for a missing file). */
  readonly code: string | undefined;

  constructor(type: string, message: string, options: { status?: number; code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FnboxError';
    this.type = type;
    this.status = options.status;
    this.code = options.code;
  }
}
