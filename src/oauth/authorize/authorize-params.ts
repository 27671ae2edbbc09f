import { SCOPES, type Scope } from '../../common/tool-names.js';

/** One value of a query or form field: undefined when absent, null when sent more than once. */
export function single(value: unknown): string | undefined | null {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : null;
}

/** Every value of a repeated form field (`scope`, `project`), strings only. */
export function many(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * The scopes of an authorize request: none asked means all four; unknown ones are dropped; null
 * when every one asked is unknown (`invalid_scope`). Answered in the canonical order.
 */
export function requestedScopes(scope: string | undefined): Scope[] | null {
  if (scope === undefined || scope.trim() === '') return [...SCOPES];
  const asked = new Set(scope.split(' '));
  const known = SCOPES.filter((s) => asked.has(s));
  return known.length ? known : null;
}

/** The longest `state` kept with a request, in UTF-8 bytes: clients send a nonce or a short encoded value. */
export const MAX_STATE_BYTES = 1024;

/** PKCE (RFC 7636 §4.2): a base64url S256 challenge is 43 characters; the rule allows 43 to 128 unreserved ones. */
export const CODE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * The resource indicator (RFC 8707) of this server that `value` names, in its canonical spelling:
 * `<PUBLIC_URL>/mcp` or `<PUBLIC_URL>`, the host in any case, a trailing `/` ignored; null for any other.
 */
export function canonicalResource(value: string, publicUrl: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  const base = new URL(publicUrl);
  if (url.search || value.includes('#') || url.username || url.password || url.protocol !== base.protocol || url.host !== base.host) return null;
  const path = url.pathname.replace(/\/+$/, '');
  const root = base.pathname.replace(/\/+$/, '');
  if (path === root) return publicUrl;
  if (path === `${root}/mcp`) return `${publicUrl}/mcp`;
  return null;
}

/** `uri` with these parameters added to its query (the registered URI is kept exactly as written). */
export function withQuery(uri: string, params: Record<string, string | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) query.append(k, v);
  return `${uri}${uri.includes('?') ? '&' : '?'}${query}`;
}
