import { decodeJwt } from 'jose';
import { OAuthError } from '../oauth-error.js';

/** RFC 7523 §2.2: the `client_assertion_type` of a client that proves itself with a signed JWT (`private_key_jwt`). */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The client a token or revocation request names, and the secret it proves itself with (RFC 6749 §2.3.1). */
export interface ClientCredentials {
  clientId: string | undefined;
  secret: string | undefined;
  /** Sent as `Authorization: Basic`: a 401 then answers `WWW-Authenticate: Basic`. */
  basic: boolean;
  /** A `private_key_jwt` client's signed JWT (`client_assertion`), not yet verified. */
  assertion?: string;
}

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="reblog", charset="UTF-8"' };

/** `invalid_client` (401), with the Basic challenge when the client used the Authorization header (RFC 6749 §5.2). */
export function invalidClient(description: string, basic: boolean): OAuthError {
  return new OAuthError('invalid_client', description, 401, basic ? BASIC_CHALLENGE : {});
}

/** Reads the client's identity from `Authorization: Basic` (form-urlencoded id and secret) or the form's `client_id` / `client_secret`. */
export function clientCredentials(authorization: string | undefined, form: Record<string, unknown>): ClientCredentials {
  const bodyId = form.client_id;
  const bodySecret = form.client_secret;
  if (Array.isArray(bodyId) || Array.isArray(bodySecret)) throw new OAuthError('invalid_request', 'client_id and client_secret may be sent once each.');
  if (form.client_assertion !== undefined || form.client_assertion_type !== undefined) return assertionCredentials(authorization, form);
  if (!authorization?.toLowerCase().startsWith('basic ')) {
    return {
      clientId: typeof bodyId === 'string' ? bodyId : undefined,
      secret: typeof bodySecret === 'string' && bodySecret !== '' ? bodySecret : undefined,
      basic: false,
    };
  }
  const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('The Basic credentials are not "client_id:client_secret".', true);
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (typeof bodySecret === 'string')
    throw new OAuthError('invalid_request', 'Authenticate the client one way only: the Authorization header or client_secret, not both.');
  if (typeof bodyId === 'string' && bodyId !== clientId)
    throw new OAuthError('invalid_request', 'client_id differs from the client named in the Authorization header.');
  return { clientId, secret: secret || undefined, basic: true };
}

/**
 * A client that proves itself with a signed JWT (RFC 7523 §2.2, RFC 7521 §4.2): `client_assertion_type`
 * and `client_assertion`, and nothing else of client authentication; its `client_id`, when sent, must
 * be the assertion's `sub` (which names the client when it is not).
 */
function assertionCredentials(authorization: string | undefined, form: Record<string, unknown>): ClientCredentials {
  const { client_assertion: assertion, client_assertion_type: type, client_id: bodyId } = form;
  if (typeof assertion !== 'string' || typeof type !== 'string')
    throw new OAuthError('invalid_request', 'client_assertion and client_assertion_type are sent together, once each.');
  if (type !== CLIENT_ASSERTION_TYPE) throw new OAuthError('invalid_request', `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}.`);
  if (authorization?.toLowerCase().startsWith('basic ') || form.client_secret !== undefined) {
    throw new OAuthError('invalid_request', 'Authenticate the client one way only: client_assertion, or a secret, not both.');
  }
  let sub: unknown;
  try {
    sub = decodeJwt(assertion).sub;
  } catch {
    throw invalidClient('client_assertion is not a JWT.', false);
  }
  if (typeof sub !== 'string' || sub === '') throw invalidClient('client_assertion has no sub naming the client.', false);
  if (bodyId !== undefined && bodyId !== sub) throw new OAuthError('invalid_request', "client_id differs from the client_assertion's sub.");
  return { clientId: sub, secret: undefined, basic: false, assertion };
}

/** RFC 6749 §2.3.1 form-encodes id and secret before Basic; clients that do not are read as sent. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}
