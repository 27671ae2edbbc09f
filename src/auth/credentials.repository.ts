import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ProjectRole, Scope } from '../common/tool-names.js';
import { notifyCache } from '../database/notifications.service.js';
import { row, rows, run, sql, type Queryable } from '../database/sql.js';
import type { Credential, CredentialProject, CredentialType } from './credential.entity.js';

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

const INSERT = sql<[id: string, accountId: string, type: CredentialType, name: string, secretHash: Buffer, secretPrefix: string, scopes: Scope[], expiresAt: Date | null, createdAt: Date]>(
  'credentials.insert',
  `INSERT INTO credentials (id, account_id, type, name, secret_hash, secret_prefix, scopes, expires_at, revoked_at, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9)`,
);

const INSERT_LINKS = sql<[credentialId: string, accountId: string, projectIds: string[], roles: ProjectRole[]]>(
  'credentials.insert_links',
  `INSERT INTO credential_projects (credential_id, project_id, account_id, role)
   SELECT $1::uuid, project_id, $2::uuid, role FROM unnest($3::uuid[], $4::text[]) AS l(project_id, role)`,
);

const PAGE = sql<[accountId: string, type: CredentialType, limit: number], Credential>(
  'credentials.page',
  `SELECT * FROM credentials WHERE account_id = $1 AND type = $2 ORDER BY id DESC LIMIT $3`,
);

const PAGE_AFTER = sql<[accountId: string, type: CredentialType, after: string, limit: number], Credential>(
  'credentials.page_after',
  `SELECT * FROM credentials WHERE account_id = $1 AND type = $2 AND id < $3 ORDER BY id DESC LIMIT $4`,
);

const LINKS = sql<[credentialIds: string[]], CredentialProject>('credentials.links', `SELECT * FROM credential_projects WHERE credential_id = ANY($1::uuid[])`);

const FIND = sql<[id: string, type: CredentialType], Credential>('credentials.find', `SELECT * FROM credentials WHERE id = $1 AND type = $2`);

const REVOKE = sql<[id: string, at: Date]>('credentials.revoke', `UPDATE credentials SET revoked_at = $2 WHERE id = $1`);

const FIND_PRINCIPAL = sql<[secretHash: Buffer], PrincipalRow>(
  'credentials.find_principal',
  `SELECT c.id, c.account_id, c.type, c.name, c.secret_hash, c.scopes, c.expires_at,
          (SELECT json_agg(json_build_object('id', p.id, 'name', p.name, 'role', cp.role, 'disabled_tools', p.disabled_tools) ORDER BY p.id)
             FROM credential_projects cp JOIN projects p ON p.id = cp.project_id AND p.account_id = c.account_id
            WHERE cp.credential_id = c.id) AS projects
     FROM credentials c
    WHERE c.secret_hash = $1 AND c.revoked_at IS NULL`,
  { hot: true },
);

const NOTIFY_CACHE = sql<[payload: string]>('credentials.notify_cache', `SELECT ${notifyCache('$1')}`);

/** The `credentials` table and its `credential_projects` links. */
@Injectable()
export class CredentialsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the credential and its project links. */
  async insert(credential: Credential, links: readonly CredentialProject[], db: Queryable = this.db): Promise<void> {
    const c = credential;
    await run(db, INSERT, [c.id, c.account_id, c.type, c.name, c.secret_hash, c.secret_prefix, c.scopes, c.expires_at, c.created_at]);
    if (links.length) await run(db, INSERT_LINKS, [c.id, c.account_id, links.map((l) => l.project_id), links.map((l) => l.role)]);
  }

  /** An account's credentials of one type, newest first, up to `limit`, older than `after` if given. */
  page(accountId: string, type: CredentialType, limit: number, after?: string): Promise<Credential[]> {
    return after ? rows(this.db, PAGE_AFTER, [accountId, type, after, limit]) : rows(this.db, PAGE, [accountId, type, limit]);
  }

  /** The project links of these credentials. */
  links(credentialIds: string[]): Promise<CredentialProject[]> {
    return rows(this.db, LINKS, [credentialIds]);
  }

  find(id: string, type: CredentialType): Promise<Credential | null> {
    return row(this.db, FIND, [id, type]);
  }

  async revoke(id: string, at: Date): Promise<void> {
    await run(this.db, REVOKE, [id, at]);
  }

  /** The unrevoked credential with this secret hash, with the projects it reaches. */
  findPrincipal(secretHash: Buffer): Promise<PrincipalRow | null> {
    return row(this.db, FIND_PRINCIPAL, [secretHash]);
  }

  /** Tells every instance (and this one) that cached principals changed: `credential:<hash>` or `credentials`. */
  async notifyCache(payload: string): Promise<void> {
    await run(this.db, NOTIFY_CACHE, [payload]);
  }
}
