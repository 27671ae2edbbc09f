import { SafeFetchError, safeFetchJson, type SafeFetchOptions } from '../common/safe-fetch.js';
import { DomainError } from '../common/domain-error.js';

/**
 * The most a discovery document or key set may weigh. The address rules and the way the size is
 * counted are those of client metadata documents; the limit is larger, since a real provider's keys
 * with their certificate chains (Entra ID's) or its discovery document (Okta's) are past 5 KiB.
 */
export const IDP_DOCUMENT_MAX_BYTES = 64 * 1024;

export interface Discovered {
  metadata: Record<string, unknown>;
  jwks: { keys: Record<string, unknown>[] };
}

/** A discovery that failed, in one sentence (the admin API answers it as a 422). */
const failed = (sentence: string) => new DomainError('unprocessable', sentence, { field: 'issuer' });

/** Where the discovery documents of `issuer` are: OpenID Connect's first, then RFC 8414's. */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return [`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${path}`];
}

/**
 * Fetches the provider's discovery document (`<issuer>/.well-known/openid-configuration`, else
 * RFC 8414's `/.well-known/oauth-authorization-server`), checks that it names `issuer` exactly, then
 * fetches its `jwks_uri`; every fetch under the rules of client metadata documents (public
 * addresses, no redirect, 5 s).
 */
export async function discover(issuer: string, options: SafeFetchOptions): Promise<Discovered> {
  const fetchOptions = { maxBytes: IDP_DOCUMENT_MAX_BYTES, purpose: 'identity provider discovery', ...options };
  let metadata: Record<string, unknown> | undefined;
  const reasons: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    try {
      const { body } = await safeFetchJson(url, fetchOptions);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        reasons.push(`${url} is not a JSON object`);
        continue;
      }
      metadata = body as Record<string, unknown>;
      break;
    } catch (err) {
      if (!(err instanceof SafeFetchError)) throw err;
      reasons.push(`${url}: ${err.message}`);
    }
  }
  if (!metadata) throw failed(`The discovery document of ${issuer} could not be fetched (${reasons.join('; ')}).`);
  if (metadata.issuer !== issuer) {
    throw failed(`The discovery document of ${issuer} names the issuer ${JSON.stringify(metadata.issuer)}; it must be exactly the issuer entered.`);
  }
  return { metadata, jwks: await fetchKeys(issuer, metadata, fetchOptions) };
}

/** The key set at the document's `jwks_uri`. */
export async function fetchKeys(issuer: string, metadata: Record<string, unknown>, options: SafeFetchOptions): Promise<Discovered['jwks']> {
  const jwksUri = metadata.jwks_uri;
  if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) throw failed(`The discovery document of ${issuer} has no jwks_uri.`);
  let body: unknown;
  try {
    ({ body } = await safeFetchJson(jwksUri, { maxBytes: IDP_DOCUMENT_MAX_BYTES, purpose: 'identity provider keys', ...options }));
  } catch (err) {
    if (!(err instanceof SafeFetchError)) throw err;
    throw failed(`The keys of ${issuer} (${jwksUri}) could not be fetched: ${err.message}.`);
  }
  const keys = (body as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'object' || k === null || Array.isArray(k))) {
    throw failed(`The keys of ${issuer} (${jwksUri}) are not a JSON Web Key Set (an object with a "keys" array).`);
  }
  // Only public keys are kept: a private member ("d", …) in a published set is dropped with its key.
  return { keys: (keys as Record<string, unknown>[]).filter((k) => !('d' in k) && !('k' in k)) };
}
