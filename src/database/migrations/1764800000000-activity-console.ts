import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The owners' console's Activity page at 1,000,000 rows of one account (docs/console.md#activity).
 *
 * - `activity_client_idx`: the client-name filter, ending in `id DESC` like every other filter's index
 *   (1764610000000-activity-log-scale), so its page is an index range scan; partial, as entries of
 *   requests refused before `initialize` have no client name.
 * - `activity_chart_idx`: requests per hour / day by outcome. `(account_id, at)` bounds the span; the
 *   outcome, count and credential (a member's chart) are included, so the aggregate is an index-only
 *   scan and never reads the table's rows.
 *
 * The time-range filter needs no index of its own: its bounds are also id bounds (UUID v7), read from
 * the id indexes above. Plain CREATE INDEX, as in the earlier activity migration (a migration runs in
 * a transaction); on a large existing log this holds writes to it for the build's duration.
 */
export class ActivityConsole1764800000000 implements MigrationInterface {
  name = 'ActivityConsole1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX activity_client_idx ON activity_log (account_id, client_name, id DESC) WHERE client_name IS NOT NULL`);
    await q.query(`CREATE INDEX activity_chart_idx ON activity_log (account_id, at) INCLUDE (outcome, count, credential_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['activity_chart_idx', 'activity_client_idx']) await q.query(`DROP INDEX IF EXISTS ${index}`);
  }
}
