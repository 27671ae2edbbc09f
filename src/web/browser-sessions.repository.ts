import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, run, sql } from '../database/sql.js';
import type { User } from '../users/user.js';

export interface BrowserSessionRow {
  id_hash: Buffer;
  csrf: string;
  expires_at: Date;
  user: User;
}

const INSERT = sql<[idHash: Buffer, userId: string, csrf: string, expiresAt: Date]>(
  'browser_sessions.insert',
  `INSERT INTO browser_sessions (id_hash, user_id, csrf, expires_at) VALUES ($1, $2, $3, $4)`,
);
const FIND = sql<[idHash: Buffer], BrowserSessionRow>(
  'browser_sessions.find',
  `SELECT s.id_hash, s.csrf, s.expires_at,
          json_build_object('id', u.id, 'email', u.email, 'name', u.name, 'disabled_at', u.disabled_at, 'created_at', u.created_at) AS user
     FROM browser_sessions s JOIN users u ON u.id = s.user_id
    WHERE s.id_hash = $1 AND s.expires_at > now() AND u.disabled_at IS NULL`,
);
const DELETE = sql<[idHash: Buffer]>('browser_sessions.delete', `DELETE FROM browser_sessions WHERE id_hash = $1`);
const PURGE = sql<[limit: number]>(
  'browser_sessions.purge',
  `DELETE FROM browser_sessions WHERE id_hash IN (
     SELECT id_hash FROM browser_sessions WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

/** The statements of `browser_sessions` (the rb_session cookie). */
@Injectable()
export class BrowserSessionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(idHash: Buffer, userId: string, csrf: string, expiresAt: Date): Promise<void> {
    await run(this.db, INSERT, [idHash, userId, csrf, expiresAt]);
  }

  /** The live session with this hash, of a person who is not disabled. */
  find(idHash: Buffer): Promise<BrowserSessionRow | null> {
    return row(this.db, FIND, [idHash]);
  }

  async delete(idHash: Buffer): Promise<void> {
    await run(this.db, DELETE, [idHash]);
  }

  /** Deletes up to `limit` expired sessions; answers how many. */
  purge(limit: number): Promise<number> {
    return affected(this.db, PURGE, [limit]);
  }
}
