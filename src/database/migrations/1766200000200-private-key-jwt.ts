import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A registered client may authenticate with a JWT signed by one of its keys (`private_key_jwt`, RFC 7523 §2.2; docs/oauth.md#tokens). */
export class PrivateKeyJwt1766200000200 implements MigrationInterface {
  name = 'PrivateKeyJwt1766200000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE oauth_clients DROP CONSTRAINT oauth_clients_token_endpoint_auth_method_check`);
    await q.query(`
      ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_token_endpoint_auth_method_check
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic', 'private_key_jwt'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM oauth_clients WHERE token_endpoint_auth_method = 'private_key_jwt'`);
    await q.query(`ALTER TABLE oauth_clients DROP CONSTRAINT oauth_clients_token_endpoint_auth_method_check`);
    await q.query(`
      ALTER TABLE oauth_clients ADD CONSTRAINT oauth_clients_token_endpoint_auth_method_check
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic'))`);
  }
}
