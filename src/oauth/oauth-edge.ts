import { Injectable, type NestMiddleware, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express, NextFunction, Request, Response } from 'express';
import { PagePolicy } from '../web/page-policy.js';
import { OAuthError, sendOAuthError } from './oauth-error.js';

interface Endpoint {
  methods: readonly ('GET' | 'POST')[];
  /** Answered to any origin without credentials (browser-based clients), with OPTIONS preflights. */
  cors: boolean;
  /** `Cache-Control: no-store` on every answer, errors included (tokens and client secrets). */
  noStore: boolean;
}

const METADATA: Endpoint = { methods: ['GET'], cors: true, noStore: false };
const API: Endpoint = { methods: ['POST'], cors: true, noStore: true };

const PAGE_GET: Endpoint = { methods: ['GET'], cors: false, noStore: false };

/** The paths served under /oauth and /.well-known (by this module and by the sign-in pages), with their methods. */
export const OAUTH_ENDPOINTS: Readonly<Record<string, Endpoint>> = {
  '/.well-known/oauth-protected-resource': METADATA,
  '/.well-known/oauth-protected-resource/mcp': METADATA,
  '/.well-known/oauth-authorization-server': METADATA,
  '/.well-known/openid-configuration': METADATA,
  '/oauth/register': API,
  '/oauth/token': API,
  '/oauth/revoke': API,
  '/oauth/authorize': PAGE_GET,
  '/oauth/consent': { methods: ['POST'], cors: false, noStore: false },
  '/oauth/login': { methods: ['GET', 'POST'], cors: false, noStore: false },
  '/oauth/logout': { methods: ['POST'], cors: false, noStore: false },
  '/oauth/login/oidc': PAGE_GET,
  '/oauth/callback/oidc': PAGE_GET,
};

/** The path of a request as sent, whatever router mounted the handler. */
function pathOf(req: Request): string {
  const url = req.originalUrl;
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function allowed(endpoint: Endpoint): string {
  return [...endpoint.methods, ...(endpoint.methods.includes('GET') ? ['HEAD'] : []), ...(endpoint.cors ? ['OPTIONS'] : [])].join(', ');
}

/**
 * The headers every answer of an endpoint carries, errors included: `Cache-Control: no-store` where
 * tokens or secrets are answered, and CORS (`*`, no credentials) where browser-based clients call.
 * Set before anything can refuse the request; answers the endpoint, if the path is one.
 */
function setEndpointHeaders(req: Request, res: Response): Endpoint | undefined {
  const endpoint = OAUTH_ENDPOINTS[pathOf(req)];
  if (endpoint?.noStore) res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  if (endpoint?.cors) res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'WWW-Authenticate, Retry-After' });
  return endpoint;
}

/**
 * What every request under /oauth and /.well-known goes through before its route: the endpoint's
 * headers (no-store, CORS), the Host rule of every page (PagePolicy, the same rule as /mcp's),
 * then a CORS preflight of the metadata, token, registration and revocation endpoints, answered
 * here with 204.
 */
@Injectable()
export class OAuthEdgeMiddleware implements NestMiddleware {
  constructor(private readonly pages: PagePolicy) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const endpoint = setEndpointHeaders(req, res);
    if (!this.pages.hostAllowed(req.headers.host)) {
      return sendOAuthError(res, new OAuthError('access_denied', `The Host header "${req.headers.host ?? ''}" is not allowed on this server.`, 403));
    }
    if (!endpoint?.cors || req.method !== 'OPTIONS') return next();
    res
      .status(204)
      .set({
        'Access-Control-Allow-Methods': allowed(endpoint),
        'Access-Control-Allow-Headers': 'Content-Type, Authorization',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin',
      })
      .end();
  }
}

/**
 * What answers under /oauth and /.well-known when no route did: 405 (with `Allow`) for a known path
 * with another method, a JSON 404 otherwise, and RFC-shaped JSON for the body parser's errors (they
 * happen before any route, so no controller's filter sees them).
 *
 * Installed on Express when the modules are initialised: Nest has registered every controller's
 * routes by then (whichever module declares them, e.g. the sign-in pages under /oauth) and not yet
 * its own not-found handler, so this comes exactly between the two.
 */
@Injectable()
export class OAuthFallback implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const app = this.adapterHost.httpAdapter.getInstance<Express>();
    const prefixes = ['/oauth', '/.well-known'];
    app.use(prefixes, (req: Request, res: Response) => {
      const path = pathOf(req);
      const endpoint = OAUTH_ENDPOINTS[path];
      if (endpoint) {
        res.set('Allow', allowed(endpoint));
        return sendOAuthError(res, new OAuthError('method_not_allowed', `${path} answers ${endpoint.methods.join(' and ')}, not ${req.method}.`, 405));
      }
      sendOAuthError(res, new OAuthError('not_found', `Nothing is served at ${req.method} ${path}.`, 404));
    });
    // The body parser's errors skip every middleware, OAuthEdgeMiddleware included: set its headers here.
    app.use(prefixes, (err: unknown, req: Request, res: Response, next: NextFunction) => {
      if (res.headersSent) return next(err);
      setEndpointHeaders(req, res);
      sendOAuthError(res, err);
    });
  }
}
