import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { row, run, sql, type Queryable } from '../../database/sql.js';
import type { OAuthClient } from './oauth-client.js';

const FIND = sql<[id: string], OAuthClient>('oauth_clients.find', `SELECT * FROM oauth_clients WHERE id = $1`);
const TOUCH = sql<[id: string]>(
  'oauth_clients.touch',
  // Written at most once a minute: every token request names its client.
  `UPDATE oauth_clients SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
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
}
