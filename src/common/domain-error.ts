/** Codes of domain errors; one mapper per transport turns them into HTTP statuses or MCP errors. */
export type DomainErrorCode =
  | 'validation_failed'
  | 'invalid_arguments'
  | 'not_found'
  | 'conflict'
  | 'version_conflict'
  | 'handle_taken'
  | 'unprocessable'
  | 'forbidden'
  | 'unauthorized'
  | 'invalid_state'
  | 'too_many_jobs'
  /** Over a rate limit; `details.retry_after_ms` says when to come back (sent as `Retry-After` too). */
  | 'rate_limited'
  | 'unavailable'
  /** The user did not confirm (declined, cancelled or said no) what a tool asked them through elicitation. */
  | 'not_confirmed'
  /** The client did not answer the server's request in time. */
  | 'timeout';

/** An error a service raises on purpose: a stable `code` and a sentence a person or a model can act on. */
export class DomainError extends Error {
  override name = 'DomainError';

  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }

  static notFound(what: string, id: string): DomainError {
    return new DomainError('not_found', `No ${what} with id "${id}".`);
  }
}
