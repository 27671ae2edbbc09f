import { Inject, Injectable, Logger } from '@nestjs/common';
import { parse } from 'cookie';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { hashSecret, sameHash } from '../../auth/secrets.js';
import { checkedFetch } from '../../common/checked-fetch.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import { OIDC_CALLBACK_PATH } from '../../web/sign-in-paths.js';
import { refusedPage } from '../sign-in.pages.js';
import { OidcRepository, type PendingOidcSignIn } from './oidc.repository.js';

/** A sign-in must come back from the identity provider within 10 minutes. */
const PENDING_TTL_S = 600;
const STATE_COOKIE = 'rb_oidc_state';
const STATE = /^[A-Za-z0-9_-]{20,100}$/;
/** Seconds the provider may take to answer one request (discovery, token, userinfo). */
const PROVIDER_TIMEOUT_S = 10;
/** Configurations kept at most; past it the cache starts again (a provider changed often, or many accounts). */
const MAX_CACHED = 500;

/**
 * An identity provider people sign in through: the server-wide one (`OIDC_*`) or an account's own
 * (docs/oauth.md#sign-in-with-your-company).
 */
export interface OidcIssuer {
  /** Names its configuration in the cache: another key (an account's provider changed) is another configuration. */
  key: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** Its discovery document, when already fetched and kept (an account's provider); else it is discovered here. */
  metadata?: Record<string, unknown>;
  /**
   * Its endpoints come from a document another party serves (an account's provider, not the
   * operator's): the token and userinfo requests follow the address rules of that document's fetch.
   */
  addressChecked?: boolean;
}

/** The provider could not be reached (discovery failed): the caller answers its 503 page. */
export class ProviderUnreachable extends Error {}

/** What a verified answer of the provider says, with the pending sign-in it answers. */
export interface OidcAnswer {
  pending: PendingOidcSignIn;
  issuer: string;
  subject: string;
  /** Lower-cased; null when the provider told none (in the ID token or at its userinfo endpoint). */
  email: string | null;
  /** `email_verified` is `true` (the boolean), or Entra ID's `xms_edov` is. */
  verified: boolean;
}

/**
 * The OpenID Connect authorization code flow with PKCE, state and nonce (openid-client), for any
 * {@link OidcIssuer}; callback `GET /oauth/callback/oidc`, one for every provider.
 *
 * Between the start and the callback, the PKCE verifier, the nonce and what the sign-in is for (the
 * account's provider, the email typed) wait in a row of `oidc_sign_ins` keyed by the hash of the
 * state, so the callback may reach any instance; the browser holds the state in an HttpOnly cookie
 * scoped to the callback, and the callback's `state` must equal it, so an answer meant for one
 * browser cannot sign in another.
 */
@Injectable()
export class OidcFlow {
  private readonly log = new Logger('OidcSignIn');
  private readonly configurations = new Map<string, Promise<oidc.Configuration>>();
  private readonly secure: boolean;
  private readonly checkedFetch: ReturnType<typeof checkedFetch>;

  constructor(
    private readonly pending: OidcRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.secure = config.publicUrl.startsWith('https:');
    this.checkedFetch = checkedFetch({ allowPrivateNetworks: config.oauth.cimdAllowPrivateNetworks });
  }

  /**
   * Starts a sign-in at `issuer`: a pending row, the state cookie, and a 303 to the provider.
   * Throws {@link ProviderUnreachable} when its configuration cannot be had.
   */
  async begin(res: Response, issuer: OidcIssuer, pending: Omit<PendingOidcSignIn, 'code_verifier' | 'nonce'>): Promise<void> {
    const provider = await this.configuration(issuer);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    await this.pending.purgeExpired();
    await this.pending.insert(hashSecret(state), { ...pending, code_verifier: verifier, nonce }, PENDING_TTL_S);
    res.cookie(STATE_COOKIE, state, { httpOnly: true, sameSite: 'lax', path: OIDC_CALLBACK_PATH, secure: this.secure, maxAge: PENDING_TTL_S * 1000 });
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: this.config.publicUrl + OIDC_CALLBACK_PATH,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    res.redirect(303, url.href);
  }

  /**
   * `GET /oauth/callback/oidc`: checks the answer (state against this browser's cookie and the pending
   * row, the code with the PKCE verifier, the ID token with the nonce) at the provider the sign-in
   * started with (`issuerOf`), and answers what it says. Sends the refusal page and answers null
   * when anything is wrong.
   */
  async finish(req: Request, res: Response, issuerOf: (pending: PendingOidcSignIn) => Promise<OidcIssuer | null>): Promise<OidcAnswer | null> {
    const state = req.query.state;
    const cookie = parse(req.headers.cookie ?? '')[STATE_COOKIE];
    res.clearCookie(STATE_COOKIE, { httpOnly: true, sameSite: 'lax', path: OIDC_CALLBACK_PATH, secure: this.secure });
    if (typeof state !== 'string' || !STATE.test(state) || !cookie || !sameHash(hashSecret(state), hashSecret(cookie))) {
      return this.refuse(res, 400, 'This sign-in did not start in this browser, or it was started again in another tab. Start again.');
    }
    const pending = await this.pending.consume(hashSecret(state));
    if (!pending) return this.refuse(res, 400, 'This sign-in took more than 10 minutes or was used already. Start again.');
    if (typeof req.query.error === 'string') {
      const said = typeof req.query.error_description === 'string' ? req.query.error_description : req.query.error;
      return this.refuse(res, 400, `Your identity provider did not sign you in: ${said.slice(0, 300)}`);
    }
    const issuer = await issuerOf(pending);
    if (!issuer) return this.refuse(res, 400, 'The identity provider this sign-in started with is no longer set up here. Start again.');
    let provider: oidc.Configuration;
    try {
      provider = await this.configuration(issuer);
    } catch {
      return this.unreachable(res);
    }

    let claims: oidc.IDToken;
    let accessToken: string;
    try {
      const tokens = await oidc.authorizationCodeGrant(provider, new URL(this.config.publicUrl + req.originalUrl), {
        pkceCodeVerifier: pending.code_verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
      accessToken = tokens.access_token;
    } catch (err) {
      this.log.warn(`OIDC code exchange refused: ${reason(err)}`);
      return this.refuse(res, 400, 'The answer of your identity provider could not be verified. Start again.');
    }
    const { email, verified } = await this.email(provider, claims, accessToken);
    return { pending, issuer: claims.iss, subject: claims.sub, email, verified };
  }

  /** The 503 page of a provider that cannot be reached. */
  unreachable(res: Response): null {
    return this.refuse(res, 503, 'Your identity provider cannot be reached right now. Try again in a minute.');
  }

  /** The refusal page of a sign-in (a 403 says the person cannot fix it by starting again). */
  refuse(res: Response, status: number, message: string): null {
    refusedPage(res, { title: status === 403 ? 'Not signed in' : 'Sign-in failed', status, message, again: status !== 403 });
    return null;
  }

  /** The email and whether the provider verified it: from the ID token, else from the userinfo endpoint. */
  private async email(provider: oidc.Configuration, claims: oidc.IDToken, accessToken: string): Promise<{ email: string | null; verified: boolean }> {
    let { email, email_verified } = claims as { email?: unknown; email_verified?: unknown };
    // Microsoft Entra ID sends no email_verified; its optional claim xms_edov says the email's domain is the tenant's, verified.
    const domainVerified = (claims as { xms_edov?: unknown }).xms_edov === true;
    if ((email === undefined || email_verified === undefined) && provider.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(provider, accessToken, claims.sub);
        email ??= info.email;
        email_verified ??= info.email_verified;
      } catch (err) {
        this.log.warn(`OIDC userinfo failed: ${reason(err)}`);
      }
    }
    return { email: typeof email === 'string' && email.includes('@') ? email.trim().toLowerCase() : null, verified: email_verified === true || domainVerified };
  }

  /**
   * The provider's configuration: from its kept discovery document, or discovered once (again after a
   * failure). Throws {@link ProviderUnreachable} when discovery fails.
   */
  private async configuration(issuer: OidcIssuer): Promise<oidc.Configuration> {
    let configuration = this.configurations.get(issuer.key);
    if (!configuration) {
      if (this.configurations.size >= MAX_CACHED) this.configurations.clear();
      // An http:// issuer is the operator's or the registry's choice (both accept it only on loopback or when told to): tests, a provider on this host.
      const insecure = issuer.issuer.startsWith('http:');
      configuration = issuer.metadata
        ? Promise.resolve(this.fromMetadata(issuer, insecure))
        : oidc.discovery(new URL(issuer.issuer), issuer.clientId, issuer.clientSecret, undefined, {
            timeout: PROVIDER_TIMEOUT_S,
            execute: insecure ? [oidc.allowInsecureRequests] : [],
          });
      this.configurations.set(issuer.key, configuration);
    }
    try {
      return await configuration;
    } catch (err) {
      this.configurations.delete(issuer.key);
      this.log.warn(`OIDC discovery of ${issuer.issuer} failed: ${reason(err)}`);
      throw new ProviderUnreachable(reason(err));
    }
  }

  private fromMetadata(issuer: OidcIssuer, insecure: boolean): oidc.Configuration {
    const configuration = new oidc.Configuration(issuer.metadata as unknown as oidc.ServerMetadata, issuer.clientId, issuer.clientSecret);
    configuration.timeout = PROVIDER_TIMEOUT_S;
    if (insecure) oidc.allowInsecureRequests(configuration);
    if (issuer.addressChecked) configuration[oidc.customFetch] = this.checkedFetch;
    return configuration;
  }
}

/** An error's message with its cause's (openid-client wraps network failures as "something went wrong"). */
function reason(err: unknown): string {
  const cause = (err as Error).cause;
  return cause instanceof Error ? `${(err as Error).message} (${cause.message})` : (err as Error).message;
}
