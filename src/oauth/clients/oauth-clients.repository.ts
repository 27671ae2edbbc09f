import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, rows, run, sql, type Queryable } from '../../database/sql.js';
import type { OAuthClient, TokenEndpointAuthMethod } from './oauth-client.js';

const FIND = sql<[id: string], OAuthClient>('oauth_clients.find', `SELECT * FROM oauth_clients WHERE id = $1`);
const TOUCH = sql<[id: string]>(
  'oauth_clients.touch',
  // Written at most once a minute: every token request names its client.
  `UPDATE oauth_clients SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
);
const INSERT = sql<
  [
    id: string,
    clientName: string | null,
    redirectUris: string[],
    method: TokenEndpointAuthMethod,
    secretHash: Buffer | null,
    metadata: Record<string, unknown>,
  ],
  OAuthClient
>(
  'oauth_clients.insert',
  `INSERT INTO oauth_clients (id, source, client_name, redirect_uris, token_endpoint_auth_method, secret_hash, metadata)
   VALUES ($1, 'dcr', $2, $3, $4, $5, $6) RETURNING *`,
);
/** Stores a fetched metadata document as the client it describes (never over a registered client). */
const UPSERT_DOCUMENT = sql<[id: string, clientName: string | null, redirectUris: string[], metadata: Record<string, unknown>, freshS: number], OAuthClient>(
  'oauth_clients.upsert_document',
  `INSERT INTO oauth_clients (id, source, client_name, redirect_uris, token_endpoint_auth_method, metadata, document_fetched_at, document_fresh_until)
   VALUES ($1, 'cimd', $2, $3, 'none', $4, now(), now() + make_interval(secs => $5))
   ON CONFLICT (id) DO UPDATE SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris, metadata = EXCLUDED.metadata,
          document_fetched_at = EXCLUDED.document_fetched_at, document_fresh_until = EXCLUDED.document_fresh_until
    WHERE oauth_clients.source = 'cimd'
   RETURNING *`,
);

/** A client as the admin list shows it, with the exact creation time its cursor needs. */
export interface ClientListRow {
  id: string;
  client_name: string | null;
  redirect_uris: string[];
  source: 'dcr' | 'cimd';
  created_at: Date;
  last_used_at: Date | null;
  /** `created_at` to the microsecond, as Postgres writes it (a JS Date has milliseconds only). */
  created_key: string;
}

const LIST_COLUMNS = `id, client_name, redirect_uris, source, created_at, last_used_at, created_at::text AS created_key`;
const PAGE = sql<[limit: number], ClientListRow>('oauth_clients.page', `SELECT ${LIST_COLUMNS} FROM oauth_clients ORDER BY created_at DESC, id DESC LIMIT $1`);
const PAGE_AFTER = sql<[createdAt: string, id: string, limit: number], ClientListRow>(
  'oauth_clients.page_after',
  `SELECT ${LIST_COLUMNS} FROM oauth_clients WHERE (created_at, id) < ($1::timestamptz, $2) ORDER BY created_at DESC, id DESC LIMIT $3`,
);
const DELETE = sql<[id: string]>('oauth_clients.delete', `DELETE FROM oauth_clients WHERE id = $1`);

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
    client: {
      id: string;
      client_name: string | null;
      redirect_uris: string[];
      token_endpoint_auth_method: TokenEndpointAuthMethod;
      secret_hash: Buffer | null;
      metadata: Record<string, unknown>;
    },
    db: Queryable = this.db,
  ): Promise<OAuthClient> {
    const c = client;
    return (await row(db, INSERT, [c.id, c.client_name, c.redirect_uris, c.token_endpoint_auth_method, c.secret_hash, c.metadata]))!;
  }

  /** Stores the client a metadata document describes, fresh for `freshS` seconds; null if the id is a registered client's. */
  upsertDocument(doc: {
    id: string;
    client_name: string | null;
    redirect_uris: string[];
    metadata: Record<string, unknown>;
    freshS: number;
  }): Promise<OAuthClient | null> {
    return row(this.db, UPSERT_DOCUMENT, [doc.id, doc.client_name, doc.redirect_uris, doc.metadata, doc.freshS]);
  }

  /** Clients newest first, up to `limit`, after the (created_at, id) position given. */
  page(limit: number, after?: { createdAt: string; id: string }): Promise<ClientListRow[]> {
    return after ? rows(this.db, PAGE_AFTER, [after.createdAt, after.id, limit]) : rows(this.db, PAGE, [limit]);
  }

  /** Deletes the client (its pending requests and codes go with it); answers whether it existed. */
  async delete(id: string, db: Queryable = this.db): Promise<boolean> {
    return (await affected(db, DELETE, [id])) === 1;
  }

  /** Deletes up to `limit` clients that never got a grant within a day; answers how many. */
  purgeUnused(limit: number): Promise<number> {
    return affected(this.db, PURGE_UNUSED, [limit]);
  }
}
