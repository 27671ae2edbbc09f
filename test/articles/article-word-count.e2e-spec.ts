import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ArticleTrashService } from '../../src/articles/article-trash.service.js';
import { ArticlesService } from '../../src/articles/articles.service.js';
import { dataSourceOptions, MIGRATIONS } from '../../src/database/data-source.js';
import { migrate } from '../../src/database/migrate.js';
import { wordCountSql } from '../../src/database/migrations/1764650000000-article-word-count.js';
import { withClient } from '../support/database.js';
import { createTenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/** The count project_context computed from each body before the column existed: the reference. */
const RECOUNT = `(SELECT count(*)::int FROM regexp_matches(body, '[^[:space:][:punct:]]+', 'g'))`;

const BODIES = [
  '',
  'One.',
  'Le jardin est une source de joie, pour les enfants et les parents !',
  '¿Qué tal? Ça va — très bien… 東京 は 大きい 😀 emoji,and-punctuation;joined',
  '## A heading\n\n- a list\n- with `code` and [a link](https://example.com/a_(b)?q=1).\n',
];
/** 1 MiB of one-letter words. */
const HUGE = 'a '.repeat(512 * 1024);

describe('articles.word_count (kept by a trigger, backfilled by its migration)', () => {
  const base = process.env.DATABASE_URL!;
  const name = `reblog_words_${randomBytes(5).toString('hex')}`;
  const url = Object.assign(new URL(base), { pathname: `/${name}` }).toString();
  let t: TestApp;

  beforeAll(async () => {
    await withClient(base, (c) => c.query(`CREATE DATABASE ${name}`));
  });
  afterAll(async () => {
    await t?.close();
    await withClient(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  it('the migration counts the words of the articles already there, trashed ones too; reverting and running it again changes nothing', async () => {
    // The schema as it was before the migration, with articles in it.
    const before = new DataSource({
      ...dataSourceOptions(url, { poolSize: 1 }),
      migrations: MIGRATIONS.filter((m) => m.name !== 'ArticleWordCount1764650000000'),
    });
    await before.initialize();
    try {
      await before.runMigrations({ transaction: 'each' });
      const accountId = randomUUID();
      const projectId = randomUUID();
      await before.query(`INSERT INTO accounts (id, name, owner_email) VALUES ($1, 'words', 'words@example.com')`, [accountId]);
      await before.query(`INSERT INTO projects (id, account_id, name) VALUES ($1, $2, 'words')`, [projectId, accountId]);
      // More rows than one backfill batch holds (1,000), some of them large.
      await before.query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, body, status, deleted_at)
         SELECT gen_random_uuid(), $1, $2, 'a-' || i, 'A ' || i, ($3::text[])[1 + i % cardinality($3::text[])] || repeat(' word', i % 50),
                'draft', CASE WHEN i % 10 = 0 THEN now() END
           FROM generate_series(1, 2500) i`,
        [accountId, projectId, BODIES],
      );
      await before.query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, body, status) VALUES (gen_random_uuid(), $1, $2, 'huge', 'Huge', $3, 'draft')`,
        [accountId, projectId, HUGE],
      );
    } finally {
      await before.destroy();
    }

    expect(await migrate(url)).toEqual(['ArticleWordCount1764650000000']);
    const check = () =>
      withClient(url, async (c) => {
        const { rows } = await c.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE word_count IS DISTINCT FROM ${RECOUNT})::int AS wrong FROM articles`);
        const column = await c.query(`SELECT is_nullable FROM information_schema.columns WHERE table_name = 'articles' AND column_name = 'word_count'`);
        return { ...rows[0], nullable: column.rows[0]?.is_nullable };
      });
    expect(await check()).toEqual({ n: 2501, wrong: 0, nullable: 'NO' });

    await migrate(url, 'revert');
    const gone = await withClient(url, (c) =>
      c.query(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'articles' AND column_name = 'word_count'`),
    );
    expect(gone.rows[0].n).toBe(0);
    expect(await migrate(url)).toEqual(['ArticleWordCount1764650000000']);
    expect(await check()).toEqual({ n: 2501, wrong: 0, nullable: 'NO' });
  });

  it('every write path keeps it: create, update, publish, trash, restore, the AI writer, plain SQL; a hand-set value does not stick', async () => {
    t = await startTestApp({ DATABASE_URL: url, SYNC_BUDGET_MS: '60000' });
    const tenant = await createTenant(t);
    const scope = { accountId: tenant.accountId, projectId: tenant.projectIds[0] };
    const articles = t.app.get(ArticlesService);
    const stored = (id: string) =>
      withClient(
        url,
        async (c) =>
          (await c.query(`SELECT word_count, ${RECOUNT} AS recount FROM articles WHERE id = $1`, [id])).rows[0] as { word_count: number; recount: number },
      );

    for (const body of [...BODIES, HUGE]) {
      const { id } = await articles.create(scope, { title: 'Words', body });
      const { word_count, recount } = await stored(id);
      expect(word_count).toBe(recount);
    }
    const a = await articles.create(scope, { title: 'Counted', body: 'one two three' });
    expect((await stored(a.id)).word_count).toBe(3);
    const updated = await articles.update(scope, a.id, a.version, { body: 'one two three four, five' }, { credentialId: null });
    expect((await stored(a.id)).word_count).toBe(5);
    await articles.update(scope, a.id, updated.version, { title: 'Only the title' }, { credentialId: null });
    expect((await stored(a.id)).word_count).toBe(5);
    await articles.publish(scope, a.id, undefined, { credentialId: null });
    expect((await stored(a.id)).word_count).toBe(5);

    await articles.delete(scope, a.id, { credentialId: null });
    expect((await stored(a.id)).word_count).toBe(5);
    await t.app.get(ArticleTrashService).restore(a.id);
    expect((await stored(a.id)).word_count).toBe(5);

    // A value set by hand is put back; one set together with a new body is the new body's count.
    await withClient(url, (c) => c.query(`UPDATE articles SET word_count = 999 WHERE id = $1`, [a.id]));
    expect((await stored(a.id)).word_count).toBe(5);
    await withClient(url, (c) => c.query(`UPDATE articles SET word_count = 999, body = 'six seven' WHERE id = $1`, [a.id]));
    expect((await stored(a.id)).word_count).toBe(2);

    // Plain SQL (seeds, other tools) gets it too.
    const raw = randomUUID();
    await withClient(url, (c) =>
      c.query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, body, status) VALUES ($1, $2, $3, 'raw', 'Raw', 'eins zwei drei vier', 'draft')`,
        [raw, scope.accountId, scope.projectId],
      ),
    );
    expect((await stored(raw)).word_count).toBe(4);

    // The AI writer inserts its article in the job's transaction.
    await callOk(t, tenant.key, 'configure_agent', { agent: 'writer', answers: { tone: 'Warm', length: 'short' } });
    const written = await callOk(t, tenant.key, 'write_article', { brief: 'A short piece on counting words' });
    expect(written.status).toBe('succeeded');
    const ai = await stored(written.article.id);
    expect(ai.word_count).toBe(ai.recount);
    expect(ai.word_count).toBeGreaterThan(10);
  });

  it('the count PostgreSQL 14 gets (no regexp_count) is the same count', async () => {
    const texts = [...BODIES, ' leading and trailing ', '...', 'x', 'mixed.up,words;and:more', 'tab\tnew\nline\r\nend', 'a'.repeat(10_000)];
    const { rows } = await withClient(url, (c) =>
      c.query(
        `SELECT ${wordCountSql('t', 150000)} AS current, ${wordCountSql('t', 140000)} AS pg14, ${RECOUNT.replace('body', 't')} AS recount FROM unnest($1::text[]) t`,
        [texts],
      ),
    );
    for (const row of rows) expect([row.current, row.pg14]).toEqual([row.recount, row.recount]);
  });
});
