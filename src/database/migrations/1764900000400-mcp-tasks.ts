import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tasks of the MCP 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`): a tools/call run
 * detached from its request, polled with tasks/get. A task belongs to the credential that created it
 * (anyone else's taskId is unknown); the instance running it renews its lease (`heartbeat_at`), so a
 * task whose instance stopped is reported failed; rows are purged once `expires_at` passed.
 */
export class McpTasks1764900000400 implements MigrationInterface {
  name = 'McpTasks1764900000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_tasks (
        id text PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        credential_id text NOT NULL,
        tool text NOT NULL,
        status text NOT NULL CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
        params jsonb NOT NULL,
        capabilities jsonb NOT NULL,
        answers jsonb NOT NULL DEFAULT '{}',
        input_requests jsonb,
        result jsonb,
        error jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        instance text,
        heartbeat_at timestamptz
      )`);
    await q.query(`CREATE INDEX mcp_tasks_expires_idx ON mcp_tasks (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS mcp_tasks`);
  }
}
