import { setAuditActor } from '../audit/audit-context.js';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';
import { PrincipalResolver } from '../auth/principal.resolver.js';
import { bearerToken } from '../common/bearer.js';
import { SCOPES } from '../common/tool-names.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { hostRule, listensOnLoopback } from '../web/page-policy.js';
import { RpcCode, RpcError } from '../protocol/json-rpc.js';
import type { McpRequest } from './mcp-request.js';
import { McpRateLimitGuard } from './rate-limit.guard.js';
import { decideEra, requestVersion } from './protocol-version.js';
import { SessionsService } from './sessions.service.js';

const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/** DNS-rebinding protection: a browser origin or a Host header this server was not set up for is 403. */
@Injectable()
export class OriginGuard implements CanActivate {
  private readonly origins: Set<string>;
  private readonly loopback: boolean;
  /** The Host rule, the same for every page and OAuth endpoint (web/page-policy.ts). */
  private readonly hostAllowed: (header: string | undefined) => boolean;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.loopback = listensOnLoopback(config);
    this.origins = new Set([...config.allowedOrigins, new URL(config.publicUrl).origin]);
    this.hostAllowed = hostRule(config);
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<McpRequest>();
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin) && !(this.loopback && LOOPBACK_ORIGIN.test(origin))) {
      throw new RpcError(RpcCode.ServerError, `Forbidden: requests from origin ${origin} are not allowed.`, 403);
    }
    if (!this.hostAllowed(req.headers.host)) {
      throw new RpcError(RpcCode.ServerError, `Forbidden: the Host header "${(req.headers.host ?? '').toLowerCase()}" is not allowed.`, 403);
    }
    return true;
  }
}

/** The bearer credential (API key or grant token) becomes the request's principal, or the request is 401. */
@Injectable()
export class CredentialGuard implements CanActivate {
  private readonly challenge: string;

  constructor(
    private readonly resolver: PrincipalResolver,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // docs/oauth.md#discovery: where the metadata is, and every scope a client may ask for.
    this.challenge = `Bearer resource_metadata="${config.publicUrl}/.well-known/oauth-protected-resource", scope="${SCOPES.join(' ')}"`;
  }

  canActivate(context: ExecutionContext): true | Promise<true> {
    const req = context.switchToHttp().getRequest<McpRequest>();
    const token = bearerToken(req.headers.authorization);
    const principal = token ? this.resolver.resolve(token) : null;
    return principal instanceof Promise ? principal.then((found) => this.admit(req, token, found)) : this.admit(req, token, principal);
  }

  private admit(req: McpRequest, token: string | undefined, principal: Principal | null): true {
    if (!principal) {
      throw new RpcError(
        RpcCode.ServerError,
        token
          ? 'Unauthorized: the bearer token is unknown, revoked or expired.'
          : 'Unauthorized: send an API key or access token as "Authorization: Bearer <token>".',
        401,
        undefined,
        // A token was sent but names no live credential: RFC 6750 §3.1 says which error that is.
        { 'WWW-Authenticate': token ? `${this.challenge}, error="invalid_token"` : this.challenge },
      );
    }
    req.mcp.principal = principal;
    setAuditActor({ type: 'credential', id: principal.credential.id });
    return true;
  }
}

/**
 * The session a request names in `Mcp-Session-Id`: unknown, ended, expired or another credential's
 * is 404; without the header the request is served outside any session (stateless clients).
 * DELETE is left to its handler: ending the session is its check, in one statement.
 */
@Injectable()
export class SessionGuard implements CanActivate {
  constructor(private readonly sessions: SessionsService) {}

  canActivate(context: ExecutionContext): true | Promise<true> {
    const req = context.switchToHttp().getRequest<McpRequest>();
    if (req.method === 'DELETE' || req.mcp.era === 'modern') return true;
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') {
      req.mcp.session = null;
      return true;
    }
    const session = this.sessions.get(id, req.mcp.principal!);
    if (!(session instanceof Promise)) {
      req.mcp.session = session;
      return true;
    }
    return session.then((found) => {
      req.mcp.session = found;
      return true;
    });
  }
}

/**
 * The era of a request, decided once (protocol-version.ts decideEra) before its session is looked up:
 * a 2026-07-28 request is checked here (no session, its `_meta`, its headers) and gets its version and
 * client from `_meta`; a legacy one goes on to SessionGuard and ProtocolVersionGuard as before.
 */
@Injectable()
export class EraGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<McpRequest>();
    decideEra(req.method, req.headers, req.mcp);
    return true;
  }
}

/**
 * The protocol version a legacy JSON-RPC message speaks, before its envelope is checked: an unsupported
 * `MCP-Protocol-Version` is 400. Requests without a message (GET, DELETE...) speak none; a modern
 * request's version was decided by EraGuard.
 */
@Injectable()
export class ProtocolVersionGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<McpRequest>();
    if (req.method !== 'POST' || req.mcp.era === 'modern') return true;
    const header = req.headers['mcp-protocol-version'];
    req.mcp.version = requestVersion(req.mcp.method, Array.isArray(header) ? header[0] : header);
    return true;
  }
}

/**
 * The checks of /mcp as one Nest guard: Origin/Host, credential, rate limit, era, session and
 * protocol version, in that order (docs/protocol.md#order-of-checks), each the guard class above
 * (the rate limit's in rate-limit.guard.ts). One guard, because Nest awaits every guard it runs
 * through a promise of its own; here a check is waited for only when it answers a promise (the rate
 * limit's store; the credential and the session when this instance has not cached them).
 */
@Injectable()
export class McpChecks implements CanActivate {
  private readonly checks: CanActivate[];

  constructor(
    origin: OriginGuard,
    credential: CredentialGuard,
    rateLimit: McpRateLimitGuard,
    era: EraGuard,
    session: SessionGuard,
    version: ProtocolVersionGuard,
  ) {
    this.checks = [origin, credential, rateLimit, era, session, version];
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    return this.runFrom(0, context);
  }

  /** The checks from the `first`: at once while each answers at once, the rest after a check's promise. */
  private runFrom(first: number, context: ExecutionContext): boolean | Promise<boolean> {
    for (let i = first; i < this.checks.length; i++) {
      // Every check answers a boolean or a promise of one, or throws its own refusal; none answers an Observable.
      const passed = this.checks[i].canActivate(context) as boolean | Promise<boolean>;
      if (passed === false) return false;
      if (passed !== true) return passed.then((ok) => ok && this.runFrom(i + 1, context));
    }
    return true;
  }
}
