import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { PERSON_CLAIMS, UNKNOWN_PEOPLE, type IdentityProviderView, type PersonClaim, type UnknownPeople } from '../identity-providers/identity-provider.js';
import { IdentityProvidersService } from '../identity-providers/identity-providers.service.js';
import type { User } from '../users/user.js';
import { OIDC_CALLBACK_PATH } from '../web/sign-in-paths.js';
import { ConsoleService, type ConsoleAccount } from './console.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_CLIENT_ID = 500;
const MAX_SECRET = 2_000;

/** What the form sent (never the secret: a refused form comes back with the secret field empty). */
export interface IdentityProviderForm {
  issuer: string;
  person_claim: string;
  unknown_people: string;
  oidc_client_id: string;
}

/** The values an owner copies into the identity provider's settings (docs/console.md#identity-provider). */
export interface ValuesToCopy {
  /** Where the provider sends people back after signing in: its sign-in redirect URI. */
  redirectUri: string;
  /** This server as the audience of the ID-JAGs the provider issues: our issuer, PUBLIC_URL. */
  audience: string;
  /** The protected resource the ID-JAGs are for. */
  resource: string;
}

export interface IdentityProviderPageData extends ConsoleAccount {
  providers: IdentityProviderView[];
  copy: ValuesToCopy;
}

/** A change refused: the sentence, the status, the form as sent and which form it was (a provider's id, or null for the new one). */
export interface IdentityProviderProblem {
  problem: string;
  status: number;
  form: IdentityProviderForm;
  target: string | null;
}

export type IdentityProviderOutcome = { done: 'created' | 'updated' | 'removed' } | IdentityProviderProblem;

/**
 * The Identity provider page (owners only, docs/console.md#identity-provider): the account's
 * identity providers, registered, changed and removed through IdentityProvidersService, whose every
 * change is an audited act (actor: the signed-in owner). A refusal of the registry (an issuer it
 * cannot use, a discovery document it cannot fetch, an issuer already registered) comes back as
 * the registry's sentence, with the form as it was sent; nothing is saved then.
 */
@Injectable()
export class ConsoleIdentityProviderService {
  private readonly copy: ValuesToCopy;

  constructor(
    private readonly console: ConsoleService,
    private readonly providers: IdentityProvidersService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const base = config.publicUrl.replace(/\/+$/, '');
    this.copy = { redirectUri: base + OIDC_CALLBACK_PATH, audience: config.publicUrl, resource: `${base}/mcp` };
  }

  async page(user: User, accountId: string): Promise<IdentityProviderPageData> {
    const place = await this.console.ownedAccount(user, accountId);
    return { ...place, providers: await this.providers.list(place.membership.account_id), copy: this.copy };
  }

  /** Registers a provider from the form. */
  async create(user: User, accountId: string, body: Record<string, unknown>): Promise<IdentityProviderOutcome> {
    const place = await this.console.ownedAccount(user, accountId);
    const { form, problem } = readForm(body);
    if (problem) return { problem, status: 400, form, target: null };
    const secret = text(body.oidc_client_secret);
    return this.saved('created', form, null, () =>
      this.providers.create(place.membership.account_id, {
        issuer: form.issuer,
        person_claim: form.person_claim as PersonClaim,
        unknown_people: form.unknown_people as UnknownPeople,
        oidc_client_id: form.oidc_client_id || null,
        oidc_client_secret: secret || null,
      }),
    );
  }

  /** Changes a provider: an empty secret field keeps the secret, `clear_secret` removes it. */
  async update(user: User, accountId: string, id: string, body: Record<string, unknown>): Promise<IdentityProviderOutcome> {
    const place = await this.console.ownedAccount(user, accountId);
    const provider = await this.provider(place, id);
    const { form, problem } = readForm(body);
    if (problem) return { problem, status: 400, form, target: provider.id };
    const secret = text(body.oidc_client_secret);
    return this.saved('updated', form, provider.id, () =>
      this.providers.update(place.membership.account_id, provider.id, {
        issuer: form.issuer,
        person_claim: form.person_claim as PersonClaim,
        unknown_people: form.unknown_people as UnknownPeople,
        oidc_client_id: form.oidc_client_id || null,
        ...(body.clear_secret !== undefined ? { oidc_client_secret: null } : secret ? { oidc_client_secret: secret } : {}),
      }),
    );
  }

  async remove(user: User, accountId: string, id: string): Promise<IdentityProviderOutcome> {
    const place = await this.console.ownedAccount(user, accountId);
    const provider = await this.provider(place, id);
    await this.providers.remove(place.membership.account_id, provider.id);
    return { done: 'removed' };
  }

  /** One of the account's providers; not_found for another account's, or an id that is not one. */
  private async provider(place: ConsoleAccount, id: string): Promise<IdentityProviderView> {
    if (!UUID.test(id)) throw DomainError.notFound('identity provider', id);
    return this.providers.get(place.membership.account_id, id.toLowerCase());
  }

  /** Runs a change; the registry's refusals become the page's sentence. */
  private async saved(
    done: 'created' | 'updated',
    form: IdentityProviderForm,
    target: string | null,
    change: () => Promise<unknown>,
  ): Promise<IdentityProviderOutcome> {
    try {
      await change();
      return { done };
    } catch (err) {
      if (!(err instanceof DomainError) || !(err.code in REFUSED)) throw err;
      return { problem: err.message, status: REFUSED[err.code], form, target };
    }
  }
}

/** The registry's refusals the page shows, with their status. */
const REFUSED: Record<string, number> = { validation_failed: 400, unprocessable: 422, conflict: 409 };

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The form's fields, and what is wrong with them in a sentence (the registry checks the issuer itself). */
function readForm(body: Record<string, unknown>): { form: IdentityProviderForm; problem: string | null } {
  const form = {
    issuer: text(body.issuer),
    person_claim: text(body.person_claim) || 'email',
    unknown_people: text(body.unknown_people) || 'refuse',
    oidc_client_id: text(body.oidc_client_id),
  };
  const problem = !form.issuer
    ? 'Type the issuer of your identity provider, as https://company.okta.com.'
    : !(PERSON_CLAIMS as readonly string[]).includes(form.person_claim)
      ? `Name people by ${PERSON_CLAIMS.join(' or ')}.`
      : !(UNKNOWN_PEOPLE as readonly string[]).includes(form.unknown_people)
        ? `People who are not members are ${UNKNOWN_PEOPLE.join(' or ')}.`
        : form.oidc_client_id.length > MAX_CLIENT_ID
          ? `The client ID is longer than ${MAX_CLIENT_ID} characters.`
          : text(body.oidc_client_secret).length > MAX_SECRET
            ? `The client secret is longer than ${MAX_SECRET} characters.`
            : null;
  return { form, problem };
}
