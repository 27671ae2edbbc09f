import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { affected, row, run, sql, type Queryable } from '../../database/sql.js';

const UNIQUE_VIOLATION = '23505';

/** A sign-in waiting for the identity provider's answer: what the callback must check it against. */
export interface PendingOidcSignIn {
  code_verifier: string;
  nonce: string;
  return_to: string | null;
  /** The account's identity provider the sign-in goes through; null for the server-wide one (`OIDC_*`). */
  identity_provider_id: string | null;
  /** The work email the person typed to start it (an account's provider), lower-cased. */
  email: string | null;
}

const INSERT = sql<
  [stateHash: Buffer, codeVerifier: string, nonce: string, returnTo: string | null, identityProviderId: string | null, email: string | null, ttlS: number]
>(
  'oidc_sign_ins.insert',
  `INSERT INTO oidc_sign_ins (state_hash, code_verifier, nonce, return_to, identity_provider_id, email, expires_at)
   VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
);
// Consumed once, by whichever instance the provider's redirect reaches.
const CONSUME = sql<[stateHash: Buffer], PendingOidcSignIn>(
  'oidc_sign_ins.consume',
  `DELETE FROM oidc_sign_ins WHERE state_hash = $1 AND expires_at > now() RETURNING code_verifier, nonce, return_to, identity_provider_id, email`,
);
const PURGE = sql<[]>('oidc_sign_ins.purge', `DELETE FROM oidc_sign_ins WHERE expires_at <= now()`);

// The identity of the provider is bound to the person on their first sign-in, and must match later:
// no row is answered when the person is bound to another subject of the same issuer, or the subject
// to another person. (A new issuer, as when the operator moves to another provider, binds again.)
const BIND = sql<[userId: string, issuer: string, subject: string], { id: string }>(
  'users.bind_oidc',
  `UPDATE users SET oidc_issuer = $2, oidc_subject = $3
    WHERE id = $1 AND (oidc_issuer IS DISTINCT FROM $2 OR oidc_subject = $3)
      AND NOT EXISTS (SELECT 1 FROM users other WHERE other.oidc_issuer = $2 AND other.oidc_subject = $3 AND other.id <> $1)
   RETURNING id`,
);

/** The statements of `oidc` sign-in: pending sign-ins (`oidc_sign_ins`) and the person's bound identity (`users.oidc_*`). */
@Injectable()
export class OidcRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(stateHash: Buffer, pending: PendingOidcSignIn, ttlS: number, db: Queryable = this.db): Promise<void> {
    await run(db, INSERT, [stateHash, pending.code_verifier, pending.nonce, pending.return_to, pending.identity_provider_id, pending.email, ttlS]);
  }

  /** The pending sign-in of this state, removed; null when unknown, used or expired. */
  consume(stateHash: Buffer, db: Queryable = this.db): Promise<PendingOidcSignIn | null> {
    return row(db, CONSUME, [stateHash]);
  }

  purgeExpired(db: Queryable = this.db): Promise<number> {
    return affected(db, PURGE, []);
  }

  /**
   * Binds the issuer and subject to the person (first sign-in) or checks them: false when the person
   * is bound to another subject of this issuer, or the subject to another person.
   */
  async bind(userId: string, issuer: string, subject: string, db: Queryable = this.db): Promise<boolean> {
    try {
      return (await row(db, BIND, [userId, issuer, subject])) !== null;
    } catch (err) {
      // Two first sign-ins of one subject at once: the (issuer, subject) pair is unique.
      const e = err as { code?: string; driverError?: { code?: string } };
      if ((e.code ?? e.driverError?.code) === UNIQUE_VIOLATION) return false;
      throw err;
    }
  }
}
