import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a session knows of its client beyond its name, and the requests the server sends it.
 *
 * - `mcp_sessions.client_capabilities`: the client's declared capabilities from `initialize` (known
 *   keys only, bounded), so any instance knows whether it may send `elicitation/create` or
 *   `sampling/createMessage`; `log_level`: the level `logging/setLevel` chose (null: none chosen, no
 *   `notifications/message` sent).
 * - `mcp_client_requests`: server→client requests awaiting the client's answer. The request goes out
 *   on the call's event stream from one instance; the answer is a later POST that may land on another,
 *   which records it here and wakes the waiting instance (pg_notify). Bound to the session (gone with
 *   it) and the credential; `request_key` names the tools/call it belongs to, so cancelling that call
 *   stops the wait. Rows past `expires_at` are purged.
 */
export class SessionCapabilities1764900000200 implements MigrationInterface {
  name = 'SessionCapabilities1764900000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions ADD COLUMN client_capabilities jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`ALTER TABLE mcp_sessions ADD COLUMN log_level text`);
    await q.query(`
      CREATE TABLE mcp_client_requests (
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
        credential_id uuid NOT NULL,
        request_key text,
        method text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        answered_at timestamptz,
        response jsonb,
        cancelled_at timestamptz
      )`);
    await q.query(`CREATE INDEX mcp_client_requests_session_idx ON mcp_client_requests (session_id)`);
    await q.query(`CREATE INDEX mcp_client_requests_request_key_idx ON mcp_client_requests (request_key) WHERE request_key IS NOT NULL`);
    await q.query(`CREATE INDEX mcp_client_requests_expires_idx ON mcp_client_requests (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS mcp_client_requests`);
    await q.query(`ALTER TABLE mcp_sessions DROP COLUMN IF EXISTS log_level`);
    await q.query(`ALTER TABLE mcp_sessions DROP COLUMN IF EXISTS client_capabilities`);
  }
}
