import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The trace context of the call that queued a job (while tracing is on): each run's span links to it, on whichever instance it runs. */
export class JobTraceContext1765200000100 implements MigrationInterface {
  name = 'JobTraceContext1765200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs ADD COLUMN trace_context text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE jobs DROP COLUMN trace_context`);
  }
}
