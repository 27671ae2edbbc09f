import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { PrincipalResolver } from '../auth/principal.resolver.js';
import { bearerToken } from '../common/bearer.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { RpcCode, RpcError } from './json-rpc.js';
import type { McpRequest } from './mcp-request.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/** DNS-rebinding protection: a browser origin or a Host header this server was not set up for is 403. */
@Injectable()
export class OriginGuard implements CanActivate {
  private readonly origins: Set<string>;
  private readonly hosts: Set<string> | null;
  private readonly loopback: boolean;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const publicUrl = new URL(config.publicUrl);
    this.loopback = LOOPBACK_HOSTS.has(config.host);
    this.origins = new Set([...config.allowedOrigins, publicUrl.origin]);
    this.hosts = this.loopback || config.allowedHosts ? new Set([...(config.allowedHosts ?? []), publicUrl.host.toLowerCase(), publicUrl.hostname.toLowerCase()]) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<McpRequest>();
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin) && !(this.loopback && LOOPBACK_ORIGIN.test(origin))) {
      throw new RpcError(RpcCode.ServerError, `Forbidden: requests from origin ${origin} are not allowed.`, 403);
    }
    if (this.hosts) {
      const host = (req.headers.host ?? '').toLowerCase();
      const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
      if (!this.hosts.has(host) && !this.hosts.has(name) && !(this.loopback && LOOPBACK_HOSTS.has(name))) {
        throw new RpcError(RpcCode.ServerError, `Forbidden: the Host header "${host}" is not allowed.`, 403);
      }
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
    this.challenge = `Bearer resource_metadata="${config.publicUrl}/.well-known/oauth-protected-resource"`;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<McpRequest>();
    const token = bearerToken(req.headers.authorization);
    const principal = token ? await this.resolver.resolve(token) : null;
    if (!principal) {
      throw new RpcError(
        RpcCode.ServerError,
        token ? 'Unauthorized: the bearer token is unknown, revoked or expired.' : 'Unauthorized: send an API key or access token as "Authorization: Bearer <token>".',
        401,
        undefined,
        { 'WWW-Authenticate': this.challenge },
      );
    }
    req.mcp.principal = principal;
    return true;
  }
}
