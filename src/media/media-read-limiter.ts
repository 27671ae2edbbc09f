import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { DomainError } from '../common/domain-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RATE_LIMIT_STORE, RATE_LIMIT_WINDOW_MS } from '../rate-limit/rate-limit.module.js';
import type { RateLimitStore } from '../rate-limit/sliding-window.store.js';

/**
 * The rate limit of `GET /media/:id`: RATE_LIMIT_PER_SECOND image reads per credential per sliding
 * second, in a window of their own (beside its /mcp requests and protocol chatter), in the same store
 * as the /mcp limit, so shared by every instance through Redis when REDIS_URL is set. A read over it
 * is refused at once; refusals are not counted.
 */
@Injectable()
export class MediaReadLimiter {
  private readonly limit: number;

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    this.limit = config.rateLimitPerSecond;
  }

  /** Counts one read of `credentialId`; over the limit, a `rate_limited` error saying when to retry. */
  async take(credentialId: string): Promise<void> {
    const record = await this.store.increment(`media:${credentialId}`, RATE_LIMIT_WINDOW_MS, this.limit, 0, 'media');
    if (!record.isBlocked) return;
    this.metrics?.rateLimitRefusals.inc();
    const retryAfterMs = record.retryAfterMs;
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    throw new DomainError('rate_limited', `Rate limit exceeded: ${this.limit} image reads per second for this credential. Retry after ${seconds} s.`, {
      retry_after_ms: retryAfterMs,
    });
  }
}
