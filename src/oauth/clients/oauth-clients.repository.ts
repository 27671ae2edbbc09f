import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, run, sql, type Queryable } from '../../database/sql.js';
import type { OAuthClient, TokenEndpointAuthMethod } from './oauth-client.js';

const FIND = sql<[id: string], OAuthClient>('oauth_clients.find', `SELECT * FROM oauth_clients WHERE id = $1`);
const TOUCH = sql<[id: string]>(
  'oauth_clients.touch',
  // Written at most once a minute: every token request names its client.
  `UPDATE oauth_clients SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
);
const INSERT = sql<
  [id: string, clientName: string | null, redirectUris: string[], method: TokenEndpointAuthMethod, secretHash: Buffer | null, metadata: Record<string, unknown>],
  OAuthClient
>(
  'oauth_clients.insert',
  `INSERT INTO oauth_clients (id, source, client_name, redirect_uris, token_endpoint_auth_method, secret_hash, metadata)
   VALUES ($1, 'dcr', $2, $3, $4, $5, $6) RETURNING *`,
);
/** Clients that never got a grant, a day after they appeared; a batch at a time, skipping rows another instance holds. */
const PURGE_UNUSED = sql<[limit: number]>(
  'oauth_clients.purge_unused',
  `DELETE FROM oauth_clients WHERE id IN (
     SELECT c.id FROM oauth_clients c
      WHERE c.last_used_at IS NULL AND c.created_at < now() - interval '24 hours'
        AND NOT EXISTS (SELECT 1 FROM credentials g WHERE g.client_id = c.id)
      LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

/** The statements of `oauth_clients`. */
@Injectable()
export class OAuthClientsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  find(id: string, db: Queryable = this.db): Promise<OAuthClient | null> {
    return row(db, FIND, [id]);
  }

  /** Marks the client used (a grant was made or refreshed for it). */
  async touch(id: string, db: Queryable = this.db): Promise<void> {
    await run(db, TOUCH, [id]);
  }

  /** Stores a registered (dcr) client. */
  async insert(
    client: { id: string; client_name: string | null; redirect_uris: string[]; token_endpoint_auth_method: TokenEndpointAuthMethod; secret_hash: Buffer | null; metadata: Record<string, unknown> },
    db: Queryable = this.db,
  ): Promise<OAuthClient> {
    const c = client;
    return (await row(db, INSERT, [c.id, c.client_name, c.redirect_uris, c.token_endpoint_auth_method, c.secret_hash, c.metadata]))!;
  }

  /** Deletes up to `limit` clients that never got a grant within a day; answers how many. */
  purgeUnused(limit: number): Promise<number> {
    return affected(this.db, PURGE_UNUSED, [limit]);
  }
}
