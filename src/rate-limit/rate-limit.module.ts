import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { RedisSlidingWindowStore } from './redis-sliding-window.store.js';
import { IpRateLimiter, RATE_LIMIT_STORE } from './ip-rate-limit.js';
import { SlidingWindowStore, type RateLimitStore } from './sliding-window.store.js';

export { RATE_LIMIT_STORE };

/** The throttler of JSON-RPC requests on /mcp: `RATE_LIMIT_PER_SECOND` accepted per credential per sliding second. */
export const PER_CREDENTIAL = 'per-credential';
/**
 * The throttler of protocol chatter (notifications, the client's responses, GET and DELETE): a flood
 * guard of {@link CHATTER_FACTOR} times the limit in a window of its own, so that connecting a
 * client never eats its request budget (docs/protocol.md#rate-limit).
 */
export const CHATTER = 'chatter';
export const CHATTER_FACTOR = 10;
export const RATE_LIMIT_WINDOW_MS = 1_000;

@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [APP_CONFIG, { token: MetricsService, optional: true }],
      useFactory: (config: AppConfig, metrics?: MetricsService): RateLimitStore =>
        config.redisUrl ? new RedisSlidingWindowStore(config.redisUrl, metrics) : new SlidingWindowStore(),
    },
    IpRateLimiter,
  ],
  exports: [RATE_LIMIT_STORE, IpRateLimiter],
})
export class RateLimitStoreModule {}

/**
 * `@nestjs/throttler` set up for /mcp: its guard (see McpRateLimitGuard) with the store above, one
 * window (one store key) per credential and throttler.
 * The tracker is the credential, never the client address: behind a gateway every client shares one.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [APP_CONFIG, RATE_LIMIT_STORE],
      useFactory: (config: AppConfig, storage: RateLimitStore) => ({
        storage,
        // Each request counts in one of them only: McpRateLimitGuard picks which.
        throttlers: [
          { name: PER_CREDENTIAL, ttl: RATE_LIMIT_WINDOW_MS, limit: config.rateLimitPerSecond, blockDuration: 0 },
          { name: CHATTER, ttl: RATE_LIMIT_WINDOW_MS, limit: config.rateLimitPerSecond * CHATTER_FACTOR, blockDuration: 0 },
        ],
      }),
    }),
  ],
})
export class RateLimitModule {}
