import type { OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/**
 * A rate-limit decision: `@nestjs/throttler`'s storage record (whole seconds), plus the same times
 * in milliseconds for `data.retry_after_ms` and the `RateLimit` header.
 */
export interface RateLimitRecord {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
  /** Until a refused request may be sent again (0 when accepted). */
  retryAfterMs: number;
  /** Until the oldest hit still counted leaves the window. */
  resetMs: number;
}

/** A {@link ThrottlerStorage} whose records carry millisecond times. */
export interface RateLimitStore extends ThrottlerStorage {
  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<RateLimitRecord>;
}

interface Log {
  /** Times (ms) of the accepted hits; those before `head` have left the window. */
  hits: number[];
  head: number;
}

const SWEEP_MS = 10_000;

/**
 * In-process sliding log: a request is accepted when fewer than `limit` requests were accepted in
 * the last `ttl` ms, so no `ttl`-long window ever holds more than `limit` accepted requests, and
 * refused requests are not counted. (`blockDuration` is not used: a refusal adds no penalty.)
 *
 * `@nestjs/throttler`'s own in-memory storage has the same semantics with `blockDuration: 0`, but
 * prunes every hit on each call (O(limit) per request, which shows with a raised limit) and only
 * reports whole seconds; this one is amortised O(1) and keeps milliseconds.
 */
export class SlidingWindowStore implements RateLimitStore, OnApplicationShutdown {
  private readonly logs = new Map<string, Log>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = () => performance.timeOrigin + performance.now()) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  async increment(key: string, ttl: number, limit: number, _blockDuration?: number, _throttlerName?: string): Promise<RateLimitRecord> {
    return this.hit(key, ttl, limit);
  }

  /** The synchronous decision (also the fallback of the Redis store). */
  hit(key: string, ttl: number, limit: number): RateLimitRecord {
    const now = this.now();
    let log = this.logs.get(key);
    if (!log) {
      log = { hits: [], head: 0 };
      this.logs.set(key, log);
    }
    const { hits } = log;
    while (log.head < hits.length && hits[log.head] <= now - ttl) log.head++;
    if (log.head > 64 && log.head * 2 > hits.length) {
      hits.splice(0, log.head);
      log.head = 0;
    }
    const counted = hits.length - log.head;
    if (counted < limit) {
      hits.push(now);
      const resetMs = Math.ceil(hits[log.head] + ttl - now);
      return { totalHits: counted + 1, timeToExpire: Math.ceil(resetMs / 1000), isBlocked: false, timeToBlockExpire: 0, retryAfterMs: 0, resetMs };
    }
    const retryAfterMs = Math.max(1, Math.ceil(hits[log.head] + ttl - now));
    const seconds = Math.ceil(retryAfterMs / 1000);
    return { totalHits: counted, timeToExpire: seconds, isBlocked: true, timeToBlockExpire: seconds, retryAfterMs, resetMs: retryAfterMs };
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
    this.logs.clear();
  }

  /** Forgets credentials whose every hit has left the window (the longest window is a minute at most). */
  private sweep(): void {
    const cutoff = this.now() - 60_000;
    for (const [key, log] of this.logs) {
      if (log.hits.length === log.head || log.hits[log.hits.length - 1] <= cutoff) this.logs.delete(key);
    }
  }
}
