import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { RateLimitStore } from './sliding-window.store.js';

/** Injection token of the {@link RateLimitStore}: Redis when `REDIS_URL` is set, else this process. */
export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');

export type IpBucket = 'authorize' | 'register' | 'token' | 'login';
const MINUTE_MS = 60_000;

/**
 * Per-IP limits of the unauthenticated OAuth endpoints (`/oauth/authorize`, `/oauth/register`,
 * `/oauth/token`, `/oauth/login`): OAUTH_IP_RATE_LIMIT_PER_MINUTE each per sliding minute, in the same store as the
 * /mcp limit (shared by every instance through Redis when REDIS_URL is set).
 */
@Injectable()
export class IpRateLimiter {
  private readonly limit: number;

  constructor(
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limit = config.oauth.ipRateLimitPerMinute;
  }

  /** Counts one request of `ip` on `bucket`: refused ones are not counted, and say when to retry. */
  async take(bucket: IpBucket, ip: string): Promise<{ allowed: boolean; retryAfterS: number }> {
    const record = await this.store.increment(`ip:${bucket}:${ip}`, MINUTE_MS, this.limit, 0, `ip-${bucket}`);
    return { allowed: !record.isBlocked, retryAfterS: record.isBlocked ? Math.max(1, Math.ceil(record.retryAfterMs / 1000)) : 0 };
  }
}
