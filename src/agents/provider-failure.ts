import { ProviderError } from '../ai/ai.types.js';
import { DomainError } from '../common/domain-error.js';

/**
 * A provider's failure as the job's final error (a `DomainError`, not retried: the HTTP adapters
 * already retried with backoff): `unavailable` when trying again later may work, `unprocessable`
 * when the request itself must change. Aborts and other errors pass through unchanged.
 */
export function providerFailure(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || !(err instanceof ProviderError)) return err;
  return new DomainError(err.retryable ? 'unavailable' : 'unprocessable', err.message);
}
