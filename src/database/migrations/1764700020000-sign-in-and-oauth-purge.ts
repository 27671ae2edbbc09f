import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the periodic purge (OAuthPurgeService) looks for, by expiry: without these indexes each of its
 * batches would read the whole table of tokens, codes, consent requests or login links.
 */
export class SignInAndOauthPurge1764700020000 implements MigrationInterface {
  name = 'SignInAndOauthPurge1764700020000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX oauth_tokens_expiry_idx ON oauth_tokens (expires_at)`);
    await q.query(`CREATE INDEX oauth_codes_expiry_idx ON oauth_codes (expires_at)`);
    await q.query(`CREATE INDEX oauth_requests_expiry_idx ON oauth_requests (expires_at)`);
    await q.query(`CREATE INDEX login_links_expiry_idx ON login_links (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['login_links_expiry_idx', 'oauth_requests_expiry_idx', 'oauth_codes_expiry_idx', 'oauth_tokens_expiry_idx'])
      await q.query(`DROP INDEX IF EXISTS ${index}`);
  }
}
