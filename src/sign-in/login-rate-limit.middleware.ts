import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { IpRateLimiter } from '../rate-limit/ip-rate-limit.js';
import { tooManyPage } from './sign-in.pages.js';

/**
 * The per-IP limit of sign-in (OAUTH_IP_RATE_LIMIT_PER_MINUTE on /oauth/login, docs/oauth.md#what-every-oauth-endpoint-shares): every
 * request to the sign-in page, its form, and the identity provider's start and callback counts in
 * the `login` bucket of `req.ip` (the client as the trusted proxies report it); over it, the 429 page
 * with Retry-After. Guessing a link's token is hopeless anyway (256 bits); this keeps floods cheap.
 */
@Injectable()
export class LoginRateLimitMiddleware implements NestMiddleware {
  constructor(private readonly limiter: IpRateLimiter) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    const { allowed, retryAfterS } = await this.limiter.take('login', req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (allowed) return next();
    tooManyPage(res, retryAfterS);
  }
}
