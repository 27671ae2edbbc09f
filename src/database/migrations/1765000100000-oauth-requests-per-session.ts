import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A browser session's open authorize requests, newest first: a new request drops the session's
 * oldest beyond the cap (`OPEN_REQUESTS_PER_SESSION`, src/oauth/authorize) in its own transaction.
 */
export class OauthRequestsPerSession1765000100000 implements MigrationInterface {
  name = 'OauthRequestsPerSession1765000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX oauth_requests_session_open_idx ON oauth_requests (browser_session_hash, created_at) WHERE used_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS oauth_requests_session_open_idx`);
  }
}
