import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The request id (`X-Request-Id`) of each activity entry, to find a request's log lines and trace from its entry. */
export class ActivityRequestId1765200000000 implements MigrationInterface {
  name = 'ActivityRequestId1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE activity_log ADD COLUMN request_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE activity_log DROP COLUMN request_id`);
  }
}
