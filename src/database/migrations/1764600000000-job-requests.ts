import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs remember the MCP request that started them, so `notifications/cancelled` reaching any
 * instance can cancel the job of an in-flight call.
 */
export class JobRequests1764600000000 implements MigrationInterface {
  name = 'JobRequests1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN request_key text`);
    await q.query(`CREATE INDEX jobs_request_idx ON jobs (credential_id, request_key) WHERE request_key IS NOT NULL AND status IN ('queued', 'running')`);
    // Media of a project, newest first (admin listings, cleanup).
    await q.query(`CREATE INDEX media_project_idx ON media (project_id, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS media_project_idx`);
    await q.query(`DROP INDEX IF EXISTS jobs_request_idx`);
    await q.query(`ALTER TABLE jobs DROP COLUMN IF EXISTS request_key`);
  }
}
