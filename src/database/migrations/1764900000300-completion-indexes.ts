import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Prefix search for `completion/complete` (src/completions), one index range scan per project:
 *
 * - `articles_handle_prefix_idx`, `articles_id_prefix_idx`: `handle LIKE 'pre%'` and
 *   `id::text LIKE 'pre%'` among a project's live articles. `text_pattern_ops`, so that LIKE uses
 *   them whatever the database's collation (the unique handle index serves equality only).
 * - `project_tags`: every tag a project's articles have carried, kept by a trigger on articles (in
 *   the writing transaction, whichever path writes), with a `lower(tag)` prefix index. An array
 *   column cannot be searched by prefix through an index (its GIN index finds whole elements).
 *   Rows are only added (ON CONFLICT DO NOTHING, in tag order so two writers of the same new tags
 *   wait in one order): no counter to keep, hence no lock on a popular tag's row at every write. A
 *   tag no live article carries any more stays, and the completion query leaves it out.
 */
export class CompletionIndexes1764900000300 implements MigrationInterface {
  name = 'CompletionIndexes1764900000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX articles_handle_prefix_idx ON articles (project_id, handle text_pattern_ops) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX articles_id_prefix_idx ON articles (project_id, (id::text) text_pattern_ops) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE project_tags (
        account_id uuid NOT NULL,
        project_id uuid NOT NULL,
        tag text NOT NULL,
        PRIMARY KEY (project_id, tag),
        FOREIGN KEY (account_id, project_id) REFERENCES projects(account_id, id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX project_tags_prefix_idx ON project_tags (project_id, lower(tag) text_pattern_ops)`);
    await q.query(`
      CREATE FUNCTION project_tags_add() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO project_tags (account_id, project_id, tag)
          SELECT NEW.account_id, NEW.project_id, t FROM (SELECT DISTINCT unnest(NEW.tags) AS t) u ORDER BY t
          ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER articles_project_tags AFTER INSERT OR UPDATE OF tags, deleted_at ON articles
      FOR EACH ROW WHEN (NEW.deleted_at IS NULL AND cardinality(NEW.tags) > 0) EXECUTE FUNCTION project_tags_add()`);
    await q.query(`
      INSERT INTO project_tags (account_id, project_id, tag)
      SELECT DISTINCT account_id, project_id, unnest(tags) FROM articles WHERE deleted_at IS NULL
      ON CONFLICT DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS articles_project_tags ON articles`);
    await q.query(`DROP FUNCTION IF EXISTS project_tags_add()`);
    await q.query(`DROP TABLE IF EXISTS project_tags`);
    for (const index of ['articles_id_prefix_idx', 'articles_handle_prefix_idx']) await q.query(`DROP INDEX IF EXISTS ${index}`);
  }
}
