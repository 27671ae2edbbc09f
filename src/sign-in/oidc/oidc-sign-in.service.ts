import { Inject, Injectable, Logger } from '@nestjs/common';
import { parse } from 'cookie';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import { hashSecret, sameHash } from '../../auth/secrets.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import { BrowserSessionsService } from '../../web/browser-sessions.service.js';
import { returnToOrDefault, safeReturnTo } from '../../login-links/return-to.js';
import { refusedPage } from '../sign-in.pages.js';
import { SignInService } from '../sign-in.service.js';
import { OidcRepository } from './oidc.repository.js';

/** A sign-in must come back from the identity provider within 10 minutes. */
const PENDING_TTL_S = 600;
const STATE_COOKIE = 'rb_oidc_state';
const CALLBACK_PATH = '/oauth/callback/oidc';
const STATE = /^[A-Za-z0-9_-]{20,100}$/;
/** Seconds the provider may take to answer one request (discovery, token, userinfo). */
const PROVIDER_TIMEOUT_S = 10;

/**
 * `oidc` sign-in (docs/oauth.md#sign-in-with-an-identity-provider-oidc): the authorization code flow with PKCE, state and nonce to the
 * company's identity provider (openid-client), callback `GET /oauth/callback/oidc`. The verified
 * email (`email_verified` true, from the ID token or else the userinfo endpoint) picks the person;
 * the provider's issuer and `sub` are bound to them on their first sign-in and must match after.
 *
 * Between the start and the callback, the PKCE verifier and the nonce wait in a row of
 * `oidc_sign_ins` keyed by the hash of the state, so the callback may reach any instance; the
 * browser holds the state in an HttpOnly cookie scoped to the callback, and the callback's `state`
 * must equal it, so an answer meant for one browser cannot sign in another.
 */
@Injectable()
export class OidcSignInService {
  private readonly log = new Logger('OidcSignIn');
  private discovered?: Promise<oidc.Configuration>;
  private readonly secure: boolean;

  constructor(
    private readonly pending: OidcRepository,
    private readonly signIn: SignInService,
    private readonly sessions: BrowserSessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.secure = config.publicUrl.startsWith('https:');
  }

  /** `GET /oauth/login/oidc`: a pending sign-in, and a 303 to the identity provider. */
  async start(req: Request, res: Response, query: { return_to?: unknown }): Promise<void> {
    const provider = await this.provider(res);
    if (!provider) return;
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    await this.pending.purgeExpired();
    await this.pending.insert(
      hashSecret(state),
      { code_verifier: verifier, nonce, return_to: safeReturnTo(query.return_to, this.config.publicUrl) },
      PENDING_TTL_S,
    );
    res.cookie(STATE_COOKIE, state, { httpOnly: true, sameSite: 'lax', path: CALLBACK_PATH, secure: this.secure, maxAge: PENDING_TTL_S * 1000 });
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: this.redirectUri(),
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
   * row, the code with the PKCE verifier, the ID token with the nonce), then signs the person in and
   * answers a 303 to where they were going.
   */
  async callback(req: Request, res: Response): Promise<void> {
    const state = req.query.state;
    const cookie = parse(req.headers.cookie ?? '')[STATE_COOKIE];
    res.clearCookie(STATE_COOKIE, { httpOnly: true, sameSite: 'lax', path: CALLBACK_PATH, secure: this.secure });
    if (typeof state !== 'string' || !STATE.test(state) || !cookie || !sameHash(hashSecret(state), hashSecret(cookie))) {
      return this.refuse(res, 400, 'This sign-in did not start in this browser, or it was started again in another tab. Start again.');
    }
    const pending = await this.pending.consume(hashSecret(state));
    if (!pending) return this.refuse(res, 400, 'This sign-in took more than 10 minutes or was used already. Start again.');
    if (typeof req.query.error === 'string') {
      const said = typeof req.query.error_description === 'string' ? req.query.error_description : req.query.error;
      return this.refuse(res, 400, `Your identity provider did not sign you in: ${said.slice(0, 300)}`);
    }
    const provider = await this.provider(res);
    if (!provider) return;

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
    if (!email) return this.refuse(res, 403, 'Your identity provider did not tell this server your email address, so it cannot tell who you are.');
    if (!verified) {
      return this.refuse(res, 403, `Your identity provider has not verified the email address ${email}. Verify it there, then sign in again.`);
    }
    const user = await this.signIn.personFor(email, res);
    if (!user) return;
    if (!(await this.pending.bind(user.id, claims.iss, claims.sub))) {
      return this.refuse(
        res,
        403,
        `The email ${email} belongs to another account of your identity provider than the one you signed in with. Ask your operator.`,
      );
    }
    await this.sessions.start(res, user.id, req);
    res.redirect(303, returnToOrDefault(pending.return_to, this.config.publicUrl));
  }

  /** The email and whether the provider verified it: from the ID token, else from the userinfo endpoint. */
  private async email(provider: oidc.Configuration, claims: oidc.IDToken, accessToken: string): Promise<{ email: string | null; verified: boolean }> {
    let { email, email_verified } = claims as { email?: unknown; email_verified?: unknown };
    if ((email === undefined || email_verified === undefined) && provider.serverMetadata().userinfo_endpoint) {
      try {
        const info = await oidc.fetchUserInfo(provider, accessToken, claims.sub);
        email ??= info.email;
        email_verified ??= info.email_verified;
      } catch (err) {
        this.log.warn(`OIDC userinfo failed: ${reason(err)}`);
      }
    }
    return { email: typeof email === 'string' && email.includes('@') ? email.trim().toLowerCase() : null, verified: email_verified === true };
  }

  /** The provider's configuration, discovered once (again after a failure); null when it cannot be reached, with the page sent. */
  private async provider(res: Response): Promise<oidc.Configuration | null> {
    const settings = this.config.oidc;
    if (!settings) {
      this.refuse(res, 404, 'Signing in with an identity provider is not enabled on this server.');
      return null;
    }
    this.discovered ??= oidc.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
      timeout: PROVIDER_TIMEOUT_S,
      // An http:// issuer is the operator's choice (config accepts it): a provider on the same host or in tests.
      execute: settings.issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [],
    });
    try {
      return await this.discovered;
    } catch (err) {
      this.discovered = undefined;
      this.log.warn(`OIDC discovery of ${settings.issuer} failed: ${reason(err)}`);
      this.refuse(res, 503, 'Your identity provider cannot be reached right now. Try again in a minute.');
      return null;
    }
  }

  private redirectUri(): string {
    return this.config.publicUrl + CALLBACK_PATH;
  }

  private refuse(res: Response, status: number, message: string): void {
    refusedPage(res, { title: status === 403 ? 'Not signed in' : 'Sign-in failed', status, message, again: status !== 403 });
  }
}

/** An error's message with its cause's (openid-client wraps network failures as "something went wrong"). */
function reason(err: unknown): string {
  const cause = (err as Error).cause;
  return cause instanceof Error ? `${(err as Error).message} (${cause.message})` : (err as Error).message;
}
