import { ArticleSchedulerService } from '../../src/articles/article-scheduler.service.js';
import { eventually } from '../support/database.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectTotalsMatch, sql } from './article-helpers.js';

describe('scheduled articles are published at their time, exactly once, by any of several instances', () => {
  let one: TestApp;
  let two: TestApp;
  let tenant: Tenant;
  let key: string;

  beforeAll(async () => {
    // Two instances on the same database, each running the scheduler on its own timer.
    [one, two] = await Promise.all([startTestApp(), startTestApp()]);
    tenant = await createTenant(one);
    key = tenant.key;
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
  });

  it('an article scheduled two seconds ahead is published by the timers, with one system revision', async () => {
    const a = await callOk(one, key, 'create_article', { title: 'Soon' });
    const at = new Date(Date.now() + 2_000).toISOString();
    const scheduled = await callOk(one, key, 'publish_article', { id: a.id, published_at: at });
    expect(scheduled).toEqual(expect.objectContaining({ status: 'scheduled', version: 2, published_at: at }));
    await eventually(async () => (await callOk(two, key, 'get_article', { id: a.id })).status === 'published', Boolean, 20_000, 200);
    const after = await callOk(two, key, 'get_article', { id: a.id });
    expect(after).toEqual(expect.objectContaining({ status: 'published', version: 3, published_at: at }));
    const revisions = await sql(one).query(
      `SELECT version, credential_id, snapshot->>'status' AS status FROM article_revisions WHERE article_id = $1 ORDER BY version`,
      [a.id],
    );
    expect(revisions).toEqual([
      { version: 1, credential_id: tenant.keyId, status: 'draft' },
      { version: 2, credential_id: null, status: 'scheduled' },
    ]);
  });

  it('many due articles, both instances publishing at once (timers and direct calls): each is published once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const a = await callOk(one, key, 'create_article', { title: `Batch ${i}` });
      await callOk(one, key, 'publish_article', { id: a.id, published_at: '2099-01-01T00:00:00Z' });
      ids.push(a.id);
    }
    // Not yet due: nothing happens to them.
    await Promise.all([one.app.get(ArticleSchedulerService).publishDue(), two.app.get(ArticleSchedulerService).publishDue()]);
    const [{ n: stillScheduled }] = await sql(one).query(`SELECT count(*)::int AS n FROM articles WHERE id = ANY($1) AND status = 'scheduled'`, [ids]);
    expect(stillScheduled).toBe(60);

    // Their time comes, by Postgres' clock; both instances race to publish them.
    await sql(one).query(`UPDATE articles SET published_at = now() - interval '1 second' WHERE id = ANY($1)`, [ids]);
    const schedulers = [one, two].map((t) => t.app.get(ArticleSchedulerService));
    await Promise.all(Array.from({ length: 6 }, (_, i) => schedulers[i % 2].publishDue()));
    await eventually(
      async () => {
        const [{ n }] = await sql(one).query(`SELECT count(*)::int AS n FROM articles WHERE id = ANY($1) AND status = 'published'`, [ids]);
        return n === 60;
      },
      Boolean,
      20_000,
      200,
    );
    const rows = await sql(one).query(
      `SELECT a.id, a.version, count(r.*) FILTER (WHERE r.credential_id IS NULL)::int AS system_revisions, count(r.*)::int AS revisions
         FROM articles a LEFT JOIN article_revisions r ON r.article_id = a.id WHERE a.id = ANY($1) GROUP BY a.id, a.version`,
      [ids],
    );
    expect(rows).toHaveLength(60);
    for (const row of rows) expect(row).toEqual({ id: row.id, version: 3, system_revisions: 1, revisions: 2 });
    await expectTotalsMatch(two, key, tenant.projectIds[0]);
  });

  it('a scheduled article deleted before its time is never published; one edited meanwhile stays scheduled', async () => {
    const gone = await callOk(one, key, 'create_article', { title: 'Cancelled launch' });
    const edited = await callOk(one, key, 'create_article', { title: 'Edited launch' });
    for (const a of [gone, edited]) await callOk(one, key, 'publish_article', { id: a.id, published_at: '2099-01-01T00:00:00Z' });
    await callOk(one, key, 'delete_article', { id: gone.id });
    const changed = await callOk(two, key, 'update_article', { id: edited.id, version: 2, title: 'Edited launch (v2)' });
    expect(changed).toEqual(expect.objectContaining({ status: 'scheduled', version: 3 }));
    await sql(one).query(`UPDATE articles SET published_at = now() - interval '1 second' WHERE id = ANY($1)`, [[gone.id, edited.id]]);
    await Promise.all([one.app.get(ArticleSchedulerService).publishDue(), two.app.get(ArticleSchedulerService).publishDue()]);
    await eventually(async () => (await callOk(one, key, 'get_article', { id: edited.id })).status === 'published', Boolean, 20_000, 200);
    const [trashed] = await sql(one).query(`SELECT status, deleted_at FROM articles WHERE id = $1`, [gone.id]);
    expect(trashed).toEqual({ status: 'scheduled', deleted_at: expect.any(Date) });
    expect(await callOk(one, key, 'get_article', { id: edited.id })).toEqual(
      expect.objectContaining({ title: 'Edited launch (v2)', status: 'published', version: 4 }),
    );
  });
});
