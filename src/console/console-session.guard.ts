import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { setAuditActor } from '../audit/audit-context.js';
import { BrowserSessionsService, type BrowserSession } from '../web/browser-sessions.service.js';
import { PagePolicy } from '../web/page-policy.js';

/** A console request, with the signed-in person's browser session. */
export interface ConsoleRequest extends Request {
  browserSession: BrowserSession;
}

/** Nobody is signed in: the sign-in page, coming back to `returnTo`. */
export class ConsoleSignInRequired extends Error {
  constructor(readonly returnTo: string) {
    super('Sign in to use the console.');
  }
}

/** A state-changing post that did not come from the console's own form in this session. */
export class ConsoleFormRefused extends Error {}

/** A Host header this server does not serve (the Host rule of every page). */
export class ConsoleHostRefused extends Error {
  constructor(readonly host: string) {
    super(`The Host header "${host}" is not allowed on this server.`);
  }
}

/**
 * Every /console route: the Host rule first (else 403), then a browser session is required (else
 * 303 to the sign-in page, back here after), and a POST must come from this server's page in this
 * session: not `Sec-Fetch-Site: cross-site`, no foreign `Origin` (`null` is allowed: Chromium sends
 * it from a no-referrer page), and the session's `csrf` in the form; else 403. The Host and
 * cross-site rules are every page's (PagePolicy).
 */
@Injectable()
export class ConsoleSessionGuard implements CanActivate {
  constructor(
    private readonly sessions: BrowserSessionsService,
    private readonly pages: PagePolicy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ConsoleRequest>();
    if (!this.pages.hostAllowed(req.headers.host)) throw new ConsoleHostRefused(req.headers.host ?? '');
    const session = await this.sessions.current(req);
    // A post's own path is no page to come back to: the console's start is.
    if (!session) throw new ConsoleSignInRequired(req.method === 'GET' || req.method === 'HEAD' ? req.originalUrl : '/console/');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const form = (req.body ?? {}) as Record<string, unknown>;
      if (this.pages.crossSitePost(req) || !this.sessions.csrfMatches(session, form.csrf))
        throw new ConsoleFormRefused('This form was not sent from this console in your browser.');
    }
    req.browserSession = session;
    setAuditActor({ type: 'user', id: session.user.id, email: session.user.email });
    return true;
  }
}
