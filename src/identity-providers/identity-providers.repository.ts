import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, rows, sql, type Queryable } from '../database/sql.js';
import type { IdentityProviderRow, PersonClaim, UnknownPeople } from './identity-provider.js';

const COLUMNS = `id, account_id, issuer, person_claim, unknown_people, oidc_client_id, oidc_client_secret, metadata, jwks, jwks_fetched_at, created_at, updated_at`;

type InsertParams = [
  id: string,
  accountId: string,
  issuer: string,
  personClaim: PersonClaim,
  unknownPeople: UnknownPeople,
  oidcClientId: string | null,
  oidcClientSecret: string | null,
  metadata: string,
  jwks: string,
];
const INSERT = sql<InsertParams, IdentityProviderRow>(
  'identity_providers.insert',
  `INSERT INTO identity_providers (id, account_id, issuer, person_claim, unknown_people, oidc_client_id, oidc_client_secret, metadata, jwks, jwks_fetched_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, now())
   ON CONFLICT (account_id, issuer) DO NOTHING
   RETURNING ${COLUMNS}`,
);
const UPDATE = sql<InsertParams, IdentityProviderRow>(
  'identity_providers.update',
  `UPDATE identity_providers
      SET issuer = $3, person_claim = $4, unknown_people = $5, oidc_client_id = $6, oidc_client_secret = $7,
          metadata = $8::jsonb, jwks = $9::jsonb,
          jwks_fetched_at = CASE WHEN jwks IS DISTINCT FROM $9::jsonb OR issuer IS DISTINCT FROM $3 THEN now() ELSE jwks_fetched_at END,
          updated_at = now()
    WHERE id = $1 AND account_id = $2
   RETURNING ${COLUMNS}`,
);
const FIND_FOR_UPDATE = sql<[accountId: string, id: string], IdentityProviderRow>(
  'identity_providers.find_for_update',
  `SELECT ${COLUMNS} FROM identity_providers WHERE account_id = $1 AND id = $2 FOR UPDATE`,
);
const FIND = sql<[accountId: string, id: string], IdentityProviderRow>(
  'identity_providers.find',
  `SELECT ${COLUMNS} FROM identity_providers WHERE account_id = $1 AND id = $2`,
);
const LIST = sql<[accountId: string], IdentityProviderRow>(
  'identity_providers.list',
  `SELECT ${COLUMNS} FROM identity_providers WHERE account_id = $1 ORDER BY created_at, id`,
);
const BY_ISSUER = sql<[issuer: string], IdentityProviderRow>(
  'identity_providers.by_issuer',
  `SELECT ${COLUMNS} FROM identity_providers WHERE issuer = $1 ORDER BY created_at, id`,
);
const DELETE = sql<[accountId: string, id: string]>('identity_providers.delete', `DELETE FROM identity_providers WHERE account_id = $1 AND id = $2`);
// Keys fetched again (a kid nobody had): only when the stored ones are older than `minAgeS`, so
// instances that meet the same unknown kid fetch once between them.
const CLAIM_KEY_REFRESH = sql<[issuer: string, minAgeS: number], { id: string }>(
  'identity_providers.claim_key_refresh',
  `UPDATE identity_providers SET jwks_fetched_at = now()
    WHERE issuer = $1 AND jwks_fetched_at < now() - make_interval(secs => $2)
   RETURNING id`,
);
const SAVE_KEYS = sql<[issuer: string, jwks: string]>(
  'identity_providers.save_keys',
  `UPDATE identity_providers SET jwks = $2::jsonb, jwks_fetched_at = now() WHERE issuer = $1`,
);

const UNIQUE_VIOLATION = '23505';

/** The statements of `identity_providers`. */
@Injectable()
export class IdentityProvidersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The new row; null when the account already trusts this issuer. */
  insert(params: InsertParams, db: Queryable = this.db): Promise<IdentityProviderRow | null> {
    return row(db, INSERT, params);
  }

  /** The row as saved; null when the account already trusts the new issuer under another row. */
  async update(params: InsertParams, db: Queryable = this.db): Promise<IdentityProviderRow | null> {
    try {
      return await row(db, UPDATE, params);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  find(accountId: string, id: string, db: Queryable = this.db): Promise<IdentityProviderRow | null> {
    return row(db, FIND, [accountId, id]);
  }

  findForUpdate(accountId: string, id: string, db: Queryable): Promise<IdentityProviderRow | null> {
    return row(db, FIND_FOR_UPDATE, [accountId, id]);
  }

  list(accountId: string, db: Queryable = this.db): Promise<IdentityProviderRow[]> {
    return rows(db, LIST, [accountId]);
  }

  byIssuer(issuer: string): Promise<IdentityProviderRow[]> {
    return rows(this.db, BY_ISSUER, [issuer]);
  }

  async delete(accountId: string, id: string, db: Queryable): Promise<boolean> {
    return (await affected(db, DELETE, [accountId, id])) > 0;
  }

  /** Whether this caller may fetch the issuer's keys again now (none did within `minAgeS`). */
  async claimKeyRefresh(issuer: string, minAgeS: number): Promise<boolean> {
    return (await rows(this.db, CLAIM_KEY_REFRESH, [issuer, minAgeS])).length > 0;
  }

  async saveKeys(issuer: string, jwks: unknown): Promise<void> {
    await affected(this.db, SAVE_KEYS, [issuer, JSON.stringify(jwks)]);
  }
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return (e.code ?? e.driverError?.code) === UNIQUE_VIOLATION;
}
