import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import type { User } from '../users/user.js';
import { UsersService } from '../users/users.service.js';
import { BrowserSessionsService } from '../web/browser-sessions.service.js';
import { PagePolicy } from '../web/page-policy.js';
import { LoginCsrf } from './login-csrf.js';
import { LinkRefused, LoginLinksService, type LinkRefusal } from '../login-links/login-links.service.js';
import { parsePastedLink, returnToOrDefault, safeReturnTo } from '../login-links/return-to.js';
import { CompanySignInRepository } from './company/company-sign-in.repository.js';
import { gatewayPage, noAccessPage, refusedPage, signedInPage, signedOutPage, signInPage } from './sign-in.pages.js';

const REFUSALS: Record<LinkRefusal, string> = {
  used: 'This sign-in link has been used already: each link signs in once. Ask your operator for a new one.',
  expired: 'This sign-in link has expired. Ask your operator for a new one.',
  unknown: 'This sign-in link is unknown: check that you pasted all of it, or ask your operator for a new one.',
  disabled: 'Your account is disabled: ask your operator.',
  outreached: 'This sign-in link no longer works: its person now belongs to an account that the owner who made it does not own. Ask your operator for a link.',
};
const CROSS_SITE = 'This form was sent from another site, so it was refused. Open the sign-in page of this server and try again.';
const STALE_FORM = 'This form has expired or was not opened in this browser. Try again from this page.';

/** The fields of the sign-in form. */
export interface SignInForm {
  token?: unknown;
  return_to?: unknown;
  csrf?: unknown;
}

/**
 * Signing in and out in a browser (docs/oauth.md#signing-in): the sign-in page of the enabled methods,
 * a login link's form, sign-out, and the one rule every method shares, that an email picks a person
 * who exists and is not disabled. Each method ends in {@link BrowserSessionsService.start}.
 */
@Injectable()
export class SignInService {
  private readonly proxyOnly: boolean;

  constructor(
    private readonly links: LoginLinksService,
    private readonly users: UsersService,
    private readonly sessions: BrowserSessionsService,
    private readonly csrf: LoginCsrf,
    private readonly pages: PagePolicy,
    private readonly company: CompanySignInRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.proxyOnly = config.loginMethods.length === 1 && config.loginMethods[0] === 'proxy';
  }

  /**
   * The sign-in page (`GET /oauth/login`), also for other pages whose visitor must sign in first
   * (`returnTo` = where they were going). A GET never consumes a link's token. A signed-in person
   * without a token gets who they are and a Sign out button; when `proxy` is the only method, a
   * visitor the gateway did not sign in gets the 401 page. While some account signs its people in
   * through its own identity provider, either page has the work-email form too (CompanySignInService).
   */
  async showSignIn(req: Request, res: Response, query: { token?: unknown; return_to?: unknown } = {}): Promise<void> {
    const session = await this.sessions.current(req);
    const returnTo = safeReturnTo(query.return_to, this.config.publicUrl);
    const token = typeof query.token === 'string' && query.token.length <= 200 ? query.token : null;
    if (session && !token) return signedInPage(res, { user: session.user, csrf: session.csrf, returnTo });
    const company = await this.company.offered();
    if (this.proxyOnly) return gatewayPage(res, company ? { csrf: this.csrf.token(req, res), returnTo } : null);
    // Whose sign-in the link is, so that a person sent someone else's link sees it before pressing.
    const link = token && this.config.loginMethods.includes('link') ? await this.links.describe(token) : null;
    signInPage(res, { methods: this.config.loginMethods, csrf: this.csrf.token(req, res), token, link, returnTo, signedIn: session?.user, company });
  }

  /**
   * `POST /oauth/login`: a link's token (or the whole pasted link) signs its person in once, and the
   * answer is a 303 to `return_to` when it is a path here, else to the console. Cross-site posts and a
   * missing or wrong CSRF token are 403; a used, expired or unknown link, or a disabled person, 400;
   * both with the page again.
   */
  async signInWithLink(req: Request, res: Response, form: SignInForm): Promise<void> {
    const pasted = parsePastedLink(form.token);
    const returnTo = (typeof form.return_to === 'string' && form.return_to) || pasted.returnTo;
    const again = async (status: number, error: string) =>
      signInPage(res, {
        methods: this.config.loginMethods,
        csrf: this.csrf.token(req, res),
        returnTo: safeReturnTo(returnTo, this.config.publicUrl),
        error,
        status,
        company: await this.company.offered(),
      });
    if (this.pages.crossSitePost(req)) return again(403, CROSS_SITE);
    if (!this.csrf.matches(req, form.csrf)) return again(403, STALE_FORM);
    if (!this.config.loginMethods.includes('link')) return again(400, 'Sign-in links are turned off on this server.');
    if (!pasted.token) return again(400, 'Paste your sign-in link (or its token) to sign in.');
    let link: { userId: string; returnTo: string | null };
    try {
      link = await this.links.consume(pasted.token);
    } catch (err) {
      if (err instanceof LinkRefused) return again(400, REFUSALS[err.reason]);
      throw err;
    }
    await this.sessions.start(res, link.userId, req);
    res.redirect(303, returnToOrDefault(returnTo || link.returnTo, this.config.publicUrl));
  }

  /** `POST /oauth/logout`: ends the session (its `csrf` field must be the session's) and says so. */
  async signOut(req: Request, res: Response, form: { csrf?: unknown }): Promise<void> {
    const session = await this.sessions.current(req);
    if (session && (this.pages.crossSitePost(req) || !this.sessions.csrfMatches(session, form.csrf))) {
      return refusedPage(res, {
        title: 'Not signed out',
        status: 403,
        message: "This sign-out was not sent from this server's page, so you are still signed in. Sign out from the sign-in page.",
        again: true,
      });
    }
    await this.sessions.end(req, res);
    signedOutPage(res, this.config.loginMethods);
  }

  /**
   * The person an identity provider or the gateway vouched for: the user with this email, when there
   * is one and they are not disabled. Otherwise the refusal page is sent (403: "ask your operator to
   * add you", or disabled) and null answered: no session is made.
   */
  async personFor(email: string, res: Response): Promise<User | null> {
    const user = await this.users.findByEmail(email);
    if (!user) {
      noAccessPage(res, email);
      return null;
    }
    if (user.disabled_at) {
      refusedPage(res, { title: 'Account disabled', status: 403, message: REFUSALS.disabled });
      return null;
    }
    return user;
  }
}
