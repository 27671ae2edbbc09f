import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { IpRateLimiter, type IpBucket } from '../rate-limit/ip-rate-limit.js';
import { OAuthError } from './oauth-error.js';

/** Names the per-IP bucket of a route: `@IpLimited('token')`. */
export const IpLimited = Reflector.createDecorator<IpBucket>();

/**
 * The per-IP limit of an unauthenticated OAuth endpoint (OAUTH_IP_RATE_LIMIT_PER_MINUTE): over it,
 * `429` with `Retry-After` and `temporarily_unavailable`. The address is `req.ip`: the peer, or the
 * client a trusted gateway names in X-Forwarded-For (TRUST_PROXY).
 */
@Injectable()
export class IpRateLimitGuard implements CanActivate {
  constructor(
    private readonly limiter: IpRateLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const bucket = this.reflector.get(IpLimited, context.getHandler());
    if (!bucket) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const { allowed, retryAfterS } = await this.limiter.take(bucket, req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (!allowed) {
      throw new OAuthError('temporarily_unavailable', `Too many requests from this address; retry after ${retryAfterS} s.`, 429, {
        'Retry-After': String(retryAfterS),
      });
    }
    return true;
  }
}
