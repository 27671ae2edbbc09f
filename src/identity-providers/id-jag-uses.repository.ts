import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, sql } from '../database/sql.js';

// The primary key (issuer, jti) decides: of two instances exchanging one ID-JAG at once, one inserts.
const USE = sql<[issuer: string, jti: string, expiresAt: Date]>(
  'id_jag_uses.insert',
  `INSERT INTO id_jag_uses (issuer, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT (issuer, jti) DO NOTHING`,
);
// An ID-JAG past its exp is refused by its exp: its jti need not be kept any longer.
const PURGE = sql<[limit: number]>(
  'id_jag_uses.purge',
  `DELETE FROM id_jag_uses WHERE (issuer, jti) IN (
     SELECT issuer, jti FROM id_jag_uses WHERE expires_at < now() - interval '5 minutes' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

/** The ID-JAGs exchanged, by issuer and `jti`, until they expire. */
@Injectable()
export class IdJagUsesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Records the use; false when this issuer's `jti` was used already. */
  async use(issuer: string, jti: string, expiresAt: Date): Promise<boolean> {
    return (await affected(this.db, USE, [issuer, jti, expiresAt])) === 1;
  }

  purge(limit: number): Promise<number> {
    return affected(this.db, PURGE, [limit]);
  }
}
