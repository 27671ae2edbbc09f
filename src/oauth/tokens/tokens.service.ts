import { setAuditActor } from '../../audit/audit-context.js';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { CredentialsService } from '../../auth/credentials.service.js';
import { GRANT_PREFIX, hashSecret, newSecret, sameHash } from '../../auth/secrets.js';
import { SCOPES, type Scope } from '../../common/tool-names.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import { canonicalResource, single } from '../authorize/authorize-params.js';
import { JWT_BEARER } from '../clients/client-metadata.js';
import type { OAuthClient } from '../clients/oauth-client.js';
import { OAuthClientsService, UnknownClientError } from '../clients/oauth-clients.service.js';
import { OAuthError } from '../oauth-error.js';
import { clientCredentials, invalidClient } from './client-auth.js';
import { GrantsRepository } from './grants.repository.js';
import { EnterpriseAccessService, IdJagRefusal, type EnterpriseGrantee, type VerifiedIdJag } from '../../identity-providers/enterprise-access.service.js';
import { UsersService } from '../../users/users.service.js';

export const REFRESH_PREFIX = 'rbr_';
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** The answer of a successful token request (RFC 6749 §5.1). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** None for a grant made from an ID-JAG: the client asks its identity provider for a new one. */
  refresh_token?: string;
  scope: string;
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** What a transaction decided that must be answered after it commits: a revocation made, then refused. */
type Outcome<T> = { ok: T } | { revoked: OAuthError };

/**
 * `POST /oauth/token` and `POST /oauth/revoke` (docs/oauth.md#tokens, docs/oauth.md#revoke). A code becomes a grant, the
 * product's own credential record (type `grant`, source `oauth`, no secret of its own), with an
 * access and a refresh token kept as hashes; refresh tokens rotate. Each exchange or refresh runs
 * in one transaction holding the rows it reads. The grant itself is made, narrowed and revoked by
 * CredentialsService, in that transaction; every instance hears of it when it commits.
 */
@Injectable()
export class TokensService {
  private readonly issuer: string;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly clients: OAuthClientsService,
    private readonly credentials: CredentialsService,
    private readonly grants: GrantsRepository,
    private readonly enterprise: EnterpriseAccessService,
    private readonly users: UsersService,
  ) {
    this.issuer = config.publicUrl;
  }

  async token(form: Record<string, unknown>, authorization: string | undefined): Promise<TokenAnswer> {
    const repeated = Object.entries(form).find(([, v]) => typeof v !== 'string');
    if (repeated) throw new OAuthError('invalid_request', `The parameter ${repeated[0]} is sent more than once.`);
    const grantType = form.grant_type;
    if (!grantType) throw new OAuthError('invalid_request', 'grant_type is missing.');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token' && grantType !== JWT_BEARER) {
      throw new OAuthError('unsupported_grant_type', `grant_type must be authorization_code, refresh_token or ${JWT_BEARER}.`);
    }
    const client = await this.authenticate(clientCredentials(authorization, form));
    // What a token request revokes (a replayed code or refresh token), the client's request does.
    setAuditActor({ type: 'client', id: client.id });
    if (grantType === JWT_BEARER) return this.jwtBearer(client, form as Record<string, string>);
    return grantType === 'authorization_code' ? this.exchange(client, form as Record<string, string>) : this.refresh(client, form as Record<string, string>);
  }

  /**
   * RFC 7009: either token revokes its whole grant (`user`); an unknown token, or another client's,
   * changes nothing. The client is authenticated first, as at the token endpoint (§2.1): one that
   * names itself (client_id or Basic) must prove it, and a confidential
   * client's token is revoked only by that client, authenticated; a public client's token alone will do.
   */
  async revoke(form: Record<string, unknown>, authorization: string | undefined): Promise<Record<string, never>> {
    const credentials = clientCredentials(authorization, form);
    const client = credentials.clientId !== undefined || credentials.basic ? await this.authenticate(credentials) : null;
    const token = single(form.token);
    if (!token) throw new OAuthError('invalid_request', token === null ? 'token is sent more than once.' : 'token is missing.');
    const found = await this.grants.findToken(hashSecret(token));
    if (!found) return {};
    if (!client && found.client_auth_method && found.client_auth_method !== 'none') {
      throw invalidClient(`This token was issued to a confidential client: authenticate as that client (${found.client_auth_method}) to revoke it.`, false);
    }
    if (client && client.id !== found.client_id) return {};
    setAuditActor({ type: 'client', id: found.client_id });
    await this.credentials.revokeGrant(found.credential_id, 'user');
    return {};
  }

  /**
   * The client, authenticated: a confidential one by its secret, in the Authorization header or in
   * the form (either is accepted whichever it registered: the secret proves the client the same way,
   * and clients that pick the other one exist), a public one by its id alone.
   */
  private async authenticate({ clientId, secret, basic }: ReturnType<typeof clientCredentials>): Promise<OAuthClient> {
    if (!clientId) throw invalidClient('Name the client: client_id, or the Authorization header for a confidential client.', basic);
    let client: OAuthClient;
    try {
      client = await this.clients.resolve(clientId);
    } catch (err) {
      if (err instanceof UnknownClientError) throw invalidClient(err.message, basic);
      throw err;
    }
    const method = client.token_endpoint_auth_method;
    if (method === 'none') {
      if (secret) throw invalidClient('This client is public (token_endpoint_auth_method none): it has no secret to send.', basic);
      return client;
    }
    if (!secret) throw invalidClient(`This client authenticates with its secret (${method}).`, basic);
    if (!client.secret_hash || !sameHash(hashSecret(secret), client.secret_hash)) throw invalidClient('The client secret is wrong.', basic);
    return client;
  }

  private async exchange(client: OAuthClient, form: Record<string, string>): Promise<TokenAnswer> {
    const { code, code_verifier: verifier, redirect_uri: redirectUri, resource } = form;
    if (!code) throw new OAuthError('invalid_request', 'code is missing.');
    if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is missing (PKCE is required).');
    if (!CODE_VERIFIER.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9 and -._~.');
    if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is missing.');
    const codeHash = hashSecret(code);

    const outcome = await this.db.transaction(async (tx): Promise<Outcome<TokenAnswer>> => {
      const found = await this.grants.findCodeForUpdate(codeHash, tx);
      if (!found) throw invalidGrant('The code is unknown.');
      if (found.used_at) {
        // RFC 6749 §4.1.2: a code used twice may have been stolen; the grant it made goes too.
        if (found.credential_id) await this.credentials.revokeGrant(found.credential_id, 'code_replay', tx);
        return { revoked: invalidGrant('The code was used already; the grant it made is now revoked.') };
      }
      if (found.expired) throw invalidGrant('The code has expired (codes live 2 minutes).');
      if (found.client_id !== client.id) throw invalidGrant('The code was issued to another client.');
      if (found.redirect_uri !== redirectUri) throw invalidGrant('redirect_uri differs from the one of the authorize request.');
      const computed = createHash('sha256').update(verifier).digest();
      if (!sameHash(computed, Buffer.from(found.code_challenge, 'base64url'))) throw invalidGrant('code_verifier does not match the code_challenge (PKCE).');
      if (resource !== undefined && (canonicalResource(resource, this.issuer) ?? resource) !== found.resource) {
        throw invalidGrant('resource differs from the one the code was issued for.');
      }
      if (found.user_disabled) throw invalidGrant('The person who consented is disabled.');

      const access = newSecret(GRANT_PREFIX);
      const grant = await this.credentials.createGrant(
        {
          accountId: found.account_id,
          userId: found.user_id,
          clientId: client.id,
          name: clientName(client),
          scopes: found.scopes,
          projects: found.projects,
          secretPrefix: access.visiblePrefix,
          via: 'consent',
        },
        tx,
      );
      await this.grants.markCodeUsed(codeHash, grant.id, tx);
      await this.clients.touch(client.id, tx);
      return { ok: await this.issue(grant.id, client.id, found.scopes, tx, access) };
    });
    return this.settle(outcome);
  }

  private async refresh(client: OAuthClient, form: Record<string, string>): Promise<TokenAnswer> {
    const { refresh_token: token, scope } = form;
    if (!token) throw new OAuthError('invalid_request', 'refresh_token is missing.');
    const tokenHash = hashSecret(token);
    let narrowed = false;

    const outcome = await this.db.transaction(async (tx): Promise<Outcome<TokenAnswer>> => {
      const found = await this.grants.findRefreshForUpdate(tokenHash, this.config.oauth.refreshReuseGraceS, tx);
      if (!found) throw invalidGrant('The refresh token is unknown.');
      if (found.revoked) throw invalidGrant('The grant of this refresh token is revoked.');
      if (found.client_id !== client.id) throw invalidGrant('The refresh token was issued to another client.');
      if (found.user_disabled) throw invalidGrant('The person of this grant is disabled.');
      if (found.expired) throw invalidGrant('The refresh token has expired (unused too long); connect again.');
      if (found.rotated && !found.within_grace) {
        // Presented again after the grace: someone else holds a copy. The whole grant goes.
        await this.credentials.revokeGrant(found.credential_id, 'refresh_token_reuse', tx);
        return { revoked: invalidGrant('The refresh token was used already; the grant is now revoked. Connect again.') };
      }
      // Within the grace a rotated token gets a pair of its own (clients refresh in parallel); the winner's pair stays valid.
      if (!found.rotated) await this.grants.rotate(tokenHash, tx);

      let scopes = found.scopes;
      if (scope !== undefined && scope.trim() !== '') {
        const asked = new Set(scope.split(' ').filter(Boolean));
        const wider = [...asked].filter((s) => !found.scopes.includes(s as Scope));
        if (wider.length) throw new OAuthError('invalid_scope', `The grant does not have ${wider.join(', ')}: a refresh may only narrow it.`);
        const fewer = SCOPES.filter((s) => asked.has(s));
        if (fewer.length < found.scopes.length) {
          await this.credentials.narrowGrant(found.credential_id, fewer, tx);
          scopes = fewer;
          narrowed = true;
        }
      }
      await this.clients.touch(client.id, tx);
      return { ok: await this.issue(found.credential_id, client.id, scopes, tx) };
    });
    // Narrower scopes apply to the grant's live access tokens too: answer once this instance heard it.
    if (narrowed) await this.credentials.settled();
    return this.settle(outcome);
  }

  /**
   * RFC 7523 with an ID-JAG (docs/oauth.md#enterprise-managed-authorization): the client registered
   * for this grant type, the ID-JAG verified and its `jti` spent, the person found in an account that
   * trusts its issuer. The grant is an OAuth grant like a consented one (`via: "enterprise"`), on the
   * projects where the person has a role, at that role, with the requested scopes that the ID-JAG
   * allows; an access token only.
   */
  private async jwtBearer(client: OAuthClient, form: Record<string, string>): Promise<TokenAnswer> {
    const grantTypes = client.metadata.grant_types;
    if (!Array.isArray(grantTypes) || !grantTypes.includes(JWT_BEARER)) {
      throw new OAuthError('unauthorized_client', `This client is not registered for the ${JWT_BEARER} grant: its grant_types must include it.`);
    }
    const { assertion, scope } = form;
    if (!assertion) throw new OAuthError('invalid_request', 'assertion is missing: send the ID-JAG as assertion.');
    const asked = scope?.trim() ? [...new Set(scope.split(' ').filter(Boolean))] : null;
    const unknown = asked?.filter((s) => !(SCOPES as readonly string[]).includes(s)) ?? [];
    if (unknown.length) throw new OAuthError('invalid_scope', `scope holds ${unknown.join(', ')}, which this server does not have (${SCOPES.join(' ')}).`);

    let idJag: VerifiedIdJag;
    let grantee: EnterpriseGrantee;
    try {
      idJag = await this.enterprise.verify(assertion, { audience: this.issuer, clientId: client.id, resource: `${this.issuer}/mcp` });
      grantee = await this.enterprise.grantee(idJag);
    } catch (err) {
      if (err instanceof IdJagRefusal) throw new OAuthError(err.error, err.message);
      throw err;
    }
    const allowed = idJag.scopes ?? [...SCOPES];
    const scopes = SCOPES.filter((s) => allowed.includes(s) && (asked === null || asked.includes(s)));
    if (!scopes.length)
      throw new OAuthError('invalid_scope', `None of the scopes asked for (${asked!.join(' ')}) is in the ID-JAG's scope (${allowed.join(' ')}).`);
    const accountId = grantee.provider.account_id;
    const projects = (await this.users.projectRoles(grantee.user.id, accountId)).map((p) => ({ project_id: p.project_id, role: p.role }));

    const access = newSecret(GRANT_PREFIX);
    const answer = await this.db.transaction(async (tx) => {
      const grant = await this.credentials.createGrant(
        {
          accountId,
          userId: grantee.user.id,
          clientId: client.id,
          name: clientName(client),
          scopes,
          projects,
          secretPrefix: access.visiblePrefix,
          via: 'enterprise',
          issuer: idJag.issuer,
        },
        tx,
      );
      await this.clients.touch(client.id, tx);
      const { accessTokenTtlS } = this.config.oauth;
      await this.grants.insertToken(access.hash, grant.id, 'access', client.id, accessTokenTtlS, tx);
      return { access_token: access.secret, token_type: 'Bearer' as const, expires_in: accessTokenTtlS, scope: scopes.join(' ') };
    });
    return answer;
  }

  /** A new access and refresh token of a grant, stored as hashes. */
  private async issue(credentialId: string, clientId: string, scopes: Scope[], tx: EntityManager, access = newSecret(GRANT_PREFIX)): Promise<TokenAnswer> {
    const refresh = newSecret(REFRESH_PREFIX);
    const { accessTokenTtlS, refreshTokenTtlS } = this.config.oauth;
    await this.grants.insertToken(access.hash, credentialId, 'access', clientId, accessTokenTtlS, tx);
    await this.grants.insertToken(refresh.hash, credentialId, 'refresh', clientId, refreshTokenTtlS, tx);
    return { access_token: access.secret, token_type: 'Bearer', expires_in: accessTokenTtlS, refresh_token: refresh.secret, scope: scopes.join(' ') };
  }

  /** Answers a committed outcome: the tokens, or (a grant having been revoked) the refusal once this instance heard of it. */
  private async settle(outcome: Outcome<TokenAnswer>): Promise<TokenAnswer> {
    if ('ok' in outcome) return outcome.ok;
    await this.credentials.settled();
    throw outcome.revoked;
  }
}

/** The grant's name: the client's name (activity entries and grant lists show it). */
export function clientName(client: OAuthClient): string {
  return client.client_name ?? (client.source === 'cimd' ? new URL(client.id).host : 'OAuth client');
}
