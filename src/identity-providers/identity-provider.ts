import { isLoopbackHttp } from '../common/safe-fetch.js';

export type PersonClaim = 'email' | 'sub';
export type UnknownPeople = 'refuse' | 'add';
export const PERSON_CLAIMS: readonly PersonClaim[] = ['email', 'sub'];
export const UNKNOWN_PEOPLE: readonly UnknownPeople[] = ['refuse', 'add'];

/** The stored row, secret and keys included: never answered as it is ({@link IdentityProviderView}). */
export interface IdentityProviderRow {
  id: string;
  account_id: string;
  issuer: string;
  person_claim: PersonClaim;
  unknown_people: UnknownPeople;
  oidc_client_id: string | null;
  oidc_client_secret: string | null;
  /** The discovery document as fetched. */
  metadata: Record<string, unknown>;
  /** The JSON Web Key Set at the document's `jwks_uri`, as last fetched. */
  jwks: { keys: Record<string, unknown>[] };
  jwks_fetched_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** An identity provider as the admin API and the console show it: no secret, whether one is set. */
export interface IdentityProviderView {
  id: string;
  account_id: string;
  issuer: string;
  person_claim: PersonClaim;
  unknown_people: UnknownPeople;
  oidc_client_id: string | null;
  oidc_client_secret_set: boolean;
  jwks_uri: string;
  /** The `kid`s of the keys last fetched. */
  key_ids: string[];
  jwks_fetched_at: Date;
  created_at: Date;
  updated_at: Date;
}

export function toView(idp: IdentityProviderRow): IdentityProviderView {
  return {
    id: idp.id,
    account_id: idp.account_id,
    issuer: idp.issuer,
    person_claim: idp.person_claim,
    unknown_people: idp.unknown_people,
    oidc_client_id: idp.oidc_client_id,
    oidc_client_secret_set: idp.oidc_client_secret !== null,
    jwks_uri: String(idp.metadata.jwks_uri),
    key_ids: (idp.jwks.keys ?? []).map((k) => k.kid).filter((kid): kid is string => typeof kid === 'string'),
    jwks_fetched_at: idp.jwks_fetched_at,
    created_at: idp.created_at,
    updated_at: idp.updated_at,
  };
}

/**
 * What is wrong with `issuer` as an identity provider's issuer, or null: an absolute https URL
 * without query or fragment (compared exactly as written, as OpenID Connect compares it). Plain http
 * only to a loopback host, and only where metadata documents may come from private networks
 * (OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS, never in production).
 */
export function issuerProblem(issuer: string, allowPrivateNetworks: boolean): string | null {
  if (issuer.length > 2_000) return 'it is longer than 2000 characters';
  if (!URL.canParse(issuer)) return 'it is not an absolute URL';
  const url = new URL(issuer);
  if (url.search || url.hash || issuer.includes('?') || issuer.includes('#')) return 'it has a query or a fragment';
  if (url.username || url.password) return 'it has a user name or password';
  if (url.protocol === 'https:') return null;
  if (allowPrivateNetworks && isLoopbackHttp(url)) return null;
  return 'it is not an https URL';
}
