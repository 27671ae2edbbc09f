import { Injectable } from '@nestjs/common';
import { createLocalJWKSet, decodeJwt, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { SCOPES, type Scope } from '../common/tool-names.js';
import { MembershipsService } from '../people/memberships.service.js';
import { PeopleService } from '../people/people.service.js';
import type { User } from '../users/user.js';
import { UsersService } from '../users/users.service.js';
import { IdJagUsesRepository } from './id-jag-uses.repository.js';
import type { IdentityProviderRow } from './identity-provider.js';
import { IdentityProvidersService } from './identity-providers.service.js';

/** The `typ` header of an Identity Assertion JWT Authorization Grant. */
export const ID_JAG_TYP = 'oauth-id-jag+jwt';
/** How far the identity provider's clock may be from ours, both ways, for `exp` and `iat`. */
export const ID_JAG_CLOCK_SKEW_S = 60;
/** The oldest ID-JAG taken, by its `iat` (plus the skew). */
export const ID_JAG_MAX_AGE_S = 300;
/** Asymmetric signatures only (of ID-JAGs and client assertions): a shared-secret (HS*) one could be made by anyone holding the secret. */
export const ASSERTION_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const ALGORITHMS = [...ASSERTION_ALGORITHMS];

/** Why an ID-JAG is refused, as RFC 6749 §5.2 names it, with a sentence naming the failed check. */
export class IdJagRefusal extends Error {
  override name = 'IdJagRefusal';
  constructor(
    readonly error: 'invalid_grant' | 'invalid_scope',
    message: string,
  ) {
    super(message);
  }
}
const refuse = (message: string) => new IdJagRefusal('invalid_grant', message);

/** What the token request must match: this server's issuer, the authenticated client, the MCP resource. */
export interface IdJagExpectations {
  audience: string;
  clientId: string;
  resource: string;
}

/** An ID-JAG once verified. */
export interface VerifiedIdJag {
  issuer: string;
  subject: string;
  email: string | null;
  jti: string;
  expiresAt: Date;
  /** Its `scope` claim; null when it has none. */
  scopes: Scope[] | null;
  /** The providers (one per account) that trust its issuer, oldest first. */
  providers: IdentityProviderRow[];
}

/** Whom an enterprise grant is for: the person and the account (through its provider). */
export interface EnterpriseGrantee {
  provider: IdentityProviderRow;
  user: User;
}

/**
 * Enterprise-managed authorization (docs/oauth.md#enterprise-managed-authorization): verifies an
 * ID-JAG against the identity providers the accounts trust, keeps its `jti` from being used twice,
 * and finds the person it names in an account that trusts its issuer.
 */
@Injectable()
export class EnterpriseAccessService {
  constructor(
    private readonly providers: IdentityProvidersService,
    private readonly uses: IdJagUsesRepository,
    private readonly users: UsersService,
    private readonly people: PeopleService,
    private readonly memberships: MembershipsService,
  ) {}

  /**
   * Checks, in order: a JWT whose `iss` an account trusts; its signature by one of that provider's
   * keys (a `kid` none has fetches them again, at most once a minute); `typ`; `aud` this server;
   * `exp` ahead and `iat` within {@link ID_JAG_MAX_AGE_S} (±{@link ID_JAG_CLOCK_SKEW_S}); `client_id`
   * the authenticated client; `resource`, when present, the MCP endpoint; `scope` within ours; and
   * last its `jti`, which is then spent whatever follows.
   */
  async verify(assertion: string, expected: IdJagExpectations): Promise<VerifiedIdJag> {
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(assertion);
    } catch {
      throw refuse('The assertion is not a JWT.');
    }
    const issuer = unverified.iss;
    if (typeof issuer !== 'string' || issuer === '') throw refuse('The ID-JAG has no iss claim.');
    let providers = await this.providers.byIssuer(issuer);
    if (!providers.length) throw refuse(`The ID-JAG's issuer ${issuer} is not an identity provider that any account here trusts.`);

    let payload: JWTPayload;
    try {
      payload = await this.verifySignature(assertion, providers, expected.audience);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || !(await this.providers.refreshKeys(issuer))) throw this.refusal(err, issuer, expected.audience);
      providers = await this.providers.byIssuer(issuer);
      try {
        payload = await this.verifySignature(assertion, providers, expected.audience);
      } catch (again) {
        throw this.refusal(again, issuer, expected.audience);
      }
    }

    if (payload.client_id !== expected.clientId) {
      throw refuse(`The ID-JAG was issued to the client ${JSON.stringify(payload.client_id)}, not to the client that sent it.`);
    }
    if (payload.resource !== undefined && payload.resource !== expected.resource) {
      throw refuse(`The ID-JAG's resource is ${JSON.stringify(payload.resource)}; this server's MCP endpoint is ${expected.resource}.`);
    }
    const scopes = scopeClaim(payload.scope);
    const jti = payload.jti;
    if (typeof jti !== 'string' || jti === '' || jti.length > 255) throw refuse('The ID-JAG has no usable jti claim (a string of 1 to 255 characters).');
    if (typeof payload.sub !== 'string' || payload.sub === '') throw refuse('The ID-JAG has no sub claim.');
    const expiresAt = new Date((payload.exp as number) * 1000);
    if (!(await this.uses.use(issuer, jti, expiresAt)))
      throw refuse(`The ID-JAG (jti ${JSON.stringify(jti)}) was exchanged already; ask the identity provider for a new one.`);
    return {
      issuer,
      subject: payload.sub,
      email: typeof payload.email === 'string' && payload.email !== '' ? payload.email.toLowerCase() : null,
      jti,
      expiresAt,
      scopes,
      providers,
    };
  }

  /**
   * The person the ID-JAG names, by the rule of each account that trusts its issuer (oldest first):
   * its `email` claim, or its issuer and `sub` bound by OIDC sign-in. The first account they are a
   * member of is the grant's; a disabled person is refused. A person no such account has is refused,
   * unless one of them adds unknown people: then they join it as a member with no project role
   * (and, named by email and unknown to this server, are created first).
   */
  async grantee(idJag: VerifiedIdJag): Promise<EnterpriseGrantee> {
    const found = new Map<IdentityProviderRow, User | null>();
    for (const provider of idJag.providers) {
      const user = await this.person(provider, idJag);
      found.set(provider, user);
      if (!user) continue;
      const member = (await this.users.memberships(user.id)).some((m) => m.account_id === provider.account_id);
      if (!member) continue;
      if (user.disabled_at) throw refuse(`The person ${user.email} is disabled here.`);
      return { provider, user };
    }
    const adding = idJag.providers.find((p) => p.unknown_people === 'add' && (found.get(p) || (p.person_claim === 'email' && idJag.email)));
    if (adding) {
      const user = found.get(adding) ?? (await this.people.findOrCreate(idJag.email!));
      if (user.disabled_at) throw refuse(`The person ${user.email} is disabled here.`);
      await this.memberships.putAccountMember(adding.account_id, user.id, 'member');
      return { provider: adding, user };
    }
    const byEmail = idJag.providers.every((p) => p.person_claim === 'email');
    if (byEmail && !idJag.email) throw refuse(`The ID-JAG has no email claim, and ${idJag.issuer} names people by email here.`);
    const who = byEmail ? `email ${idJag.email}` : `sub ${JSON.stringify(idJag.subject)}`;
    throw refuse(`The person the ID-JAG names (${who}) is not a member of an account that trusts ${idJag.issuer}.`);
  }

  /**
   * Spends the `jti` of an assertion of `issuer` until `expiresAt` (an ID-JAG's, or a client's own
   * `private_key_jwt` assertion, whose issuer is its client id); false when it was spent already.
   */
  spend(issuer: string, jti: string, expiresAt: Date): Promise<boolean> {
    return this.uses.use(issuer, jti, expiresAt);
  }

  /** Deletes the records of assertions expired for 5 minutes, up to `limit`. */
  purgeUses(limit: number): Promise<number> {
    return this.uses.purge(limit);
  }

  private person(provider: IdentityProviderRow, idJag: VerifiedIdJag): Promise<User | null> {
    if (provider.person_claim === 'sub') return this.users.findByOidcSubject(idJag.issuer, idJag.subject);
    return idJag.email ? this.users.findByEmail(idJag.email) : Promise.resolve(null);
  }

  /** Verifies with the keys the rows of one issuer hold (each account's row was fetched at its own time). */
  private async verifySignature(assertion: string, providers: IdentityProviderRow[], audience: string): Promise<JWTPayload> {
    const keys = new Map<string, JSONWebKeySet['keys'][number]>();
    for (const provider of providers) for (const key of provider.jwks.keys) keys.set(JSON.stringify(key), key as JSONWebKeySet['keys'][number]);
    const { payload } = await jwtVerify(assertion, createLocalJWKSet({ keys: [...keys.values()] }), {
      algorithms: ALGORITHMS,
      typ: ID_JAG_TYP,
      issuer: providers[0].issuer,
      audience,
      clockTolerance: ID_JAG_CLOCK_SKEW_S,
      maxTokenAge: ID_JAG_MAX_AGE_S,
      requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
    });
    return payload;
  }

  /** A verification error of jose as the sentence of an `invalid_grant`. */
  private refusal(err: unknown, issuer: string, audience: string): IdJagRefusal {
    if (err instanceof errors.JWKSNoMatchingKey) return refuse(`The ID-JAG is signed with a key that is not among the keys of ${issuer}.`);
    if (err instanceof errors.JWSSignatureVerificationFailed) return refuse(`The ID-JAG's signature does not verify with the keys of ${issuer}.`);
    if (err instanceof errors.JOSEAlgNotAllowed) return refuse(`The ID-JAG's alg is not allowed: it must be signed with ${ALGORITHMS.join(', ')}.`);
    if (err instanceof errors.JWTExpired) {
      return err.claim === 'iat' ? refuse(`The ID-JAG was issued more than ${ID_JAG_MAX_AGE_S} s ago (iat).`) : refuse('The ID-JAG has expired (exp).');
    }
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'typ') return refuse(`The ID-JAG's typ header must be ${ID_JAG_TYP}.`);
      if (err.claim === 'aud') return refuse(`The ID-JAG's aud must be this server's issuer, ${audience}.`);
      if (err.claim === 'iat') return refuse(`The ID-JAG's iat is in the future (more than ${ID_JAG_CLOCK_SKEW_S} s ahead).`);
      if (err.reason === 'missing') return refuse(`The ID-JAG has no ${err.claim} claim.`);
      return refuse(`The ID-JAG's ${err.claim} claim is not valid (${err.message}).`);
    }
    if (err instanceof errors.JOSEError) return refuse(`The ID-JAG could not be verified (${err.message}).`);
    throw err;
  }
}

/** The `scope` claim as our scopes; one we do not have is `invalid_scope`. */
function scopeClaim(scope: unknown): Scope[] | null {
  if (scope === undefined) return null;
  if (typeof scope !== 'string') throw refuse("The ID-JAG's scope claim must be a string of space-separated scopes.");
  const asked = scope.split(' ').filter(Boolean);
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length)
    throw new IdJagRefusal('invalid_scope', `The ID-JAG's scope holds ${unknown.join(', ')}, which this server does not have (${SCOPES.join(' ')}).`);
  return SCOPES.filter((s) => asked.includes(s));
}
