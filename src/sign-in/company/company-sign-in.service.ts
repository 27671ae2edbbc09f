import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { runAs } from '../../audit/audit-context.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/config.js';
import { safeReturnTo } from '../../login-links/return-to.js';
import { MembershipsService } from '../../people/memberships.service.js';
import { isPersonEmail } from '../../users/email.js';
import type { User } from '../../users/user.js';
import { UsersService } from '../../users/users.service.js';
import { PagePolicy } from '../../web/page-policy.js';
import { LoginCsrf } from '../login-csrf.js';
import { OidcFlow, ProviderUnreachable, type OidcAnswer, type OidcIssuer } from '../oidc/oidc-flow.js';
import { OidcRepository } from '../oidc/oidc.repository.js';
import { companyChoicePage, signInPage } from '../sign-in.pages.js';
import { CompanySignInRepository, type CompanyChoice, type SignInProvider } from './company-sign-in.repository.js';

/** The one answer for an email that names nobody and for a person whose accounts have no provider: it tells neither. */
export const NO_COMPANY_SIGN_IN = 'Signing in with your company is not set up for this email address here. Check the address, or sign in another way.';
const CROSS_SITE = 'This form was sent from another site, so it was refused. Open the sign-in page of this server and try again.';
const STALE_FORM = 'This form has expired or was not opened in this browser. Try again from this page.';

/** The fields of the "Sign in with your company" form (and of each button of the choice page). */
export interface CompanyForm {
  email?: unknown;
  provider?: unknown;
  return_to?: unknown;
  csrf?: unknown;
}

/**
 * Sign-in through the person's own account's identity provider
 * (docs/oauth.md#sign-in-with-your-company), beside `LOGIN_METHODS`: the
 * sign-in page asks for the work email (`POST /oauth/login/company`), which leads to the providers
 * with sign-in set up of the accounts that person belongs to: one, and the browser goes there; several,
 * and the person picks one; none, or nobody with that email, and one sentence says so without telling
 * which. The flow itself is {@link OidcFlow}'s, with that provider's discovery document and client.
 *
 * Back at the callback, the provider's naming rule picks the person: `email`, the verified email,
 * which must be the one typed; `sub`, the person bound to the issuer and subject (bound on their first
 * sign-in through it, when the verified email is the one typed). They must be an enabled member of
 * the provider's account, or are added as a member with no project role under the `add` rule.
 */
@Injectable()
export class CompanySignInService {
  constructor(
    private readonly providers: CompanySignInRepository,
    private readonly flow: OidcFlow,
    private readonly bindings: OidcRepository,
    private readonly users: UsersService,
    private readonly memberships: MembershipsService,
    private readonly csrf: LoginCsrf,
    private readonly pages: PagePolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Whether the sign-in page offers the work-email field: some account has sign-in through its provider set up. */
  offered(): Promise<boolean> {
    return this.providers.offered();
  }

  /**
   * `POST /oauth/login/company` (fields `email`, `csrf`, `return_to`, and `provider` from the choice
   * page): a 303 to the provider, the choice page, or the sign-in page again with a sentence.
   */
  async submit(req: Request, res: Response, form: CompanyForm): Promise<void> {
    const returnTo = safeReturnTo(form.return_to, this.config.publicUrl);
    const email = typeof form.email === 'string' ? form.email.trim().toLowerCase() : '';
    const again = (status: number, error: string) =>
      signInPage(res, {
        methods: this.config.loginMethods,
        csrf: this.csrf.token(req, res),
        returnTo,
        error,
        status,
        company: true,
        companyEmail: email,
      });
    if (this.pages.crossSitePost(req)) return again(403, CROSS_SITE);
    if (!this.csrf.matches(req, form.csrf)) return again(403, STALE_FORM);
    if (!isPersonEmail(email)) return again(400, 'Type your work email address, as name@company.com.');
    const choices = await this.providers.choices(email);
    const picked = typeof form.provider === 'string' ? choices.filter((c) => c.identity_provider_id === form.provider) : choices;
    if (!picked.length) return again(400, NO_COMPANY_SIGN_IN);
    if (picked.length > 1) return companyChoicePage(res, { choices: picked, email, csrf: this.csrf.token(req, res), returnTo });
    await this.begin(res, picked[0], email, returnTo);
  }

  /** The flow's issuer for a pending sign-in through an account's provider; null when it no longer has sign-in set up. */
  async issuerOf(identityProviderId: string): Promise<OidcIssuer | null> {
    const provider = await this.providers.provider(identityProviderId);
    return provider && issuerOf(provider);
  }

  /**
   * The person the provider's verified answer names under its account's rules, or null with the
   * refusal page sent (403: signing in again would not change it).
   */
  async person(answer: OidcAnswer, res: Response): Promise<string | null> {
    const provider = await this.providers.provider(answer.pending.identity_provider_id!);
    if (!provider) return this.flow.refuse(res, 400, 'The identity provider this sign-in started with is no longer set up here. Start again.');
    const typed = answer.pending.email ?? '';
    const user = provider.person_claim === 'sub' ? await this.bySubject(answer, typed, res) : await this.byEmail(answer, typed, res);
    if (!user) return null;
    if (user.disabled_at) return this.flow.refuse(res, 403, 'Your account is disabled: ask your operator.');
    const member = (await this.users.memberships(user.id)).some((m) => m.account_id === provider.account_id);
    if (!member) {
      if (provider.unknown_people !== 'add') {
        return this.flow.refuse(res, 403, `${user.email} is not a member of the account “${provider.account_name}”: ask one of its owners to add you.`);
      }
      // The provider's account lets in whoever its provider signs in: a member with no project role, which owners then give.
      await runAs({ type: 'user', id: user.id, email: user.email }, () => this.memberships.putAccountMember(provider.account_id, user.id, 'member'));
    }
    return user.id;
  }

  private async begin(res: Response, choice: CompanyChoice, email: string, returnTo: string | null): Promise<void> {
    const issuer = await this.issuerOf(choice.identity_provider_id);
    if (!issuer) return void this.flow.refuse(res, 400, 'This identity provider is no longer set up here. Start again.');
    try {
      await this.flow.begin(res, issuer, { return_to: returnTo, identity_provider_id: choice.identity_provider_id, email });
    } catch (err) {
      if (err instanceof ProviderUnreachable) return void this.flow.unreachable(res);
      throw err;
    }
  }

  /** `email` rule: the provider's verified email, which must be the email typed to start. */
  private async byEmail(answer: OidcAnswer, typed: string, res: Response): Promise<User | null> {
    if (!this.verifiedAsTyped(answer, typed, res)) return null;
    return this.known(typed, res);
  }

  /**
   * `sub` rule: the person the issuer and subject are bound to; the first sign-in through this provider
   * binds them to the person whose email was typed, when the provider verified that same email.
   */
  private async bySubject(answer: OidcAnswer, typed: string, res: Response): Promise<User | null> {
    const bound = await this.users.findByOidcSubject(answer.issuer, answer.subject);
    if (bound) return bound;
    if (!this.verifiedAsTyped(answer, typed, res)) return null;
    const user = await this.known(typed, res);
    if (!user) return null;
    if (!(await this.bindings.bind(user.id, answer.issuer, answer.subject))) {
      return this.flow.refuse(res, 403, `${typed} is already signed in through another person of your identity provider. Ask your operator.`);
    }
    return user;
  }

  private verifiedAsTyped(answer: OidcAnswer, typed: string, res: Response): boolean {
    if (!answer.email) {
      this.flow.refuse(res, 403, 'Your identity provider did not tell this server your email address, so it cannot tell who you are.');
      return false;
    }
    if (!answer.verified) {
      this.flow.refuse(res, 403, `Your identity provider has not verified the email address ${answer.email}. Verify it there, then sign in again.`);
      return false;
    }
    if (answer.email !== typed) {
      this.flow.refuse(
        res,
        403,
        `Your identity provider signed you in as ${answer.email}, not as ${typed}, the email you typed. Sign in with the email of that account.`,
      );
      return false;
    }
    return true;
  }

  private async known(email: string, res: Response): Promise<User | null> {
    const user = await this.users.findByEmail(email);
    if (!user) this.flow.refuse(res, 403, `Nobody with the email ${email} may use this Reblog server: ask your operator to add you.`);
    return user;
  }
}

/** An account's provider as the flow's issuer: its kept discovery document, its client; a change of the provider is a new configuration. */
function issuerOf(provider: SignInProvider): OidcIssuer {
  return {
    key: `${provider.id}@${new Date(provider.updated_at).getTime()}`,
    issuer: provider.issuer,
    clientId: provider.oidc_client_id!,
    clientSecret: provider.oidc_client_secret ?? undefined,
    metadata: provider.metadata,
    addressChecked: true,
  };
}
