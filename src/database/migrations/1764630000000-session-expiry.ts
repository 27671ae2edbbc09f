import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * MCP sessions expire after `SESSION_IDLE_TTL_S` without use and are purged with the ended ones.
 * `last_used_at` is touched only when it is older than a tenth of the TTL (see SessionsService), so
 * it costs no write per request. Sessions open at upgrade time count as used now.
 */
export class SessionExpiry1764630000000 implements MigrationInterface {
  name = 'SessionExpiry1764630000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now()`);
    // The purge's two ways in: long idle, or ended (few: most clients never send DELETE).
    await q.query(`CREATE INDEX mcp_sessions_last_used_at_idx ON mcp_sessions (last_used_at)`);
    await q.query(`CREATE INDEX mcp_sessions_ended_idx ON mcp_sessions (ended_at) WHERE ended_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS mcp_sessions_ended_idx`);
    await q.query(`DROP INDEX IF EXISTS mcp_sessions_last_used_at_idx`);
    await q.query(`ALTER TABLE mcp_sessions DROP COLUMN IF EXISTS last_used_at`);
  }
}
