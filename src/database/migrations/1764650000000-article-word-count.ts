import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A word: a run of characters that are neither white space nor punctuation (as the database's locale classes them). */
const WORD = `'[^[:space:][:punct:]]+'`;

/**
 * The word count of `text` in SQL. regexp_count needs PostgreSQL 15; on 14 the same count is the
 * length left once every word is replaced by one "x" and every separator removed.
 */
export function wordCountSql(text: string, serverVersionNum: number): string {
  return serverVersionNum >= 150_000
    ? `regexp_count(${text}, ${WORD})`
    : `length(regexp_replace(regexp_replace(${text}, ${WORD}, 'x', 'g'), '[[:space:][:punct:]]+', '', 'g'))`;
}

/** Rows, and bytes of body, a backfill statement counts at most: each locks its rows for well under a second. */
const BATCH_ROWS = 1_000;
const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * `articles.word_count`, the body's word count, kept on every write so that the writer's setup
 * context (src/agents) reads 500 integers instead of counting the words of 500 bodies of up to
 * 1 MiB on every call (a project of such articles held a pool connection for the whole statement
 * timeout per call).
 *
 * Kept by a trigger, not a generated column. Adding a stored generated column rewrites the table
 * under an ACCESS EXCLUSIVE lock that blocks every read and write of articles: 10 s for the 100k
 * articles of bench/articles-seed.mjs, and past the 15 s statement timeout from about 150k. A
 * nullable column is added at once; the trigger counts every insert and every update that changes
 * the body (in the write's transaction, whichever path or instance writes: tools, jobs, admin,
 * plain SQL), and puts back a value set by hand. The rows already there are then counted in
 * batches of BATCH_ROWS / BATCH_BYTES, each in its own short transaction, so writers wait for one
 * batch at most and readers never. Hence no transaction around this migration; every step can run
 * again, so an interrupted run resumes. Measured on that data set (2 shared cores): 11.7 s in all,
 * while a probe's reads and writes of articles waited 33 ms and 58 ms at most; the final SET NOT
 * NULL scans the heap only (the bodies are TOASTed), 40 ms.
 */
export class ArticleWordCount1764650000000 implements MigrationInterface {
  name = 'ArticleWordCount1764650000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const [{ version }] = (await q.query(`SELECT current_setting('server_version_num')::int AS version`)) as { version: number }[];
    await q.query(`ALTER TABLE articles ADD COLUMN IF NOT EXISTS word_count integer`);
    await q.query(`
      CREATE OR REPLACE FUNCTION articles_word_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' OR OLD.word_count IS NULL OR NEW.body IS DISTINCT FROM OLD.body THEN
          NEW.word_count := ${wordCountSql('NEW.body', version)};
        ELSE
          NEW.word_count := OLD.word_count;
        END IF;
        RETURN NEW;
      END $$`);
    // Fires for updates naming body or word_count only: publishing, trashing or a featured image leave both alone.
    await q.query(
      `CREATE OR REPLACE TRIGGER articles_word_count BEFORE INSERT OR UPDATE OF body, word_count ON articles FOR EACH ROW EXECUTE FUNCTION articles_word_count()`,
    );
    // Backfill: setting a missing count to NULL makes the trigger count it. Batches follow the primary key.
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const [batch] = (await q.query(
        `WITH candidates AS (
           SELECT id, sum(octet_length(body)) OVER (ORDER BY id) - octet_length(body) AS bytes_before
             FROM articles WHERE id > $1 ORDER BY id LIMIT $2
         ), batch AS (SELECT id FROM candidates WHERE bytes_before < $3),
         counted AS (UPDATE articles a SET word_count = NULL FROM batch WHERE a.id = batch.id AND a.word_count IS NULL RETURNING 1)
         SELECT (SELECT id::text FROM batch ORDER BY id DESC LIMIT 1) AS last, (SELECT count(*) FROM counted)::int AS counted`,
        [after, BATCH_ROWS, BATCH_BYTES],
      )) as { last: string | null; counted: number }[];
      if (!batch.last) break;
      after = batch.last;
    }
    await q.query(`ALTER TABLE articles ALTER COLUMN word_count SET NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS articles_word_count ON articles`);
    await q.query(`DROP FUNCTION IF EXISTS articles_word_count()`);
    await q.query(`ALTER TABLE articles DROP COLUMN IF EXISTS word_count`);
  }
}
