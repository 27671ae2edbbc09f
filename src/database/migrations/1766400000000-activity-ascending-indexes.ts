import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The activity log's indexes that end in its id, as they were (`id DESC`) and as they are now (`id`). */
const INDEXES = [
  ['activity_account_idx', '(account_id, id)', ''],
  ['activity_credential_idx', '(account_id, credential_id, id)', ''],
  ['activity_outcome_idx', '(account_id, outcome, id)', ` WHERE outcome <> 'ok'`],
  ['activity_tool_idx', '(account_id, tool, id)', ' WHERE tool IS NOT NULL'],
  ['activity_method_idx', '(account_id, method, id)', ` WHERE method <> 'tools/call'`],
  ['activity_client_idx', '(account_id, client_name, id)', ' WHERE client_name IS NOT NULL'],
] as const;

/**
 * The activity log's filter indexes end in `id` ascending instead of `id DESC`. Ids are UUID v7, so
 * every new entry has the highest id of its account: in a descending index it went to the far left
 * of its range, where a full page splits in two halves that are never filled again (the indexes were
 * twice their size), while an ascending index takes it at the right end, where PostgreSQL fills pages
 * and splits them as an append. PostgreSQL reads an index backwards as cheaply as forwards, so every
 * `ORDER BY id DESC` page is still one index range scan. With the echo tool at 50 connections (every
 * request one entry), PostgreSQL's CPU per entry went from about 24 to 15 µs (bench/README.md).
 *
 * Plain CREATE INDEX, as in the earlier activity migrations (a migration runs in a transaction): on a
 * large existing log this holds writes to it for the builds' duration, and instances still running
 * meanwhile hold their entries in memory and write them after (src/activity/activity-writer.service.ts).
 */
export class ActivityAscendingIndexes1766400000000 implements MigrationInterface {
  name = 'ActivityAscendingIndexes1766400000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns, where] of INDEXES) {
      await q.query(`DROP INDEX ${name}`);
      await q.query(`CREATE INDEX ${name} ON activity_log ${columns}${where}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name, columns, where] of INDEXES) {
      await q.query(`DROP INDEX ${name}`);
      await q.query(`CREATE INDEX ${name} ON activity_log ${columns.replace(/, id\)$/, ', id DESC)')}${where}`);
    }
  }
}
