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

/**
 * A decision that may hold a slot ahead: an accepted request starts `waitMs` from now (0: at once), at
 * `startsAt` on the store's clock; `slot` names its entry, so a request that gives up frees it.
 */
export interface Reservation extends RateLimitRecord {
  waitMs: number;
  startsAt: number;
  slot: string;
}

/** A {@link ThrottlerStorage} whose records carry millisecond times, and that can hold a slot ahead. */
export interface RateLimitStore extends ThrottlerStorage {
  increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<RateLimitRecord>;
  /**
   * Takes the earliest slot of `key` that keeps at most `limit` starts in any `ttl` ms: now when one is
   * free, else later (the slot is held for this request) when that is at most `maxWaitMs` away and fewer
   * than `limit` requests of `key` already wait; otherwise the request is refused and holds nothing.
   */
  reserve(key: string, ttl: number, limit: number, maxWaitMs: number): Promise<Reservation>;
  /** Gives back a slot that has not started yet (its request went away), for the next request to take. */
  release(key: string, slot: string): Promise<void>;
}

interface Log {
  /** Start times (ms) of the accepted requests, ascending, the reserved future ones included; those before `head` have left the window. */
  hits: number[];
  /** The slot name of each entry of `hits`. */
  slots: string[];
  head: number;
}

const SWEEP_MS = 10_000;
/** Slot names of this store, told apart from the Redis store's members (see RedisSlidingWindowStore). */
export const LOCAL_SLOT = 'local:';

/**
 * In-process sliding log of start times: a request may start at `t` when fewer than `limit` started
 * in `(t - ttl, t]`, so no `ttl`-long window ever holds more than `limit` starts, and refused
 * requests are not counted. The earliest free slot is now while fewer than `limit` are in the log,
 * else the `limit`-th most recent start plus `ttl`; {@link reserve} records that (possibly future)
 * time at once, so the requests that wait are in the log too and a later one is placed after them.
 * (`blockDuration` is not used: a refusal adds no penalty.)
 *
 * `@nestjs/throttler`'s own in-memory storage has the same semantics with `blockDuration: 0`, but
 * prunes every hit on each call (O(limit) per request, which shows with a raised limit), only
 * reports whole seconds and cannot hold a slot ahead; this one is amortised O(1) and keeps milliseconds.
 */
export class SlidingWindowStore implements RateLimitStore, OnApplicationShutdown {
  private readonly logs = new Map<string, Log>();
  private readonly sweeper: NodeJS.Timeout;
  private seq = 0;

  constructor(private readonly now: () => number = () => performance.timeOrigin + performance.now()) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  async increment(key: string, ttl: number, limit: number, _blockDuration?: number, _throttlerName?: string): Promise<RateLimitRecord> {
    return this.hit(key, ttl, limit);
  }

  async reserve(key: string, ttl: number, limit: number, maxWaitMs: number): Promise<Reservation> {
    return this.hit(key, ttl, limit, maxWaitMs);
  }

  async release(key: string, slot: string): Promise<void> {
    this.free(key, slot);
  }

  /** The synchronous decision (also the fallback of the Redis store); `maxWaitMs` 0 refuses at once. */
  hit(key: string, ttl: number, limit: number, maxWaitMs = 0): Reservation {
    const now = this.now();
    let log = this.logs.get(key);
    if (!log) {
      log = { hits: [], slots: [], head: 0 };
      this.logs.set(key, log);
    }
    const { hits, slots } = log;
    while (log.head < hits.length && hits[log.head] <= now - ttl) log.head++;
    if (log.head > 64 && log.head * 2 > hits.length) {
      hits.splice(0, log.head);
      slots.splice(0, log.head);
      log.head = 0;
    }
    const counted = hits.length - log.head;
    const startsAt = counted < limit ? now : hits[hits.length - limit] + ttl;
    const waitMs = Math.ceil(startsAt - now);
    if (waitMs > 0 && (waitMs > maxWaitMs || waiting(hits, log.head, now) >= limit)) {
      // A retry sent this much later could start within its own wait.
      const retryAfterMs = Math.max(1, waitMs - maxWaitMs);
      const seconds = Math.ceil(retryAfterMs / 1000);
      return {
        totalHits: counted,
        timeToExpire: seconds,
        isBlocked: true,
        timeToBlockExpire: seconds,
        retryAfterMs,
        resetMs: retryAfterMs,
        waitMs: 0,
        startsAt: 0,
        slot: '',
      };
    }
    const slot = `${LOCAL_SLOT}${(this.seq = (this.seq + 1) % 1e9)}`;
    // Ascending: a slot is before a later reservation only when one of those was given back.
    let at = hits.length;
    while (at > log.head && hits[at - 1] > startsAt) at--;
    hits.splice(at, 0, startsAt);
    slots.splice(at, 0, slot);
    const resetMs = Math.ceil(hits[log.head] + ttl - now);
    return {
      totalHits: counted + 1,
      timeToExpire: Math.ceil(resetMs / 1000),
      isBlocked: false,
      timeToBlockExpire: 0,
      retryAfterMs: 0,
      resetMs,
      waitMs,
      startsAt,
      slot,
    };
  }

  /** Removes a slot that has not started yet; one that started (or left the window) stays counted. */
  free(key: string, slot: string): void {
    const log = this.logs.get(key);
    if (!log) return;
    const i = log.slots.indexOf(slot, log.head);
    if (i < 0 || log.hits[i] <= this.now()) return;
    log.hits.splice(i, 1);
    log.slots.splice(i, 1);
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

/** How many entries of the log are reserved for later (their requests wait). */
function waiting(hits: number[], head: number, now: number): number {
  let n = 0;
  for (let i = hits.length - 1; i >= head && hits[i] > now; i--) n++;
  return n;
}
