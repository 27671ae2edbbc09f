import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the background retention purge (docs/operations.md#retention), so each batch finds its
 * rows by an index range instead of a scan: finished jobs by when they finished, and the articles that
 * show an image as their featured one (an image still shown is never purged). The activity log needs
 * none: its ids are UUID v7, so its primary key is already in time order.
 */
export class RetentionIndexes1765200050000 implements MigrationInterface {
  name = 'RetentionIndexes1765200050000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX jobs_finished_idx ON jobs (finished_at) WHERE status IN ('succeeded', 'failed', 'cancelled')`);
    await q.query(`CREATE INDEX articles_featured_image_idx ON articles (featured_image_id) WHERE featured_image_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS articles_featured_image_idx`);
    await q.query(`DROP INDEX IF EXISTS jobs_finished_idx`);
  }
}
