import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service.js';
import { AuditService } from '../audit/audit.service.js';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.js';
import { discover, fetchKeys, IDP_DOCUMENT_MAX_BYTES, type Discovered } from './discovery.js';
import { issuerProblem, toView, type IdentityProviderRow, type IdentityProviderView, type PersonClaim, type UnknownPeople } from './identity-provider.js';
import { IdentityProvidersRepository } from './identity-providers.repository.js';

/** What an identity provider is created with; what is left out takes its default. */
export interface IdentityProviderInput {
  issuer: string;
  person_claim?: PersonClaim;
  unknown_people?: UnknownPeople;
  oidc_client_id?: string | null;
  oidc_client_secret?: string | null;
}

export type IdentityProviderChange = Partial<IdentityProviderInput>;

/** An unknown `kid` fetches the provider's keys again at most once a minute (across instances). */
export const KEY_REFRESH_MIN_AGE_S = 60;

/**
 * The identity providers an account trusts (docs/oauth.md#enterprise-managed-authorization).
 *
 * For the other users of the registry (the console's Identity provider page, per-account OIDC
 * sign-in): `list(accountId)` and `get(accountId, id)` answer the view (no secret);
 * `forAccount(accountId)` and `row(accountId, id)` the stored rows, with the discovery document
 * (`metadata`: authorization and token endpoints), the cached keys and the OIDC client secret, for
 * server-side use only; `byIssuer(issuer)` the rows of every account that trusts an issuer (the
 * ID-JAG grant). Every change is an audit event in the change's own transaction, its actor from the
 * request's audit context.
 */
@Injectable()
export class IdentityProvidersService {
  private readonly log = new Logger(IdentityProvidersService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly providers: IdentityProvidersRepository,
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
  ) {}

  async list(accountId: string): Promise<IdentityProviderView[]> {
    return (await this.forAccount(accountId)).map(toView);
  }

  async get(accountId: string, id: string): Promise<IdentityProviderView> {
    return toView(await this.row(accountId, id));
  }

  /** The account's providers as stored (secret, document and keys included): for server-side use, never to answer. */
  async forAccount(accountId: string): Promise<IdentityProviderRow[]> {
    await this.accounts.get(accountId);
    return this.providers.list(accountId);
  }

  /** One provider of the account as stored; `not_found` for an unknown id or another account's. */
  async row(accountId: string, id: string): Promise<IdentityProviderRow> {
    await this.accounts.get(accountId);
    const found = await this.providers.find(accountId, id);
    if (!found) throw DomainError.notFound('identity provider', id);
    return found;
  }

  /** Every account's provider with this exact issuer. */
  byIssuer(issuer: string): Promise<IdentityProviderRow[]> {
    return this.providers.byIssuer(issuer);
  }

  /** Trusts a provider: its discovery document and keys are fetched first (`unprocessable`, saying why, when they cannot be). */
  async create(accountId: string, input: IdentityProviderInput): Promise<IdentityProviderView> {
    await this.accounts.get(accountId);
    this.checkIssuer(input.issuer);
    const { metadata, jwks } = await this.discover(input.issuer);
    const created = await this.db.transaction(async (tx) => {
      const saved = await this.providers.insert(
        [
          newId(),
          accountId,
          input.issuer,
          input.person_claim ?? 'email',
          input.unknown_people ?? 'refuse',
          input.oidc_client_id ?? null,
          input.oidc_client_secret ?? null,
          JSON.stringify(metadata),
          JSON.stringify(jwks),
        ],
        tx,
      );
      if (!saved) throw alreadyTrusted(accountId, input.issuer);
      await this.audit.record(tx, {
        action: 'identity_provider.created',
        accountId,
        target: { identity_provider_id: saved.id },
        change: { before: null, after: audited(saved) },
      });
      return saved;
    });
    return toView(created);
  }

  /**
   * Changes a provider; a new issuer is discovered again. `oidc_client_secret` is replaced when sent
   * (null clears it) and kept when left out.
   */
  async update(accountId: string, id: string, change: IdentityProviderChange): Promise<IdentityProviderView> {
    const current = await this.row(accountId, id);
    const issuer = change.issuer ?? current.issuer;
    let discovered: Discovered = { metadata: current.metadata, jwks: current.jwks };
    if (issuer !== current.issuer) {
      this.checkIssuer(issuer);
      discovered = await this.discover(issuer);
    }
    const updated = await this.db.transaction(async (tx) => {
      const before = await this.providers.findForUpdate(accountId, id, tx);
      if (!before) throw DomainError.notFound('identity provider', id);
      const saved = await this.providers.update(
        [
          id,
          accountId,
          issuer,
          change.person_claim ?? before.person_claim,
          change.unknown_people ?? before.unknown_people,
          change.oidc_client_id !== undefined ? change.oidc_client_id : before.oidc_client_id,
          change.oidc_client_secret !== undefined ? change.oidc_client_secret : before.oidc_client_secret,
          JSON.stringify(discovered.metadata),
          JSON.stringify(discovered.jwks),
        ],
        tx,
      );
      if (!saved) throw alreadyTrusted(accountId, issuer);
      await this.audit.record(tx, {
        action: 'identity_provider.updated',
        accountId,
        target: { identity_provider_id: id },
        change: { before: audited(before), after: audited(saved) },
      });
      return saved;
    });
    return toView(updated);
  }

  /** Stops trusting a provider: ID-JAGs it signs are refused from now on (grants already made stay until revoked). */
  async remove(accountId: string, id: string): Promise<void> {
    await this.accounts.get(accountId);
    await this.db.transaction(async (tx) => {
      const before = await this.providers.findForUpdate(accountId, id, tx);
      if (!before || !(await this.providers.delete(accountId, id, tx))) throw DomainError.notFound('identity provider', id);
      await this.audit.record(tx, {
        action: 'identity_provider.removed',
        accountId,
        target: { identity_provider_id: id },
        change: { before: audited(before), after: null },
      });
    });
  }

  /**
   * Fetches the issuer's keys again, for a `kid` none of the stored sets has (the provider rotated its
   * keys): at most once a minute per issuer across instances; true when new keys were stored.
   */
  async refreshKeys(issuer: string): Promise<boolean> {
    const [first] = await this.providers.byIssuer(issuer);
    if (!first || !(await this.providers.claimKeyRefresh(issuer, KEY_REFRESH_MIN_AGE_S))) return false;
    try {
      await this.providers.saveKeys(issuer, await fetchKeys(issuer, first.metadata, this.fetchOptions()));
      return true;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.log.warn(err.message);
      return false;
    }
  }

  private checkIssuer(issuer: string): void {
    const problem = issuerProblem(issuer, this.config.oauth.cimdAllowPrivateNetworks);
    if (problem) throw new DomainError('validation_failed', `The issuer "${issuer}" cannot be used: ${problem}.`, { field: 'issuer' });
  }

  private discover(issuer: string): Promise<Discovered> {
    return discover(issuer, this.fetchOptions());
  }

  private fetchOptions() {
    return { allowPrivateNetworks: this.config.oauth.cimdAllowPrivateNetworks, maxBytes: IDP_DOCUMENT_MAX_BYTES };
  }
}

function alreadyTrusted(accountId: string, issuer: string): DomainError {
  return new DomainError('conflict', `Account ${accountId} already trusts the identity provider ${issuer}.`, { field: 'issuer' });
}

/** What the audit trail records of a provider: its settings, never the secret (only whether there is one). */
function audited(idp: IdentityProviderRow): Record<string, unknown> {
  return {
    issuer: idp.issuer,
    person_claim: idp.person_claim,
    unknown_people: idp.unknown_people,
    oidc_client_id: idp.oidc_client_id,
    oidc_client_secret_set: idp.oidc_client_secret !== null,
  };
}
