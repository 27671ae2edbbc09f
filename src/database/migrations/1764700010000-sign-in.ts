import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `oidc` sign-in (docs/oauth.md#sign-in-with-an-identity-provider-oidc): a sign-in sent to the identity provider and not back yet.
 * The PKCE verifier and the nonce stay on the server, in a row any instance can read when the
 * provider redirects back (the callback may reach another instance than the start); the browser
 * holds only the state, in an HttpOnly cookie that the callback's `state` must equal. The row is
 * consumed (deleted) by the callback and lives 10 minutes otherwise.
 */
export class SignIn1764700010000 implements MigrationInterface {
  name = 'SignIn1764700010000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oidc_sign_ins (
        state_hash bytea PRIMARY KEY,
        code_verifier text NOT NULL,
        nonce text NOT NULL,
        return_to text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX oidc_sign_ins_expiry_idx ON oidc_sign_ins (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oidc_sign_ins`);
  }
}
