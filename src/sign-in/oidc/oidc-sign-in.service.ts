import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import { BrowserSessionsService } from '../../web/browser-sessions.service.js';
import { returnToOrDefault, safeReturnTo } from '../../login-links/return-to.js';
import { CompanySignInService } from '../company/company-sign-in.service.js';
import { SignInService } from '../sign-in.service.js';
import { OidcFlow, ProviderUnreachable, type OidcIssuer } from './oidc-flow.js';
import { OidcRepository } from './oidc.repository.js';

/** The server-wide provider's key in the flow's configuration cache. */
const SERVER_WIDE = 'server';

/**
 * `oidc` sign-in (docs/oauth.md#sign-in-with-an-identity-provider-oidc): the server-wide identity
 * provider of `OIDC_*`, started at `GET /oauth/login/oidc`. The verified email (`email_verified`
 * true, from the ID token or else the userinfo endpoint) picks the person; the provider's issuer and
 * `sub` are bound to them on their first sign-in and must match after.
 *
 * The callback `GET /oauth/callback/oidc` is shared with the accounts' own providers
 * ({@link CompanySignInService}): the pending sign-in says which provider it went to, and whose rule
 * names the person.
 */
@Injectable()
export class OidcSignInService {
  private readonly serverWide: OidcIssuer | null;

  constructor(
    private readonly flow: OidcFlow,
    private readonly bindings: OidcRepository,
    private readonly signIn: SignInService,
    private readonly company: CompanySignInService,
    private readonly sessions: BrowserSessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.serverWide = config.oidc ? { key: SERVER_WIDE, ...config.oidc } : null;
  }

  /** `GET /oauth/login/oidc`: a pending sign-in, and a 303 to the server-wide identity provider. */
  async start(req: Request, res: Response, query: { return_to?: unknown }): Promise<void> {
    if (!this.serverWide) return this.notEnabled(res);
    try {
      await this.flow.begin(res, this.serverWide, {
        return_to: safeReturnTo(query.return_to, this.config.publicUrl),
        identity_provider_id: null,
        email: null,
      });
    } catch (err) {
      if (err instanceof ProviderUnreachable) return void this.flow.unreachable(res);
      throw err;
    }
  }

  /**
   * `GET /oauth/callback/oidc`: the verified answer (OidcFlow) names a person by the rule of the
   * provider the sign-in went to; that person gets a session and a 303 to where they were going.
   */
  async callback(req: Request, res: Response): Promise<void> {
    const answer = await this.flow.finish(req, res, (pending) =>
      pending.identity_provider_id ? this.company.issuerOf(pending.identity_provider_id) : Promise.resolve(this.serverWide),
    );
    if (!answer) return;
    const userId = answer.pending.identity_provider_id ? await this.company.person(answer, res) : await this.serverWidePerson(answer, res);
    if (!userId) return;
    await this.sessions.start(res, userId, req);
    res.redirect(303, returnToOrDefault(answer.pending.return_to, this.config.publicUrl));
  }

  /** The server-wide rule: the verified email picks the person, and issuer and `sub` stay bound to them. */
  private async serverWidePerson(answer: { email: string | null; verified: boolean; issuer: string; subject: string }, res: Response): Promise<string | null> {
    const { email, verified } = answer;
    if (!email) return this.flow.refuse(res, 403, 'Your identity provider did not tell this server your email address, so it cannot tell who you are.');
    if (!verified) {
      return this.flow.refuse(res, 403, `Your identity provider has not verified the email address ${email}. Verify it there, then sign in again.`);
    }
    const user = await this.signIn.personFor(email, res);
    if (!user) return null;
    if (!(await this.bindings.bind(user.id, answer.issuer, answer.subject))) {
      return this.flow.refuse(
        res,
        403,
        `The email ${email} belongs to another account of your identity provider than the one you signed in with. Ask your operator.`,
      );
    }
    return user.id;
  }

  private notEnabled(res: Response): void {
    this.flow.refuse(res, 404, 'Signing in with an identity provider is not enabled on this server.');
  }
}
