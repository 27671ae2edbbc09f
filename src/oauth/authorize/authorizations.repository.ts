import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ProjectRole, Scope } from '../../common/tool-names.js';
import { affected, row, run, sql, type Queryable } from '../../database/sql.js';

/** An authorize request waiting for consent (`oauth_requests`). */
export interface AuthorizationRequest {
  id_hash: Buffer;
  browser_session_hash: Buffer;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  resource: string | null;
  scopes: Scope[];
  used_at: Date | null;
  /** Whether its 10 minutes are over, by Postgres' clock. */
  expired: boolean;
}

export interface NewAuthorizationRequest {
  idHash: Buffer;
  browserSessionHash: Buffer;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string | null;
  scopes: Scope[];
}

/** What a person consented to, waiting to be exchanged for a grant (`oauth_codes`). */
export interface NewAuthorizationCode {
  codeHash: Buffer;
  clientId: string;
  userId: string;
  accountId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string | null;
  scopes: Scope[];
  projects: { project_id: string; role: ProjectRole }[];
}

/** How long a consent page may be answered, and a code exchanged. */
export const REQUEST_TTL_S = 600;
export const CODE_TTL_S = 120;
/**
 * The open (unanswered) requests one browser session keeps; a new one drops the oldest. A person
 * may have a few apps connecting at once, and each reload or account switch of a consent page makes
 * a new request: 20 leaves room for that, while a session that loops on the authorize URL holds at
 * most 20 rows of a few KiB (state ≤ 1 KiB, a registered redirect URI, a challenge ≤ 128 characters).
 */
export const OPEN_REQUESTS_PER_SESSION = 20;

/** One browser session's requests are added one at a time (until the transaction ends), so its cap holds under concurrent pages. */
const LOCK_SESSION_REQUESTS = sql<[sessionHash: Buffer]>(
  'oauth_requests.lock_session',
  `SELECT pg_advisory_xact_lock(hashtextextended('oauth_requests:' || encode($1, 'hex'), 0))`,
);
/** Stamped with the time after the lock, so the newest request is the last one added. */
const INSERT_REQUEST = sql<
  [
    idHash: Buffer,
    sessionHash: Buffer,
    clientId: string,
    redirectUri: string,
    state: string | null,
    challenge: string,
    resource: string | null,
    scopes: Scope[],
    ttlS: number,
  ]
>(
  'oauth_requests.insert',
  `INSERT INTO oauth_requests (id_hash, browser_session_hash, client_id, redirect_uri, state, code_challenge, resource, scopes, created_at, expires_at)
   SELECT $1, $2, $3, $4, $5, $6, $7, $8, at, at + make_interval(secs => $9) FROM (SELECT clock_timestamp() AS at) t`,
);
/** Drops a session's open requests beyond the newest `keep`. */
const TRIM_SESSION_REQUESTS = sql<[sessionHash: Buffer, keep: number]>(
  'oauth_requests.trim_session',
  `DELETE FROM oauth_requests WHERE id_hash IN (
     SELECT id_hash FROM oauth_requests WHERE browser_session_hash = $1 AND used_at IS NULL
      ORDER BY created_at DESC, id_hash OFFSET $2)`,
);
const FIND_REQUEST = sql<[idHash: Buffer], AuthorizationRequest>(
  'oauth_requests.find',
  `SELECT id_hash, browser_session_hash, client_id, redirect_uri, state, code_challenge, resource, scopes, used_at, expires_at <= now() AS expired
     FROM oauth_requests WHERE id_hash = $1`,
);
/** Uses a request once: only the session that started it, before it expires, and never twice (concurrent posts included). */
const CONSUME_REQUEST = sql<[idHash: Buffer, sessionHash: Buffer]>(
  'oauth_requests.consume',
  `UPDATE oauth_requests SET used_at = now()
    WHERE id_hash = $1 AND browser_session_hash = $2 AND used_at IS NULL AND expires_at > now()`,
);
const INSERT_CODE = sql<
  [
    codeHash: Buffer,
    clientId: string,
    userId: string,
    accountId: string,
    redirectUri: string,
    challenge: string,
    resource: string | null,
    scopes: Scope[],
    projects: string,
    ttlS: number,
  ]
>(
  'oauth_codes.insert',
  `INSERT INTO oauth_codes (code_hash, client_id, user_id, account_id, redirect_uri, code_challenge, resource, scopes, projects, expires_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, now() + make_interval(secs => $10))`,
);
const PURGE_REQUESTS = sql<[limit: number]>(
  'oauth_requests.purge',
  `DELETE FROM oauth_requests WHERE id_hash IN (
     SELECT id_hash FROM oauth_requests WHERE expires_at < now() - interval '1 hour' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

/** The statements of `oauth_requests` and of the codes consent issues into `oauth_codes`. */
@Injectable()
export class AuthorizationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Stores a request and drops the session's oldest open ones beyond `keep`; run it in a transaction
   * (`db`), which holds the session's lock until it commits.
   */
  async insertRequest(r: NewAuthorizationRequest, keep: number, db: Queryable): Promise<void> {
    await run(db, LOCK_SESSION_REQUESTS, [r.browserSessionHash]);
    await run(db, INSERT_REQUEST, [r.idHash, r.browserSessionHash, r.clientId, r.redirectUri, r.state, r.codeChallenge, r.resource, r.scopes, REQUEST_TTL_S]);
    await run(db, TRIM_SESSION_REQUESTS, [r.browserSessionHash, keep]);
  }

  findRequest(idHash: Buffer): Promise<AuthorizationRequest | null> {
    return row(this.db, FIND_REQUEST, [idHash]);
  }

  /** Marks the request used; false when it was not this session's, had expired or was used already. */
  async consumeRequest(idHash: Buffer, sessionHash: Buffer, db: Queryable = this.db): Promise<boolean> {
    return (await affected(db, CONSUME_REQUEST, [idHash, sessionHash])) === 1;
  }

  async insertCode(c: NewAuthorizationCode, db: Queryable = this.db): Promise<void> {
    await run(db, INSERT_CODE, [
      c.codeHash,
      c.clientId,
      c.userId,
      c.accountId,
      c.redirectUri,
      c.codeChallenge,
      c.resource,
      c.scopes,
      JSON.stringify(c.projects),
      CODE_TTL_S,
    ]);
  }

  /** Deletes up to `limit` requests expired for an hour; answers how many. */
  purgeRequests(limit: number): Promise<number> {
    return affected(this.db, PURGE_REQUESTS, [limit]);
  }
}
