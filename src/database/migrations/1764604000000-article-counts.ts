import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Live articles per (project, status) and per project, kept by a trigger in the transaction of every
 * write, so `list_articles` answers `pagination.total` without counting the project's rows.
 *
 * The trigger is per statement over transition tables: a bulk write (the scheduler publishing a
 * batch, a seed) adds up its deltas once, and applies them in (project_id, status) order, so two
 * transactions never take the same counter rows in opposite orders (no deadlock).
 */
export class ArticleCounts1764604000000 implements MigrationInterface {
  name = 'ArticleCounts1764604000000';

  async up(q: QueryRunner): Promise<void> {
    // Writes wait until the trigger and the counts of the rows already there are in place.
    await q.query(`LOCK TABLE articles IN SHARE ROW EXCLUSIVE MODE`);
    // status '*' is the project's row: all live articles, and a generation bumped by every write that
    // touches a live article (deep pages keep keyset anchors that are valid for one generation).
    // No foreign key to projects: a cascade delete of a project would race its own counter rows.
    await q.query(`
      CREATE TABLE article_counts (
        project_id uuid NOT NULL,
        status text NOT NULL,
        account_id uuid NOT NULL,
        n bigint NOT NULL,
        generation bigint NOT NULL DEFAULT 1,
        PRIMARY KEY (project_id, status)
      )`);
    const apply = (delta: string) => `
          WITH delta AS (${delta})
          INSERT INTO article_counts AS c (project_id, status, account_id, n)
          SELECT project_id, status, account_id, sum(d) FROM (
            SELECT project_id, status, account_id, d FROM delta
            UNION ALL
            SELECT project_id, '*', account_id, d FROM delta
          ) x
          GROUP BY project_id, status, account_id HAVING sum(d) <> 0 OR status = '*'
          ORDER BY project_id, status
          ON CONFLICT (project_id, status) DO UPDATE SET n = c.n + excluded.n, generation = c.generation + 1;`;
    const live = (rows: string, d: number) => `SELECT project_id, status, account_id, ${d} AS d FROM ${rows} WHERE deleted_at IS NULL`;
    await q.query(`
      CREATE FUNCTION article_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN${apply(live('new_rows', 1))}
        ELSIF TG_OP = 'DELETE' THEN${apply(live('old_rows', -1))}
        ELSE${apply(`${live('new_rows', 1)} UNION ALL ${live('old_rows', -1)}`)}
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER articles_count_insert AFTER INSERT ON articles REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION article_counts_apply()`,
    );
    await q.query(
      `CREATE TRIGGER articles_count_update AFTER UPDATE ON articles REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION article_counts_apply()`,
    );
    await q.query(
      `CREATE TRIGGER articles_count_delete AFTER DELETE ON articles REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION article_counts_apply()`,
    );
    await q.query(`
      INSERT INTO article_counts (project_id, status, account_id, n)
      SELECT project_id, coalesce(status, '*'), account_id, count(*) FROM articles WHERE deleted_at IS NULL
      GROUP BY GROUPING SETS ((project_id, account_id, status), (project_id, account_id))`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const op of ['insert', 'update', 'delete']) await q.query(`DROP TRIGGER IF EXISTS articles_count_${op} ON articles`);
    await q.query(`DROP FUNCTION IF EXISTS article_counts_apply()`);
    await q.query(`DROP TABLE IF EXISTS article_counts`);
  }
}
