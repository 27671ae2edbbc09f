import { Inject, Injectable, Optional } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerRequest } from '@nestjs/throttler';
import { MetricsService } from '../metrics/metrics.service.js';
import { CHATTER, PER_CREDENTIAL } from '../rate-limit/rate-limit.module.js';
import type { RateLimitRecord } from '../rate-limit/sliding-window.store.js';
import { RpcCode, RpcError } from './json-rpc.js';
import type { McpRequest } from './mcp-request.js';

const WHAT: Record<string, string> = {
  [PER_CREDENTIAL]: 'requests',
  [CHATTER]: 'protocol messages (notifications, responses, GET, DELETE)',
};

/**
 * The rate limit of /mcp, after the credential guard: `@nestjs/throttler`'s guard tracking the
 * credential, each message counted in one window (see {@link windowOf}), answering a refusal as the
 * JSON-RPC error -32029 with 429, `Retry-After` and `data.retry_after_ms`, and the IETF
 * `RateLimit-Policy` / `RateLimit` headers of that window on every answer.
 */
@Injectable()
export class McpRateLimitGuard extends ThrottlerGuard {
  @Optional() @Inject(MetricsService) private readonly metrics?: MetricsService;

  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return (req as McpRequest).mcp.principal!.credential.id;
  }

  protected override generateKey(_context: unknown, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, blockDuration }: ThrottlerRequest): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    const name = throttler.name ?? 'default';
    // The guard asks every throttler; only the one of this message's window counts it.
    if (name !== windowOf(req as McpRequest)) return true;
    const key = this.generateKey(context, await this.getTracker(req), name);
    const record = (await this.storageService.increment(key, ttl, limit, blockDuration, name)) as Partial<RateLimitRecord> & Awaited<ReturnType<typeof this.storageService.increment>>;
    const window = Math.ceil(ttl / 1000);
    const policy = `"${name}";q=${limit};w=${window}`;
    if (record.isBlocked) {
      const retryAfterMs = record.retryAfterMs ?? record.timeToBlockExpire * 1000;
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      this.metrics?.rateLimitRefusals.inc();
      throw new RpcError(
        RpcCode.RateLimited,
        `Rate limit exceeded: ${limit} ${WHAT[name] ?? 'requests'} per ${window === 1 ? 'second' : `${window} seconds`} for this credential. Retry after ${seconds} s.`,
        429,
        { retry_after_ms: retryAfterMs },
        { 'Retry-After': String(seconds), 'RateLimit-Policy': policy, RateLimit: `"${name}";r=0;t=${seconds}` },
      );
    }
    const reset = Math.max(1, Math.ceil((record.resetMs ?? record.timeToExpire * 1000) / 1000));
    this.setResponseHeader(res, 'RateLimit-Policy', policy);
    this.setResponseHeader(res, 'RateLimit', `"${name}";r=${Math.max(0, limit - record.totalHits)};t=${reset}`);
    return true;
  }
}

/**
 * The window a message counts in (spec/mcp.md "Rate limit"): notifications, the client's responses,
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
