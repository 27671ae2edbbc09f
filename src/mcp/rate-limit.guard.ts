import { Inject, Injectable, Optional } from '@nestjs/common';
import type { ExecutionContext } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerOptions, type ThrottlerRequest } from '@nestjs/throttler';
import type { Response } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { CHATTER, PER_CREDENTIAL } from '../rate-limit/rate-limit.module.js';
import type { RateLimitRecord, RateLimitStore, Reservation } from '../rate-limit/sliding-window.store.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import { initializeClient, type McpRequest } from './mcp-request.js';
import { namedEra } from './protocol-version.js';
import { SessionsService } from './sessions.service.js';

const WHAT: Record<string, string> = {
  [PER_CREDENTIAL]: 'requests',
  [CHATTER]: 'protocol messages (notifications, responses, GET, DELETE)',
};

/**
 * The rate limit of /mcp, after the credential guard: `@nestjs/throttler`'s guard tracking the
 * credential, each message counted in one window (see {@link windowOf}), and the IETF
 * `RateLimit-Policy` / `RateLimit` headers of that window on every answer.
 *
 * A JSON-RPC request over the limit first waits for the next free slot, which the store holds for it
 * (on every instance), for at most RATE_LIMIT_MAX_WAIT_MS and with at most the limit itself waiting per
 * credential: clients burst several requests when they connect and none retries, so a burst is smoothed
 * instead of refused. A request whose client goes away while it waits gives its slot back. Protocol
 * chatter never waits. A refusal is 429 with `Retry-After` and `data.retry_after_ms`, JSON-RPC code
 * -32029 in the 2025 era and 429 in the 2026-07-28 one (where -32020..-32099 are the specification's),
 * recorded with the client and session the request named.
 */
@Injectable()
export class McpRateLimitGuard extends ThrottlerGuard {
  @Optional() @Inject(MetricsService) private readonly metrics?: MetricsService;
  @Inject(APP_CONFIG) private readonly config!: AppConfig;
  @Inject(SessionsService) private readonly sessions!: SessionsService;

  /**
   * Only the throttler of this message's window is asked, with the limits it was configured with: the
   * base guard asks every throttler and looks up five per-route overrides of each in the handler's and
   * the class's metadata on every request, and /mcp declares none (no `@Throttle`/`@SkipThrottle`).
   */
  override canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<McpRequest>();
    const throttler = this.byName().get(windowOf(req))!;
    const ttl = throttler.ttl as number;
    const limit = throttler.limit as number;
    return this.handleRequest({
      context,
      limit,
      ttl,
      throttler,
      blockDuration: (throttler.blockDuration as number | undefined) ?? ttl,
      getTracker: this.commonOptions.getTracker!,
      generateKey: this.commonOptions.generateKey!,
    });
  }

  private throttlersByName?: Map<string, ThrottlerOptions>;

  /** The configured throttlers by name (read once: they are set when the guard is initialised). */
  private byName(): Map<string, ThrottlerOptions> {
    return (this.throttlersByName ??= new Map(this.throttlers.map((t) => [t.name ?? 'default', t])));
  }

  protected override getTracker(req: Record<string, any>): Promise<string> {
    return Promise.resolve(trackerOf(req as McpRequest));
  }

  protected override generateKey(_context: unknown, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, blockDuration }: ThrottlerRequest): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context) as { req: McpRequest; res: Response };
    const name = throttler.name ?? 'default';
    const key = this.generateKey(context, trackerOf(req), name);
    const store = this.storageService as RateLimitStore;
    const record: RateLimitRecord & Partial<Reservation> =
      name === PER_CREDENTIAL
        ? await store.reserve(key, ttl, limit, this.config.rateLimitMaxWaitMs)
        : await store.increment(key, ttl, limit, blockDuration, name);
    const window = Math.ceil(ttl / 1000);
    const policy = `"${name}";q=${limit};w=${window}`;
    if (record.isBlocked) {
      const seconds = Math.max(1, Math.ceil(record.retryAfterMs / 1000));
      this.metrics?.rateLimitRefusals.inc();
      throw await this.refusal(
        req,
        `Rate limit exceeded: ${limit} ${WHAT[name] ?? 'requests'} per ${window === 1 ? 'second' : `${window} seconds`} for this credential. Retry after ${seconds} s.`,
        { retry_after_ms: record.retryAfterMs },
        { 'Retry-After': String(seconds), 'RateLimit-Policy': policy, RateLimit: `"${name}";r=0;t=${seconds}` },
      );
    }
    if (record.waitMs && record.slot) {
      this.metrics?.rateLimitWaits.inc();
      await this.waitForSlot(req, res, store, key, record.waitMs, record.slot);
    }
    const reset = Math.max(1, Math.ceil(record.resetMs / 1000));
    this.setResponseHeader(res, 'RateLimit-Policy', policy);
    this.setResponseHeader(res, 'RateLimit', `"${name}";r=${Math.max(0, limit - record.totalHits)};t=${reset}`);
    return true;
  }

  /**
   * Holds the request until its slot (never before: a timer may fire early, so the clock is asked
   * again). If the client goes away meanwhile the slot is given back, and the request is recorded as
   * limited: it never ran.
   */
  private async waitForSlot(req: McpRequest, res: Response, store: RateLimitStore, key: string, waitMs: number, slot: string): Promise<void> {
    const until = performance.now() + waitMs;
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    if (req.socket.destroyed) gone.abort();
    try {
      for (let left = waitMs; left > 0; left = until - performance.now()) await sleep(Math.ceil(left), undefined, { signal: gone.signal });
    } catch {
      await store.release(key, slot);
      throw await this.refusal(req, 'Rate limit: the client went away while this request waited for its slot; it did not run.', undefined, undefined);
    } finally {
      res.off('close', onClose);
    }
  }

  /**
   * The refusal in the request's era, after noting who the request names (its session and that
   * session's client, an `initialize`'s clientInfo, or its `_meta` client): the checks that would
   * learn it come after this one.
   */
  private async refusal(req: McpRequest, message: string, data: unknown, headers: Record<string, string> | undefined): Promise<RpcError> {
    const { era, clientInfo } = namedEra(req.method, req.headers, req.mcp);
    if (era === 'modern') {
      if (clientInfo) req.mcp.client = { capabilities: {}, info: clientInfo, logLevel: null };
    } else {
      const id = req.headers['mcp-session-id'];
      // Unknown, ended or another credential's: the entry names no session, as the session check would say.
      if (typeof id === 'string') {
        try {
          req.mcp.session = await this.sessions.get(id, req.mcp.principal!);
        } catch {
          req.mcp.session = null;
        }
      }
      const message = req.mcp.message as { method?: unknown; params?: unknown } | undefined;
      const named = !req.mcp.parseError && message?.method === 'initialize' ? initializeClient(message.params) : null;
      if (named) req.mcp.client = { capabilities: {}, info: named, logLevel: null };
    }
    return new RpcError(era === 'modern' ? RpcCode.RateLimitedModern : RpcCode.RateLimited, message, 429, data, headers);
  }
}

/**
 * The window a message counts in (README.md#rate-limit): notifications, the client's responses,
 * GET and DELETE are protocol chatter; everything else is a request, also a body that is neither a
 * well-formed notification nor a response (so garbage never gets the larger window).
 */
export function windowOf(req: McpRequest): string {
  if (req.method === 'GET' || req.method === 'DELETE') return CHATTER;
  const m = req.mcp.message;
  if (req.method !== 'POST' || req.mcp.parseError || m === null || typeof m !== 'object' || Array.isArray(m)) return PER_CREDENTIAL;
  const isNotification = typeof (m as { method?: unknown }).method === 'string' && !('id' in m);
  const isResponse = !('method' in m) && 'id' in m && ('result' in m || 'error' in m);
  return isNotification || isResponse ? CHATTER : PER_CREDENTIAL;
}

/** Who a request is counted against: its credential (the credential check ran first). */
function trackerOf(req: McpRequest): string {
  return req.mcp.principal!.credential.id;
}
