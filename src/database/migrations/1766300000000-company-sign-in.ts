import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in through an account's own identity provider (docs/oauth.md#sign-in-with-your-company):
 * a pending OIDC sign-in remembers which provider it went to and the work email typed to start it.
 * Removing the provider ends its pending sign-ins.
 */
export class CompanySignIn1766300000000 implements MigrationInterface {
  name = 'CompanySignIn1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE oidc_sign_ins
        ADD COLUMN identity_provider_id uuid REFERENCES identity_providers(id) ON DELETE CASCADE,
        ADD COLUMN email text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oidc_sign_ins DROP COLUMN identity_provider_id, DROP COLUMN email`);
  }
}
