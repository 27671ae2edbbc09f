import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { IdentityProviderRow } from '../../identity-providers/identity-provider.js';
import { row, rows, sql, type Queryable } from '../../database/sql.js';

/** An account's identity provider a person may sign in through. */
export interface CompanyChoice {
  identity_provider_id: string;
  account_id: string;
  account_name: string;
  issuer: string;
}

/** The provider as sign-in needs it: how it names people, and its OIDC client (secret included: never shown). */
export type SignInProvider = Pick<
  IdentityProviderRow,
  'id' | 'account_id' | 'issuer' | 'person_claim' | 'unknown_people' | 'oidc_client_id' | 'oidc_client_secret' | 'metadata' | 'updated_at'
> & { account_name: string };

// The person's accounts whose provider has sign-in set up (an OIDC client id), by the email typed.
const CHOICES = sql<[email: string], CompanyChoice>(
  'identity_providers.sign_in_choices',
  `SELECT p.id AS identity_provider_id, p.account_id, a.name AS account_name, p.issuer
     FROM users u
     JOIN account_members m ON m.user_id = u.id
     JOIN identity_providers p ON p.account_id = m.account_id AND p.oidc_client_id IS NOT NULL
     JOIN accounts a ON a.id = p.account_id
    WHERE u.email = $1
    ORDER BY a.name, p.issuer, p.id`,
);
const PROVIDER = sql<[id: string], SignInProvider>(
  'identity_providers.for_sign_in',
  `SELECT p.id, p.account_id, a.name AS account_name, p.issuer, p.person_claim, p.unknown_people, p.oidc_client_id, p.oidc_client_secret, p.metadata, p.updated_at
     FROM identity_providers p JOIN accounts a ON a.id = p.account_id
    WHERE p.id = $1 AND p.oidc_client_id IS NOT NULL`,
);
const OFFERED = sql<[], { offered: boolean }>(
  'identity_providers.sign_in_offered',
  `SELECT EXISTS (SELECT 1 FROM identity_providers WHERE oidc_client_id IS NOT NULL) AS offered`,
);

/** What sign-in reads of the accounts' identity providers (the registry, src/identity-providers, writes them). */
@Injectable()
export class CompanySignInRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The providers with sign-in set up of the accounts the person with this (lower-cased) email belongs to. */
  choices(email: string, db: Queryable = this.db): Promise<CompanyChoice[]> {
    return rows(db, CHOICES, [email]);
  }

  /** A provider with sign-in set up; null when it is gone or no longer has an OIDC client. */
  provider(id: string, db: Queryable = this.db): Promise<SignInProvider | null> {
    return row(db, PROVIDER, [id]);
  }

  /** Whether any account has sign-in through its provider set up (the sign-in page offers the work-email field then). */
  async offered(db: Queryable = this.db): Promise<boolean> {
    return (await row(db, OFFERED, []))?.offered ?? false;
  }
}
