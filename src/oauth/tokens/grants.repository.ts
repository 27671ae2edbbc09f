import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ProjectRole, Scope } from '../../common/tool-names.js';
import { affected, row, run, sql, type Queryable } from '../../database/sql.js';
import type { TokenEndpointAuthMethod } from '../clients/oauth-client.js';

export type TokenKind = 'access' | 'refresh';

/** A code as the token endpoint exchanges it, locked for the exchange. */
export interface CodeRow {
  client_id: string;
  user_id: string;
  account_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string | null;
  scopes: Scope[];
  projects: { project_id: string; role: ProjectRole }[];
  /** The grant it made, once exchanged. */
  credential_id: string | null;
  used_at: Date | null;
  expired: boolean;
  user_disabled: boolean;
}

/** A refresh token with its grant, locked for a rotation. */
export interface RefreshRow {
  credential_id: string;
  client_id: string;
  rotated: boolean;
  /** Rotated less than OAUTH_REFRESH_REUSE_GRACE_S ago. */
  within_grace: boolean;
  expired: boolean;
  scopes: Scope[];
  revoked: boolean;
  user_disabled: boolean;
}

const FIND_CODE_FOR_UPDATE = sql<[codeHash: Buffer], CodeRow>(
  'oauth_codes.find_for_update',
  `SELECT c.client_id, c.user_id, c.account_id, c.redirect_uri, c.code_challenge, c.resource, c.scopes, c.projects,
          c.credential_id, c.used_at, c.expires_at <= now() AS expired, u.disabled_at IS NOT NULL AS user_disabled
     FROM oauth_codes c JOIN users u ON u.id = c.user_id
    WHERE c.code_hash = $1
      FOR UPDATE OF c`,
);
const MARK_CODE_USED = sql<[codeHash: Buffer, credentialId: string]>(
  'oauth_codes.mark_used',
  `UPDATE oauth_codes SET used_at = now(), credential_id = $2 WHERE code_hash = $1`,
);
const INSERT_TOKEN = sql<[tokenHash: Buffer, credentialId: string, kind: TokenKind, clientId: string, ttlS: number]>(
  'oauth_tokens.insert',
  `INSERT INTO oauth_tokens (token_hash, credential_id, kind, client_id, expires_at) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
);
// The token row and its grant's row, both locked: refreshes of one grant take turns, and a
// revocation waits for the refresh under way (or the reverse).
const FIND_REFRESH_FOR_UPDATE = sql<[tokenHash: Buffer, graceS: number], RefreshRow>(
  'oauth_tokens.find_refresh_for_update',
  `SELECT t.credential_id, t.client_id, t.rotated_at IS NOT NULL AS rotated,
          COALESCE(t.rotated_at >= now() - make_interval(secs => $2), false) AS within_grace,
          t.expires_at <= now() AS expired, g.scopes, g.revoked_at IS NOT NULL AS revoked,
          COALESCE(u.disabled_at IS NOT NULL, false) AS user_disabled
     FROM oauth_tokens t
     JOIN credentials g ON g.id = t.credential_id
     LEFT JOIN users u ON u.id = g.user_id
    WHERE t.token_hash = $1 AND t.kind = 'refresh'
      FOR UPDATE OF t, g`,
);
const ROTATE = sql<[tokenHash: Buffer]>('oauth_tokens.rotate', `UPDATE oauth_tokens SET rotated_at = now() WHERE token_hash = $1 AND rotated_at IS NULL`);
/** A token, with how its client authenticates (null when the client is gone). */
export interface FoundToken {
  credential_id: string;
  client_id: string;
  kind: TokenKind;
  client_auth_method: TokenEndpointAuthMethod | null;
}
const FIND_TOKEN = sql<[tokenHash: Buffer], FoundToken>(
  'oauth_tokens.find',
  `SELECT t.credential_id, t.client_id, t.kind, c.token_endpoint_auth_method AS client_auth_method
     FROM oauth_tokens t LEFT JOIN oauth_clients c ON c.id = t.client_id
    WHERE t.token_hash = $1`,
);
// Used codes stay a day, so a replay is still told apart (and revokes) after the 2 minutes.
const PURGE_CODES = sql<[limit: number]>(
  'oauth_codes.purge',
  `DELETE FROM oauth_codes WHERE code_hash IN (
     SELECT code_hash FROM oauth_codes WHERE expires_at < now() - interval '1 day' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);
const PURGE_TOKENS = sql<[limit: number]>(
  'oauth_tokens.purge',
  `DELETE FROM oauth_tokens WHERE token_hash IN (
     SELECT token_hash FROM oauth_tokens WHERE expires_at < now() - interval '1 hour' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
);

/**
 * The SQL of OAuth grants besides their `credentials` row (CredentialsService creates, narrows and
 * revokes that): the codes they are made from, and their access and refresh tokens (hashes only).
 */
@Injectable()
export class GrantsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  findCodeForUpdate(codeHash: Buffer, db: Queryable): Promise<CodeRow | null> {
    return row(db, FIND_CODE_FOR_UPDATE, [codeHash]);
  }

  async markCodeUsed(codeHash: Buffer, credentialId: string, db: Queryable): Promise<void> {
    await run(db, MARK_CODE_USED, [codeHash, credentialId]);
  }

  async insertToken(tokenHash: Buffer, credentialId: string, kind: TokenKind, clientId: string, ttlS: number, db: Queryable): Promise<void> {
    await run(db, INSERT_TOKEN, [tokenHash, credentialId, kind, clientId, ttlS]);
  }

  findRefreshForUpdate(tokenHash: Buffer, graceS: number, db: Queryable): Promise<RefreshRow | null> {
    return row(db, FIND_REFRESH_FOR_UPDATE, [tokenHash, graceS]);
  }

  async rotate(tokenHash: Buffer, db: Queryable): Promise<void> {
    await run(db, ROTATE, [tokenHash]);
  }

  /** The grant an access or refresh token belongs to. */
  findToken(tokenHash: Buffer): Promise<FoundToken | null> {
    return row(this.db, FIND_TOKEN, [tokenHash]);
  }

  purgeCodes(limit: number): Promise<number> {
    return affected(this.db, PURGE_CODES, [limit]);
  }

  purgeTokens(limit: number): Promise<number> {
    return affected(this.db, PURGE_TOKENS, [limit]);
  }
}
