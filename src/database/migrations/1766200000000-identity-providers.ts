import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The identity providers an account trusts (docs/oauth.md#enterprise-managed-authorization): its
 * people's ID-JAGs (and, later, their sign-in) come from these issuers. The discovery document and
 * the keys are cached here, so every instance verifies with the same keys.
 */
export class IdentityProviders1766200000000 implements MigrationInterface {
  name = 'IdentityProviders1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE identity_providers (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        issuer text NOT NULL,
        person_claim text NOT NULL DEFAULT 'email' CHECK (person_claim IN ('email', 'sub')),
        unknown_people text NOT NULL DEFAULT 'refuse' CHECK (unknown_people IN ('refuse', 'add')),
        oidc_client_id text,
        oidc_client_secret text,
        metadata jsonb NOT NULL,
        jwks jsonb NOT NULL,
        jwks_fetched_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, issuer)
      )`);
    await q.query(`CREATE INDEX identity_providers_issuer ON identity_providers (issuer)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE identity_providers`);
  }
}
