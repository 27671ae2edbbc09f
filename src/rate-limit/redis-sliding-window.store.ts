import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { clientSpan, tracingOn } from '../common/telemetry.js';
import type { MetricsService } from '../metrics/metrics.service.js';
import { LOCAL_SLOT, SlidingWindowStore, type RateLimitRecord, type RateLimitStore, type Reservation } from './sliding-window.store.js';

/**
 * The sliding log of {@link SlidingWindowStore} in one Redis sorted set per credential: members are
 * the accepted requests, scored by their start time (a future one for a request that waits), decided
 * atomically by one script on Redis's clock (instances with skewed clocks still agree, and each
 * waiting request holds its exact slot, so the instances together never start more than the limit
 * in any window). A refusal writes nothing. Returns {accepted, counted, waitMs, resetMs, startsAt}.
 */
const SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local key = KEYS[1]
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local maxWait = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local n = redis.call('ZCARD', key)
local oldest = now
if n > 0 then oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) end
local at = now
if n >= limit then at = tonumber(redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')[2]) + window end
if at > now and (at - now > maxWait or redis.call('ZCOUNT', key, '(' .. string.format('%d', now), '+inf') >= limit) then
  return {0, n, at - now, oldest + window - now}
end
redis.call('ZADD', key, at, ARGV[3])
local last = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
redis.call('PEXPIRE', key, last + window - now)
if at < oldest then oldest = at end
return {1, n + 1, at - now, oldest + window - now, at}
`;

/** Removes a member that has not started yet (its score is still ahead of Redis's clock). */
const RELEASE = `
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at then return 0 end
local t = redis.call('TIME')
if tonumber(at) <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then return 0 end
return redis.call('ZREM', KEYS[1], ARGV[1])
`;

/** The attributes of a Redis span (named by its script, never its keys or members). */
const REDIS_SPAN = { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA' };

/** How long one decision may wait for Redis before this instance decides alone. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
const WARN_EVERY_MS = 10_000;

type Scripted = Redis & {
  slidingWindow(key: string, windowMs: number, limit: number, member: string, maxWaitMs: number): Promise<[number, number, number, number, number?]>;
  releaseSlot(key: string, member: string): Promise<number>;
};

/**
 * Rate-limit windows shared by every instance through Redis. When Redis does not answer within
 * {@link REDIS_COMMAND_TIMEOUT_MS} (down, unreachable, overloaded) the decision falls back to this
 * instance's own sliding log: the limit then holds per instance instead of in total, requests are
 * never failed or held up for it, a warning is logged (at most every 10 s) and
 * `reblog_rate_limit_store_errors_total` / `reblog_rate_limit_store_up` say so.
 */
export class RedisSlidingWindowStore implements RateLimitStore, OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('RateLimit');
  private readonly redis: Scripted;
  private readonly fallback = new SlidingWindowStore();
  private readonly prefix: string;
  private readonly memberPrefix = randomBytes(6).toString('base64url');
  private seq = 0;
  private lastWarning = 0;
  private up = true;
  private connecting: Promise<void> | null = null;

  constructor(
    url: string,
    private readonly metrics?: MetricsService,
    options: { keyPrefix?: string } = {},
  ) {
    this.prefix = options.keyPrefix ?? 'reblog:rl:';
    this.redis = new Redis(url, {
      lazyConnect: true,
      // Fail at once while disconnected instead of queueing requests behind a dead connection.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      retryStrategy: (times) => Math.min(100 * times, 2_000),
    }) as Scripted;
    this.redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SCRIPT });
    this.redis.defineCommand('releaseSlot', { numberOfKeys: 1, lua: RELEASE });
    this.redis.on('error', (err: Error) => this.down(err));
    this.redis.on('ready', () => this.answered());
  }

  /**
   * Waits a little for the first connection, so the first requests already share the window.
   * (Called twice: the instance is also `@nestjs/throttler`'s storage provider.)
   */
  onModuleInit(): Promise<void> {
    this.connecting ??= (async () => {
      this.redis.connect().catch((err: Error) => this.down(err));
      // Not events.once: it rejects on the first 'error' (a refused connection) instead of waiting.
      await Promise.race([new Promise((ready) => this.redis.once('ready', ready)), sleep(2_000)]);
      if (this.redis.status !== 'ready') this.down(new Error(`not connected (${this.redis.status})`));
    })();
    return this.connecting;
  }

  async increment(key: string, ttl: number, limit: number, _blockDuration?: number, _throttlerName?: string): Promise<RateLimitRecord> {
    return this.reserve(key, ttl, limit, 0);
  }

  async reserve(key: string, ttl: number, limit: number, maxWaitMs: number): Promise<Reservation> {
    try {
      const slot = `${this.memberPrefix}${(this.seq = (this.seq + 1) % 1e9)}`;
      const name = this.prefix + key;
      const [accepted, count, waitMs, resetMs, startsAt = 0] = await (tracingOn()
        ? clientSpan('EVALSHA rate_limit.sliding_window', REDIS_SPAN, () => this.redis.slidingWindow(name, ttl, limit, slot, maxWaitMs))
        : this.redis.slidingWindow(name, ttl, limit, slot, maxWaitMs));
      if (!this.up) this.answered();
      const seconds = Math.ceil(resetMs / 1000);
      if (accepted === 1) {
        // startsAt is on Redis's clock, the one every instance's slots are placed by.
        return { totalHits: count, timeToExpire: seconds, isBlocked: false, timeToBlockExpire: 0, retryAfterMs: 0, resetMs, waitMs, startsAt, slot };
      }
      const retryAfterMs = Math.max(1, waitMs - maxWaitMs);
      const retrySeconds = Math.ceil(retryAfterMs / 1000);
      return {
        totalHits: count,
        timeToExpire: retrySeconds,
        isBlocked: true,
        timeToBlockExpire: retrySeconds,
        retryAfterMs,
        resetMs: retryAfterMs,
        waitMs: 0,
        startsAt: 0,
        slot: '',
      };
    } catch (err) {
      this.metrics?.rateLimitStoreErrors.inc();
      this.down(err as Error);
      return this.fallback.hit(key, ttl, limit, maxWaitMs);
    }
  }

  async release(key: string, slot: string): Promise<void> {
    if (slot.startsWith(LOCAL_SLOT)) return this.fallback.free(key, slot);
    try {
      const name = this.prefix + key;
      await (tracingOn()
        ? clientSpan('EVALSHA rate_limit.release_slot', REDIS_SPAN, () => this.redis.releaseSlot(name, slot))
        : this.redis.releaseSlot(name, slot));
      if (!this.up) this.answered();
    } catch (err) {
      // Not given back: the slot passes unused, as if its request had run.
      this.metrics?.rateLimitStoreErrors.inc();
      this.down(err as Error);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.fallback.onApplicationShutdown();
    this.redis.disconnect(false);
  }

  private down(err: Error): void {
    this.setUp(false);
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.log.warn(`Redis rate-limit store unavailable (${err.message}): each instance limits on its own until it answers again.`);
  }

  /**
   * Redis answered: on a new connection, or a command on the same one after a command it answered too late
   * (the connection stays up then, so no 'ready' follows).
   */
  private answered(): void {
    if (!this.up) this.log.log('Redis answers again: rate-limit windows are shared across instances.');
    this.setUp(true);
  }

  private setUp(up: boolean): void {
    this.up = up;
    this.metrics?.rateLimitStoreUp.set(up ? 1 : 0);
  }
}
