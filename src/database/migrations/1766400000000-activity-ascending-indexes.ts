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
 * every new entry has the highest id of its account: in a descending index it went to the far left of
 * its range, where a full page splits in two halves that are never filled again (at 223,000 entries the
 * account's index took 1.8 times the bytes per entry it takes ascending), while an ascending index
 * takes it at the right end, where PostgreSQL fills pages and splits them as an append. PostgreSQL
 * reads an index backwards as cheaply as forwards, so every `ORDER BY id DESC` page is still one index
 * range scan. With the echo tool at 50 connections (every request one entry) on a log of ~800,000
 * entries, PostgreSQL's CPU per entry went from about 24 to 15 µs (bench/README.md).
 *
 * Plain CREATE INDEX, as in the earlier activity migrations (a migration runs in a transaction): on a
 * large existing log this holds writes to it for the builds' duration: answers of instances still
 * running meanwhile wait for their entries, up to the writer's statement timeout, after which the entries
 * are held in memory and written later (src/activity/activity-writer.service.ts).
 * The new indexes are built beside the old ones first, which reads may still use; only then are the old
 * ones dropped (which locks the table, reads too, until the commit) and the new ones renamed.
 */
export class ActivityAscendingIndexes1766400000000 implements MigrationInterface {
  name = 'ActivityAscendingIndexes1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await rebuild(q, (columns) => columns);
  }

  async down(q: QueryRunner): Promise<void> {
    await rebuild(q, (columns) => columns.replace(/, id\)$/, ', id DESC)'));
  }
}

/** Builds each index anew with `columns(...)` beside the old one, then drops the old ones and gives the new their names. */
async function rebuild(q: QueryRunner, columns: (ascending: string) => string): Promise<void> {
  for (const [name, ascending, where] of INDEXES) await q.query(`CREATE INDEX ${name}_new ON activity_log ${columns(ascending)}${where}`);
  for (const [name] of INDEXES) await q.query(`DROP INDEX ${name}`);
  for (const [name] of INDEXES) await q.query(`ALTER INDEX ${name}_new RENAME TO ${name}`);
}
