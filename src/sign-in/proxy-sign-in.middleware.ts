import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { isIPv4 } from 'node:net';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { BrowserSessionsService } from '../web/browser-sessions.service.js';
import { SignInService } from './sign-in.service.js';

/** Where the gateway's header may sign a person in: the pages, never /mcp or /admin/v1. */
const PAGES = /^\/(oauth|console)(\/|$)/;
/** /oauth endpoints that clients call, not people: the header means nothing there. */
const CLIENT_ENDPOINTS = new Set(['/oauth/token', '/oauth/register', '/oauth/revoke']);
const MAX_EMAIL_LENGTH = 320;

/** The TCP peer's address, an IPv4-mapped IPv6 one (`::ffff:10.1.2.3`) as the IPv4 it is. */
export function peerAddress(req: Request): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const raw = req.socket.remoteAddress;
  if (!raw) return null;
  const mapped = raw.toLowerCase().startsWith('::ffff:') ? raw.slice(7) : raw;
  if (isIPv4(mapped)) return { address: mapped, family: 'ipv4' };
  return { address: raw, family: 'ipv6' };
}

/**
 * `proxy` sign-in (docs/oauth.md#sign-in-by-the-gateway-proxy): a gateway that signed the person in sends their email in
 * AUTH_PROXY_USER_HEADER. The header is believed only on /oauth/* and /console/* pages and only
 * from a TCP peer in AUTH_PROXY_TRUSTED_CIDRS (`req.socket.remoteAddress`, never X-Forwarded-For,
 * which anyone can send). Then it signs the person in (rb_session) before the page runs, or, for an
 * email with no user or a disabled one, answers the 403 page. Otherwise it is ignored.
 */
@Injectable()
export class ProxySignInMiddleware implements NestMiddleware {
  private readonly enabled: boolean;
  private readonly header: string;

  constructor(
    private readonly signIn: SignInService,
    private readonly sessions: BrowserSessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.enabled = config.loginMethods.includes('proxy');
    this.header = config.authProxyUserHeader;
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    const email = this.trustedEmail(req);
    if (email === null) return next();
    const session = await this.sessions.current(req);
    if (session?.user.email === email) return next();
    const user = await this.signIn.personFor(email, res);
    if (!user) return;
    await this.sessions.start(res, user.id, req);
    next();
  }

  /** The email the gateway vouches for on this request, or null when the header is absent or not to be believed here. */
  private trustedEmail(req: Request): string | null {
    // The path as sent: a middleware mounted on a path sees only the rest of it in req.path.
    const path = req.originalUrl.split('?')[0];
    if (!this.enabled || !PAGES.test(path) || CLIENT_ENDPOINTS.has(path)) return null;
    const value = req.headers[this.header];
    if (typeof value !== 'string' || !value.trim() || value.length > MAX_EMAIL_LENGTH) return null;
    const peer = peerAddress(req);
    if (!peer || !this.config.authProxyTrusted.check(peer.address, peer.family)) return null;
    return value.trim().toLowerCase();
  }
}
