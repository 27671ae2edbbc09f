import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ID-JAG grant (docs/oauth.md#enterprise-managed-authorization): how an OAuth grant was made
 * (`via`: `consent` on the consent page, `enterprise` from an identity provider's ID-JAG; null for a
 * credential the operator or an owner made), and the ID-JAGs already exchanged, by issuer and `jti`,
 * kept until they expire, so one is never exchanged twice, whichever instance it reaches.
 */
export class EnterpriseGrants1766200000100 implements MigrationInterface {
  name = 'EnterpriseGrants1766200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE credentials ADD COLUMN via text CHECK (via IN ('consent', 'enterprise'))`);
    await q.query(`UPDATE credentials SET via = 'consent' WHERE source = 'oauth'`);
    await q.query(`
      CREATE TABLE id_jag_uses (
        issuer text NOT NULL,
        jti text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (issuer, jti)
      )`);
    await q.query(`CREATE INDEX id_jag_uses_expires_at ON id_jag_uses (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE id_jag_uses`);
    await q.query(`ALTER TABLE credentials DROP COLUMN via`);
  }
}
