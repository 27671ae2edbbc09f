import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, run, sql, type Queryable } from '../database/sql.js';

/** A login link as consumed: whose it is and where it was made to lead. */
export interface ConsumedLink {
  user_id: string;
  return_to: string | null;
}

/** Why a link did not sign anyone in, as far as its row tells. */
export interface LinkState {
  used: boolean;
  expired: boolean;
  disabled: boolean;
}

const INSERT = sql<[tokenHash: Buffer, userId: string, returnTo: string | null, expiresInS: number], { expires_at: Date }>(
  'login_links.insert',
  `INSERT INTO login_links (token_hash, user_id, return_to, expires_at)
   VALUES ($1, $2, $3, now() + make_interval(secs => $4))
   RETURNING expires_at`,
);

// One statement: two posts of the same link cannot both sign in, and a disabled person's link stays unused.
const CONSUME = sql<[tokenHash: Buffer], ConsumedLink>(
  'login_links.consume',
  `UPDATE login_links l SET used_at = now()
     FROM users u
    WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now()
      AND u.id = l.user_id AND u.disabled_at IS NULL
   RETURNING l.user_id, l.return_to`,
);

const STATE = sql<[tokenHash: Buffer], LinkState>(
  'login_links.state',
  `SELECT l.used_at IS NOT NULL AS used, l.expires_at <= now() AS expired, u.disabled_at IS NOT NULL AS disabled
     FROM login_links l JOIN users u ON u.id = l.user_id
    WHERE l.token_hash = $1`,
);

// Links stay a day past their expiry, so a late click is still told "expired" or "used" rather than "unknown".
const PURGE = sql<[limit: number]>(
  'login_links.purge',
  `DELETE FROM login_links WHERE token_hash IN (
     SELECT token_hash FROM login_links WHERE expires_at < now() - interval '1 day' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

/** The statements of `login_links`: single-use sign-in links, kept as the hash of their token. */
@Injectable()
export class LoginLinksRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(tokenHash: Buffer, userId: string, returnTo: string | null, expiresInS: number, db: Queryable = this.db): Promise<Date> {
    const { rows } = await run(db, INSERT, [tokenHash, userId, returnTo, expiresInS]);
    return rows[0].expires_at;
  }

  /** Marks the link used and answers it, if it was unused, unexpired and its person not disabled; else null. */
  consume(tokenHash: Buffer, db: Queryable = this.db): Promise<ConsumedLink | null> {
    return row(db, CONSUME, [tokenHash]);
  }

  /** Deletes up to `limit` links expired for a day; answers how many. */
  purge(limit: number): Promise<number> {
    return affected(this.db, PURGE, [limit]);
  }

  /** What became of a link that did not consume: null when there is no such link. */
  state(tokenHash: Buffer, db: Queryable = this.db): Promise<LinkState | null> {
    return row(db, STATE, [tokenHash]);
  }
}
