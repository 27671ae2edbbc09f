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
  /** Made in the console, its person now belongs to an account its maker does not own. */
  outreached: boolean;
}

/** A usable link as its page shows it: whose sign-in it is and, when made in the console, by whom and where. */
export interface LinkDescription {
  email: string;
  made_by: string | null;
  account_name: string | null;
}

/** Where a link was made in the console: the account and the owner who made it. */
export interface LinkMaker {
  accountId: string;
  userId: string;
}

// A link made in the console signs in its person only while every account they belong to is one its
// maker owns: a link signs in the person everywhere, so it must reach no further than its maker does.
const WITHIN_MAKER = (link: string) => `(${link}.created_by IS NULL OR NOT EXISTS (
     SELECT 1 FROM account_members m
      WHERE m.user_id = ${link}.user_id
        AND NOT EXISTS (SELECT 1 FROM account_members o WHERE o.account_id = m.account_id AND o.user_id = ${link}.created_by AND o.role = 'owner')))`;

const INSERT = sql<[tokenHash: Buffer, userId: string, returnTo: string | null, expiresInS: number], { expires_at: Date }>(
  'login_links.insert',
  `INSERT INTO login_links (token_hash, user_id, return_to, expires_at)
   VALUES ($1, $2, $3, now() + make_interval(secs => $4))
   RETURNING expires_at`,
);

// The same rule at the moment it is made: no row when the person reaches further than the maker.
const INSERT_BY_OWNER = sql<
  [tokenHash: Buffer, userId: string, returnTo: string | null, expiresInS: number, accountId: string, createdBy: string],
  { expires_at: Date }
>(
  'login_links.insert_by_owner',
  `INSERT INTO login_links (token_hash, user_id, return_to, expires_at, account_id, created_by)
   SELECT $1, l.user_id, $3, now() + make_interval(secs => $4), $5, l.created_by
     FROM (SELECT $2::uuid AS user_id, $6::uuid AS created_by) l
    WHERE ${WITHIN_MAKER('l')}
   RETURNING expires_at`,
);

// The same rule before any link is asked for: whether the maker may make this person one (the console
// shows the button only then).
const WITHIN_REACH = sql<[userId: string, createdBy: string], { within: boolean }>(
  'login_links.within_reach',
  `SELECT ${WITHIN_MAKER('l')} AS within FROM (SELECT $1::uuid AS user_id, $2::uuid AS created_by) l`,
);

// One statement: two posts of the same link cannot both sign in, and a disabled person's link stays unused.
const CONSUME = sql<[tokenHash: Buffer], ConsumedLink>(
  'login_links.consume',
  `UPDATE login_links l SET used_at = now()
     FROM users u
    WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now()
      AND u.id = l.user_id AND u.disabled_at IS NULL
      AND ${WITHIN_MAKER('l')}
   RETURNING l.user_id, l.return_to`,
);

const STATE = sql<[tokenHash: Buffer], LinkState>(
  'login_links.state',
  `SELECT l.used_at IS NOT NULL AS used, l.expires_at <= now() AS expired, u.disabled_at IS NOT NULL AS disabled,
          NOT ${WITHIN_MAKER('l')} AS outreached
     FROM login_links l JOIN users u ON u.id = l.user_id
    WHERE l.token_hash = $1`,
);

const DESCRIBE = sql<[tokenHash: Buffer], LinkDescription>(
  'login_links.describe',
  `SELECT u.email, maker.email AS made_by, a.name AS account_name
     FROM login_links l
     JOIN users u ON u.id = l.user_id
     LEFT JOIN users maker ON maker.id = l.created_by
     LEFT JOIN accounts a ON a.id = l.account_id
    WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now() AND u.disabled_at IS NULL
      AND ${WITHIN_MAKER('l')}`,
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

  /**
   * Inserts a link made in the console by `maker`, only if the person belongs to no account the maker
   * does not own: answers its expiry, or null when it was not made.
   */
  async insertByOwner(
    tokenHash: Buffer,
    userId: string,
    returnTo: string | null,
    expiresInS: number,
    maker: LinkMaker,
    db: Queryable = this.db,
  ): Promise<Date | null> {
    const made = await row(db, INSERT_BY_OWNER, [tokenHash, userId, returnTo, expiresInS, maker.accountId, maker.userId]);
    return made?.expires_at ?? null;
  }

  /** Whether `maker` may make the person `userId` a link: every account the person belongs to is one the maker owns. */
  async withinReach(userId: string, maker: LinkMaker, db: Queryable = this.db): Promise<boolean> {
    return (await row(db, WITHIN_REACH, [userId, maker.userId]))!.within;
  }

  /** Whose sign-in a usable link is, and who made it where; null when it would not sign in. */
  describe(tokenHash: Buffer, db: Queryable = this.db): Promise<LinkDescription | null> {
    return row(db, DESCRIBE, [tokenHash]);
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
