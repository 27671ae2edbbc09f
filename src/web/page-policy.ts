import { Inject, Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';

/** The names of the loopback interface, as a listening address or in a Host header. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether the server listens on loopback only (HOST is a loopback address). */
export function listensOnLoopback(config: Pick<AppConfig, 'host'>): boolean {
  return LOOPBACK_HOSTS.has(config.host);
}

/**
 * The Host rule (DNS rebinding, docs/protocol.md#origin-and-host): while the server listens on loopback, or whenever
 * ALLOWED_HOSTS is set, a request is served only when its Host header is one of ALLOWED_HOSTS, the
 * host of PUBLIC_URL (with or without its port) or, on loopback, `localhost`, `127.0.0.1` or
 * `[::1]` on any port; otherwise any Host is served. One rule for /mcp (its OriginGuard) and for the
 * pages and OAuth endpoints ({@link PagePolicy}).
 */
export function hostRule(config: Pick<AppConfig, 'host' | 'publicUrl' | 'allowedHosts'>): (header: string | undefined) => boolean {
  const loopback = listensOnLoopback(config);
  const publicUrl = new URL(config.publicUrl);
  if (!loopback && !config.allowedHosts) return () => true;
  const hosts = new Set([...(config.allowedHosts ?? []), publicUrl.host.toLowerCase(), publicUrl.hostname.toLowerCase()]);
  return (header) => {
    const host = (header ?? '').toLowerCase();
    const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
    return hosts.has(host) || hosts.has(name) || (loopback && LOOPBACK_HOSTS.has(name));
  };
}

/** Why a form post counts as sent from another site: its `Sec-Fetch-Site`, or its foreign `Origin`. */
export type CrossSite = { by: 'sec-fetch-site' } | { by: 'origin'; origin: string };

/**
 * The cross-site rule of every form post (sign-in, consent, console): `Sec-Fetch-Site: cross-site`,
 * or an `Origin` other than PUBLIC_URL's, is another site's post; null when it is not. `Origin:
 * null` is not foreign: a browser sends it for a post from a page served with `Referrer-Policy:
 * no-referrer`, as every page here is, and the form's CSRF token decides then.
 */
export function crossSite(headers: IncomingHttpHeaders, publicOrigin: string): CrossSite | null {
  if (headers['sec-fetch-site'] === 'cross-site') return { by: 'sec-fetch-site' };
  const origin = headers.origin;
  return origin !== undefined && origin !== 'null' && origin !== publicOrigin ? { by: 'origin', origin } : null;
}

/**
 * What every page and OAuth endpoint applies to a request, whichever edge serves it (oauth/,
 * sign-in/, console/): the Host rule ({@link hostRule}, the same function as /mcp's) and the
 * cross-site rule of form posts ({@link crossSite}). Each edge answers a refusal in its own shape.
 */
@Injectable()
export class PagePolicy {
  /** PUBLIC_URL's origin: the only site whose form posts count. */
  readonly publicOrigin: string;
  private readonly hostAllowedBy: (header: string | undefined) => boolean;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.publicOrigin = new URL(config.publicUrl).origin;
    this.hostAllowedBy = hostRule(config);
  }

  /** Whether the request's Host header may be served (the Host rule). */
  hostAllowed(header: string | undefined): boolean {
    return this.hostAllowedBy(header);
  }

  /** Why a form post comes from another site, or null when it does not. */
  crossSite(req: { headers: IncomingHttpHeaders }): CrossSite | null {
    return crossSite(req.headers, this.publicOrigin);
  }

  /** Whether a form post comes from another site. */
  crossSitePost(req: { headers: IncomingHttpHeaders }): boolean {
    return this.crossSite(req) !== null;
  }
}
