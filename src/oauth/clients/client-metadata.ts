import { SCOPES } from '../../common/tool-names.js';
import { OAuthError } from '../oauth-error.js';
import type { TokenEndpointAuthMethod } from './oauth-client.js';
import { MAX_REDIRECT_URIS, redirectUriProblem } from './redirect-uris.js';

export const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ['none', 'client_secret_post', 'client_secret_basic'];
/** RFC 7523's grant type: an ID-JAG (docs/oauth.md#enterprise-managed-authorization) as the assertion. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const GRANT_TYPES = ['authorization_code', 'refresh_token', JWT_BEARER];
const URI_FIELDS = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const;
const TEXT_FIELDS = ['software_id', 'software_version'] as const;

/** A client's metadata once checked: what is stored and answered (RFC 7591 §2). */
export interface ClientMetadata {
  redirect_uris: string[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  grant_types: string[];
  response_types: string[];
  client_name?: string;
  scope?: string;
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
}

const invalid = (description: string) => new OAuthError('invalid_client_metadata', description);

/**
 * Checks a registration body (RFC 7591) or a Client ID Metadata Document: redirect URI problems are
 * `invalid_redirect_uri`, any other `invalid_client_metadata`. Fields this server does not use are
 * dropped; `null` counts as absent (some clients send it for what they leave out).
 */
export function checkClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The body must be a JSON object of client metadata (RFC 7591).');
  const input = body as Record<string, unknown>;
  const field = (name: string) => (input[name] === null ? undefined : input[name]);

  const uris = field('redirect_uris');
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris must list at least one redirect URI.');
  if (uris.length > MAX_REDIRECT_URIS)
    throw new OAuthError('invalid_redirect_uri', `redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs; got ${uris.length}.`);
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `Invalid redirect URI: ${problem}.`);
  }

  const method = field('token_endpoint_auth_method') ?? 'none';
  if (!AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    throw invalid(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}; got ${JSON.stringify(method)}.`);
  }
  const grantTypes = stringList(field('grant_types'), 'grant_types') ?? ['authorization_code', 'refresh_token'];
  const unsupported = grantTypes.filter((g) => !GRANT_TYPES.includes(g));
  if (unsupported.length) throw invalid(`grant_types may only hold ${GRANT_TYPES.join(', ')}; ${unsupported.join(', ')} is not supported.`);
  if (!grantTypes.includes('authorization_code'))
    throw invalid('grant_types must include authorization_code: every client here can be connected by consent (with jwt-bearer besides, for ID-JAGs).');
  const responseTypes = stringList(field('response_types'), 'response_types') ?? ['code'];
  if (responseTypes.some((r) => r !== 'code')) throw invalid('response_types may only hold "code".');

  const metadata: ClientMetadata = {
    redirect_uris: [...new Set(uris as string[])],
    token_endpoint_auth_method: method as TokenEndpointAuthMethod,
    grant_types: [...new Set(grantTypes)],
    response_types: ['code'],
  };
  const name = text(field('client_name'), 'client_name', 200);
  if (name !== undefined) metadata.client_name = name;
  const scope = text(field('scope'), 'scope', 1_000);
  if (scope !== undefined) {
    // Only the scopes this server knows are kept: authorize drops the others as well.
    const known = scope.split(' ').filter((s) => (SCOPES as readonly string[]).includes(s));
    if (known.length) metadata.scope = [...new Set(known)].join(' ');
  }
  for (const key of URI_FIELDS) {
    const value = text(field(key), key, 2_000);
    if (value === undefined) continue;
    if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) throw invalid(`${key} must be an http or https URL.`);
    metadata[key] = value;
  }
  for (const key of TEXT_FIELDS) {
    const value = text(field(key), key, 200);
    if (value !== undefined) metadata[key] = value;
  }
  const contacts = stringList(field('contacts'), 'contacts');
  if (contacts) metadata.contacts = contacts.slice(0, 10);
  return metadata;
}

function text(value: unknown, name: string, max: number): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(`${name} must be a string.`);
  if (value.length > max) throw invalid(`${name} is at most ${max} characters.`);
  return value;
}

function stringList(value: unknown, name: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw invalid(`${name} must be an array of strings.`);
  return value as string[];
}
