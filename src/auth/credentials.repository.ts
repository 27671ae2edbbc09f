import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ProjectRole, Scope } from '../common/tool-names.js';
import { row, rows, run, sql, type Queryable } from '../database/sql.js';
import type { Credential, CredentialProject, CredentialSource, CredentialType, GrantVia, RevokedReason } from './credential.entity.js';

/** A credential with the projects it reaches, as the request path resolves a bearer secret to it. */
export interface PrincipalRow {
  id: string;
  account_id: string;
  type: CredentialType;
  name: string;
  secret_hash: Buffer;
  scopes: Scope[];
  expires_at: Date | null;
  projects: { id: string; name: string; role: ProjectRole; disabled_tools: string[] }[] | null;
}

const INSERT = sql<
  [
    id: string,
    accountId: string,
    type: CredentialType,
    name: string,
    secretHash: Buffer | null,
    secretPrefix: string,
    scopes: Scope[],
    expiresAt: Date | null,
    createdAt: Date,
    source: CredentialSource,
    userId: string | null,
    clientId: string | null,
    createdBy: string | null,
    via: GrantVia | null,
  ]
>(
  'credentials.insert',
  `INSERT INTO credentials (id, account_id, type, name, secret_hash, secret_prefix, scopes, expires_at, revoked_at, created_at, source, user_id, client_id, created_by, via)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10, $11, $12, $13, $14)`,
);

const INSERT_LINKS = sql<[credentialId: string, accountId: string, projectIds: string[], roles: ProjectRole[]]>(
  'credentials.insert_links',
  `INSERT INTO credential_projects (credential_id, project_id, account_id, role)
   SELECT $1::uuid, project_id, $2::uuid, role FROM unnest($3::uuid[], $4::text[]) AS l(project_id, role)`,
);

/** A credential as the admin lists show it: an OAuth grant with its client's current name, and its maker's email. */
export type ListedCredential = Credential & { client_name: string | null; created_by_email: string | null };

// An OAuth grant is shown under its client's name (a metadata document may rename it); the client
// may be gone (deleted: its grants are revoked), then the name the grant was made with stays.
const PAGE = sql<[accountId: string, type: CredentialType, limit: number], ListedCredential>(
  'credentials.page',
  `SELECT c.*, oc.client_name, maker.email AS created_by_email
     FROM credentials c LEFT JOIN oauth_clients oc ON oc.id = c.client_id LEFT JOIN users maker ON maker.id = c.created_by
    WHERE c.account_id = $1 AND c.type = $2 ORDER BY c.id DESC LIMIT $3`,
);

const PAGE_AFTER = sql<[accountId: string, type: CredentialType, after: string, limit: number], ListedCredential>(
  'credentials.page_after',
  `SELECT c.*, oc.client_name, maker.email AS created_by_email
     FROM credentials c LEFT JOIN oauth_clients oc ON oc.id = c.client_id LEFT JOIN users maker ON maker.id = c.created_by
    WHERE c.account_id = $1 AND c.type = $2 AND c.id < $3 ORDER BY c.id DESC LIMIT $4`,
);

/** A person's connection as the console lists it: the grant, its client's current name and redirect URIs. */
export type ConnectedGrant = ListedCredential & { client_redirect_uris: string[] | null };

// The console's Connected apps: an account's OAuth grants (only one person's when $2 is given),
// live ones first, newest first.
const OAUTH_GRANTS = sql<[accountId: string, userId: string | null, limit: number], ConnectedGrant>(
  'credentials.oauth_grants',
  `SELECT c.*, oc.client_name, oc.redirect_uris AS client_redirect_uris, maker.email AS created_by_email
     FROM credentials c LEFT JOIN oauth_clients oc ON oc.id = c.client_id LEFT JOIN users maker ON maker.id = c.created_by
    WHERE c.account_id = $1 AND c.type = 'grant' AND c.source = 'oauth' AND ($2::uuid IS NULL OR c.user_id = $2)
    ORDER BY c.revoked_at IS NOT NULL, c.id DESC LIMIT $3`,
);

const LINKS = sql<[credentialIds: string[]], CredentialProject>('credentials.links', `SELECT * FROM credential_projects WHERE credential_id = ANY($1::uuid[])`);

const FIND = sql<[id: string, type: CredentialType], Credential>('credentials.find', `SELECT * FROM credentials WHERE id = $1 AND type = $2`);

const REVOKE = sql<[id: string, at: Date, reason: RevokedReason], RevokedCredential>(
  'credentials.revoke',
  `UPDATE credentials SET revoked_at = $2, revoked_reason = $3 WHERE id = $1 AND revoked_at IS NULL RETURNING type, account_id, client_id, revoked_at`,
);

/** A credential just revoked: what the audit trail names of it. */
export type RevokedCredential = Pick<Credential, 'type' | 'account_id' | 'client_id' | 'revoked_at'>;

const SET_SCOPES = sql<[credentialId: string, scopes: Scope[]]>('credentials.set_scopes', `UPDATE credentials SET scopes = $2 WHERE id = $1`);

const REVOKE_CLIENT_GRANTS = sql<[clientId: string], { id: string; account_id: string }>(
  'credentials.revoke_client_grants',
  `UPDATE credentials SET revoked_at = now(), revoked_reason = 'client_deleted'
    WHERE client_id = $1 AND source = 'oauth' AND revoked_at IS NULL RETURNING id, account_id`,
);

/**
 * The unrevoked credential a bearer secret names: an API key or admin grant by its own hash, an OAuth
 * grant by one of its access tokens (with that token's expiry). An OAuth grant reaches only the
 * projects where its person still has a role, at the lower of the consented and the current role,
 * and nothing at all once the person is disabled; a grant made from an ID-JAG (`via` enterprise),
 * nothing at all once the person is no longer a member of its account either.
 */
const FIND_PRINCIPAL = sql<[secretHash: Buffer], PrincipalRow>(
  'credentials.find_principal',
  `WITH found AS (
     SELECT c.id, c.account_id, c.type, c.name, c.scopes, c.user_id, c.expires_at, c.secret_hash AS matched_hash, c.via
       FROM credentials c
      WHERE c.secret_hash = $1 AND c.revoked_at IS NULL
     UNION ALL
     SELECT c.id, c.account_id, c.type, c.name, c.scopes, c.user_id, t.expires_at, t.token_hash, c.via
       FROM oauth_tokens t JOIN credentials c ON c.id = t.credential_id
      WHERE t.token_hash = $1 AND t.kind = 'access' AND c.revoked_at IS NULL
   )
   SELECT f.id, f.account_id, f.type, f.name, f.matched_hash AS secret_hash, f.scopes, f.expires_at,
          (SELECT json_agg(json_build_object(
                    'id', p.id, 'name', p.name, 'disabled_tools', p.disabled_tools,
                    'role', CASE WHEN f.user_id IS NULL OR am.role = 'owner' THEN cp.role
                                 ELSE (ARRAY['viewer', 'editor', 'owner'])[LEAST(array_position(ARRAY['viewer', 'editor', 'owner'], cp.role),
                                                                                array_position(ARRAY['viewer', 'editor', 'owner'], pm.role))] END)
                  ORDER BY p.id)
             FROM credential_projects cp
             JOIN projects p ON p.id = cp.project_id AND p.account_id = f.account_id
             LEFT JOIN account_members am ON am.account_id = f.account_id AND am.user_id = f.user_id
             LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = f.user_id
            WHERE cp.credential_id = f.id AND (f.user_id IS NULL OR am.role = 'owner' OR pm.role IS NOT NULL)) AS projects
     FROM found f
     LEFT JOIN users u ON u.id = f.user_id
    WHERE (f.user_id IS NULL OR u.disabled_at IS NULL)
      AND (f.via IS DISTINCT FROM 'enterprise'
           OR EXISTS (SELECT 1 FROM account_members m WHERE m.account_id = f.account_id AND m.user_id = f.user_id))`,
  // Prepared: planning it took three times as long as running it (bench/README.md, "One lookup per expiry").
  { hot: true, prepared: true },
);

/**
 * The `credentials` table and its `credential_projects` links. Their triggers tell every instance
 * when what a credential may do changes (src/database/migrations/*-principal-change-triggers.ts).
 */
@Injectable()
export class CredentialsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the credential and its project links. */
  async insert(credential: Credential, links: readonly CredentialProject[], db: Queryable = this.db): Promise<void> {
    const c = credential;
    await run(db, INSERT, [
      c.id,
      c.account_id,
      c.type,
      c.name,
      c.secret_hash,
      c.secret_prefix,
      c.scopes,
      c.expires_at,
      c.created_at,
      c.source,
      c.user_id,
      c.client_id,
      c.created_by,
      c.via,
    ]);
    if (links.length) await run(db, INSERT_LINKS, [c.id, c.account_id, links.map((l) => l.project_id), links.map((l) => l.role)]);
  }

  /** An account's credentials of one type, newest first, up to `limit`, older than `after` if given. */
  page(accountId: string, type: CredentialType, limit: number, after?: string): Promise<ListedCredential[]> {
    return after ? rows(this.db, PAGE_AFTER, [accountId, type, after, limit]) : rows(this.db, PAGE, [accountId, type, limit]);
  }

  /** An account's OAuth grants, of one person when `userId` is given; live ones first, newest first. */
  oauthGrants(accountId: string, userId: string | null, limit: number): Promise<ConnectedGrant[]> {
    return rows(this.db, OAUTH_GRANTS, [accountId, userId, limit]);
  }

  /** The project links of these credentials. */
  links(credentialIds: string[]): Promise<CredentialProject[]> {
    return rows(this.db, LINKS, [credentialIds]);
  }

  find(id: string, type: CredentialType): Promise<Credential | null> {
    return row(this.db, FIND, [id, type]);
  }

  /** Revokes a live credential; answers it, or null when it was revoked already (or is not). */
  revoke(id: string, at: Date, reason: RevokedReason, db: Queryable = this.db): Promise<RevokedCredential | null> {
    return row(db, REVOKE, [id, at, reason]);
  }

  /** Sets a credential's scopes. */
  async setScopes(id: string, scopes: Scope[], db: Queryable = this.db): Promise<void> {
    await run(db, SET_SCOPES, [id, scopes]);
  }

  /** Revokes every live OAuth grant of a client (`client_deleted`); answers their ids. */
  async revokeClientGrants(clientId: string, db: Queryable = this.db): Promise<{ id: string; account_id: string }[]> {
    return (await run(db, REVOKE_CLIENT_GRANTS, [clientId])).rows;
  }

  /** The unrevoked credential with this secret hash, with the projects it reaches. */
  findPrincipal(secretHash: Buffer): Promise<PrincipalRow | null> {
    return row(this.db, FIND_PRINCIPAL, [secretHash]);
  }
}
