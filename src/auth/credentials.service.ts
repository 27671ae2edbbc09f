import { AuditService } from '../audit/audit.service.js';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service.js';
import { DomainError } from '../common/domain-error.js';
import { newId } from '../common/ids.js';
import { decodeCursor, toPage, type Page } from '../common/pagination.js';
import type { ProjectRole, Scope } from '../common/tool-names.js';
import { ProjectsService } from '../projects/projects.service.js';
import type { Credential, CredentialProject, CredentialSource, CredentialType, GrantVia, RevokedReason } from './credential.entity.js';
import { CredentialsRepository, type ConnectedGrant } from './credentials.repository.js';
import { DatabaseNotifications } from '../database/notifications.service.js';
import { GRANT_PREFIX, KEY_PREFIX, newSecret } from './secrets.js';

export interface CredentialInput {
  name: string;
  scopes: Scope[];
  projects: { project_id: string; role: ProjectRole }[];
  expiresInSeconds?: number;
  /** The person making it (the console); absent: the operator, with the admin token. */
  createdBy?: { id: string; email: string };
}

/** An OAuth grant a person's consent makes: what the code carried, for the client that redeemed it. */
export interface GrantInput {
  accountId: string;
  /** The person who consented; the grant acts for them. */
  userId: string;
  clientId: string;
  /** The client's name when the grant is made. */
  name: string;
  scopes: Scope[];
  projects: { project_id: string; role: ProjectRole }[];
  /** The visible prefix of its first access token (a grant has no secret of its own). */
  secretPrefix: string;
  /** `consent` (the person said yes on the consent page) or `enterprise` (their identity provider's ID-JAG). */
  via: GrantVia;
  /** The identity provider's issuer, for a grant made `via: "enterprise"` (recorded in the audit trail). */
  issuer?: string;
}

/** `created_by` of a credential the operator made with the admin token. */
export const OPERATOR = 'operator';

/** Who may revoke, and why: the console revokes within one account, a member only their own grants. */
export interface RevokeScope {
  accountId: string;
  /** Only a credential acting for this person (a member disconnecting their own app). */
  userId?: string;
  reason: RevokedReason;
}

/** An OAuth grant as the console shows it: the admin view plus where its client redirects. */
export type ConnectionView = CredentialView & { redirect_uris: string[] };

export interface CredentialView {
  id: string;
  type: CredentialType;
  name: string;
  prefix: string;
  scopes: Scope[];
  projects: { project_id: string; role: ProjectRole }[];
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  /** `admin` (made here) or `oauth` (a person's consent). */
  source: CredentialSource;
  /** The person an OAuth grant acts for; null for admin-made credentials. */
  user_id: string | null;
  /** The OAuth client of the grant; null for admin-made credentials. */
  client_id: string | null;
  revoked_reason: RevokedReason | null;
  /** Who made it: a user id (in the console, or consenting to an OAuth grant), or `"operator"` (the admin token). */
  created_by: string;
  /** That person's email; null for the operator, or a person since deleted. */
  created_by_email: string | null;
  /** How an OAuth grant was made: `consent` or `enterprise` (an identity provider's ID-JAG); null for the others. */
  via: GrantVia | null;
}

/**
 * API keys and grants: created with a secret shown once, listed without it, revoked at once. The one
 * way into the credentials table: OAuth makes, narrows and revokes its grants here too.
 */
@Injectable()
export class CredentialsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly credentials: CredentialsRepository,
    private readonly accounts: AccountsService,
    private readonly projects: ProjectsService,
    private readonly notifications: DatabaseNotifications,
    private readonly audit: AuditService,
  ) {}

  async create(accountId: string, type: CredentialType, input: CredentialInput): Promise<{ view: CredentialView; secret: string }> {
    await this.accounts.get(accountId);
    const ids = input.projects.map((p) => p.project_id);
    if (new Set(ids).size !== ids.length) {
      throw new DomainError('validation_failed', 'A project is listed more than once in projects; list each project once with one role.');
    }
    const owned = new Set((await this.projects.findOwned(accountId, ids)).map((p) => p.id));
    const foreign = ids.filter((id) => !owned.has(id));
    if (foreign.length) {
      throw new DomainError(
        'unprocessable',
        `Project(s) ${foreign.join(', ')} do not belong to account ${accountId}; a credential reaches only its own account's projects.`,
        { project_ids: foreign },
      );
    }
    const { secret, hash, visiblePrefix } = newSecret(type === 'api_key' ? KEY_PREFIX : GRANT_PREFIX);
    const now = new Date();
    const credential: Credential = {
      id: newId(),
      account_id: accountId,
      type,
      name: input.name,
      secret_hash: hash,
      secret_prefix: visiblePrefix,
      scopes: [...new Set(input.scopes)],
      expires_at: input.expiresInSeconds ? new Date(now.getTime() + input.expiresInSeconds * 1000) : null,
      revoked_at: null,
      created_at: now,
      source: 'admin',
      user_id: null,
      client_id: null,
      revoked_reason: null,
      created_by: input.createdBy?.id ?? null,
      via: null,
    };
    const links: CredentialProject[] = input.projects.map((p) => ({
      credential_id: credential.id,
      project_id: p.project_id,
      account_id: accountId,
      role: p.role,
    }));
    await this.db.transaction(async (tx) => {
      await this.credentials.insert(credential, links, tx);
      await this.audit.record(tx, {
        action: type === 'api_key' ? 'api_key.created' : 'grant.created',
        accountId,
        target: { credential_id: credential.id },
        change: { after: { name: credential.name, scopes: credential.scopes, projects: input.projects, expires_at: credential.expires_at } },
      });
    });
    return { view: view({ ...credential, created_by_email: input.createdBy?.email ?? null }, links), secret };
  }

  /**
   * The grant a person's consent makes (source `oauth`, no secret of its own: its secrets are its
   * tokens), inside the token exchange's transaction `tx`, which the caller has checked the code in.
   */
  async createGrant(input: GrantInput, tx: EntityManager): Promise<Credential> {
    const grant: Credential = {
      id: newId(),
      account_id: input.accountId,
      type: 'grant',
      name: input.name,
      secret_hash: null,
      secret_prefix: input.secretPrefix,
      scopes: input.scopes,
      expires_at: null,
      revoked_at: null,
      created_at: new Date(),
      source: 'oauth',
      user_id: input.userId,
      client_id: input.clientId,
      revoked_reason: null,
      created_by: input.userId,
      via: input.via,
    };
    const links: CredentialProject[] = input.projects.map((p) => ({
      credential_id: grant.id,
      project_id: p.project_id,
      account_id: input.accountId,
      role: p.role,
    }));
    await this.credentials.insert(grant, links, tx);
    await this.audit.record(tx, {
      action: 'grant.created',
      accountId: input.accountId,
      // An ID-JAG's grant names its person here: its actor is the client.
      target: { credential_id: grant.id, client_id: input.clientId, ...(input.via === 'enterprise' ? { user_id: input.userId } : {}) },
      change: {
        after: { name: grant.name, scopes: grant.scopes, projects: input.projects, via: input.via, ...(input.issuer ? { issuer: input.issuer } : {}) },
      },
      // The person's consent makes it, whichever request carries it out; an ID-JAG's grant is the
      // client's request (the request's actor), on the identity provider's word.
      ...(input.via === 'consent' ? { actor: { type: 'user' as const, id: input.userId } } : {}),
    });
    return grant;
  }

  /** Narrows a grant to `scopes` (a refresh asking for fewer), inside `tx`; its live tokens narrow too. */
  async narrowGrant(id: string, scopes: Scope[], tx: EntityManager): Promise<void> {
    await this.credentials.setScopes(id, scopes, tx);
  }

  /**
   * Revokes a grant for `reason` (its person, a replayed code or refresh token), inside `tx` when
   * given: the caller then waits for {@link settled} once it committed.
   */
  async revokeGrant(id: string, reason: RevokedReason, tx?: EntityManager): Promise<void> {
    if (tx) await this.revokeAudited(id, reason, tx);
    else {
      await this.db.transaction((own) => this.revokeAudited(id, reason, own));
      await this.settled();
    }
  }

  /** Revokes every live grant of a deleted client (`client_deleted`) inside `tx`; answers their ids. */
  revokeClientGrants(clientId: string, tx: EntityManager): Promise<{ id: string; account_id: string }[]> {
    return this.credentials.revokeClientGrants(clientId, tx);
  }

  /**
   * Resolves once this instance dropped what a committed change made stale. Every instance is told
   * by the database itself (src/auth/principal.resolver.ts); waiting here only makes sure the instance
   * that made the change answers after it heard, so the next request it serves sees it too.
   */
  settled(): Promise<void> {
    return this.notifications.caughtUp();
  }

  async list(accountId: string, type: CredentialType, limit = 50, cursor?: string): Promise<Page<CredentialView>> {
    await this.accounts.get(accountId);
    const rows = await this.credentials.page(accountId, type, limit + 1, decodeCursor(cursor));
    const links = rows.length ? await this.credentials.links(rows.map((r) => r.id)) : [];
    return toPage(rows, limit, (c) =>
      view(
        c,
        links.filter((l) => l.credential_id === c.id),
      ),
    );
  }

  /**
   * An account's OAuth grants (a person's connected apps), only `userId`'s when given, with their
   * projects and their client's redirect URIs; live ones first, up to `limit`.
   */
  async connections(accountId: string, userId: string | null, limit = 200): Promise<ConnectionView[]> {
    const grants = await this.credentials.oauthGrants(accountId, userId, limit);
    const links = grants.length ? await this.credentials.links(grants.map((g) => g.id)) : [];
    return grants.map((g: ConnectedGrant) => ({
      ...view(
        g,
        links.filter((l) => l.credential_id === g.id),
      ),
      redirect_uris: g.client_redirect_uris ?? [],
    }));
  }

  /**
   * Revokes at once, in every instance (the database tells them all when it commits). With a `scope`, a credential outside it (another account's, another person's) is not_found, as
   * one that does not exist.
   */
  async revoke(type: CredentialType, id: string, scope?: RevokeScope): Promise<void> {
    const credential = await this.credentials.find(id, type);
    const outside = scope && credential && (credential.account_id !== scope.accountId || (scope.userId !== undefined && credential.user_id !== scope.userId));
    if (!credential || outside) throw DomainError.notFound(type === 'api_key' ? 'API key' : 'grant', id);
    if (!credential.revoked_at) await this.db.transaction((tx) => this.revokeAudited(id, scope?.reason ?? 'admin', tx));
    await this.settled();
  }

  /** Revokes a live credential and records it, inside `tx`; nothing when it was revoked already. */
  private async revokeAudited(id: string, reason: RevokedReason, tx: EntityManager): Promise<void> {
    const revoked = await this.credentials.revoke(id, new Date(), reason, tx);
    if (!revoked) return;
    await this.audit.record(tx, {
      action: revoked.type === 'api_key' ? 'api_key.revoked' : 'grant.revoked',
      accountId: revoked.account_id,
      target: { credential_id: id, client_id: revoked.client_id },
      change: { before: { revoked_at: null }, after: { revoked_at: revoked.revoked_at, revoked_reason: reason } },
    });
  }
}

/**
 * What the admin API shows of a credential. An OAuth grant goes by its client's current name, and
 * has no expiry of its own: it lives while its client refreshes it.
 */
function view(c: Credential & { created_by_email: string | null; client_name?: string | null }, links: CredentialProject[]): CredentialView {
  const oauth = c.source === 'oauth';
  return {
    id: c.id,
    type: c.type,
    name: (oauth && 'client_name' in c ? c.client_name : null) ?? c.name,
    prefix: c.secret_prefix,
    scopes: c.scopes,
    projects: links.map((l) => ({ project_id: l.project_id, role: l.role })),
    expires_at: oauth ? null : c.expires_at,
    revoked_at: c.revoked_at,
    created_at: c.created_at,
    source: c.source,
    user_id: c.user_id,
    client_id: c.client_id,
    revoked_reason: c.revoked_reason,
    created_by: c.created_by ?? OPERATOR,
    created_by_email: c.created_by_email,
    via: c.via ?? null,
  };
}
