import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair claims and per-account job caps (JobWorkerService.claim, JobsService.enqueue): the queued
 * jobs of one account by age (its oldest due job, the count against JOBS_MAX_QUEUED_PER_ACCOUNT)
 * and the running jobs by account (the count against JOBS_MAX_RUNNING_PER_ACCOUNT).
 */
export class FairJobClaims1764660000000 implements MigrationInterface {
  name = 'FairJobClaims1764660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_queued_account_idx ON jobs (account_id, run_after, id) WHERE status = 'queued'`);
    await q.query(`CREATE INDEX jobs_running_account_idx ON jobs (account_id) WHERE status = 'running'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS jobs_running_account_idx`);
    await q.query(`DROP INDEX IF EXISTS jobs_queued_account_idx`);
  }
}
