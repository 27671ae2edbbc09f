import { createTenant, type Tenant } from '../support/fixtures.js';
import { callOk, type CallOutcome, callTool } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectTotalsMatch, sql } from './article-helpers.js';

/** Every answer of a race is a 200 with a tool result: never an HTTP 5xx nor a JSON-RPC -32603. */
function expectNoCrash(outcomes: CallOutcome[]): void {
  for (const o of outcomes) {
    expect(o.status).toBe(200);
    expect(o.rpcError).toBeUndefined();
  }
}

describe('article writes under concurrency', () => {
  let t: TestApp;
  let tenant: Tenant;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    key = tenant.key;
  });
  afterAll(async () => {
    await t.close();
  });

  it('concurrent updates on the same version: exactly one wins, the others get version_conflict', async () => {
    for (let round = 0; round < 8; round++) {
      const a = await callOk(t, key, 'create_article', { title: `Contended ${round}` });
      const writers = round % 2 ? 2 : 6;
      const outcomes = await Promise.all(
        Array.from({ length: writers }, (_, i) => callTool(t, key, 'update_article', { id: a.id, version: 1, body: `writer ${i}` })),
      );
      expectNoCrash(outcomes);
      const winners = outcomes.filter((o) => !o.isError);
      const losers = outcomes.filter((o) => o.isError);
      expect(winners).toHaveLength(1);
      expect(losers.map((o) => o.json.error.code)).toEqual(Array(writers - 1).fill('version_conflict'));
      for (const l of losers) expect(l.json.error.message).toContain('is at version 2, not 1');
      const final = await callOk(t, key, 'get_article', { id: a.id });
      expect(final).toEqual(expect.objectContaining({ version: 2, body: winners[0].json.body }));
      const revisions = await sql(t).query(`SELECT version FROM article_revisions WHERE article_id = $1`, [a.id]);
      expect(revisions).toEqual([{ version: 1 }]);
    }
  });

  it('concurrent creates with the same explicit handle: one succeeds, the others get handle_taken (never a 500)', async () => {
    for (let round = 0; round < 4; round++) {
      const handle = `same-handle-${round}`;
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => callTool(t, key, 'create_article', { title: `Racer ${i}`, handle })));
      expectNoCrash(outcomes);
      expect(outcomes.filter((o) => !o.isError)).toHaveLength(1);
      const losers = outcomes.filter((o) => o.isError);
      expect(losers).toHaveLength(7);
      for (const l of losers) {
        expect(l.json.error.code).toBe('handle_taken');
        expect(l.json.error.message).toContain(`"${handle}-2" is free`);
      }
      const [{ n }] = await sql(t).query(`SELECT count(*)::int AS n FROM articles WHERE project_id = $1 AND handle = $2`, [tenant.projectIds[0], handle]);
      expect(n).toBe(1);
    }
  });

  it('concurrent creates with the same title get distinct derived handles', async () => {
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => callTool(t, key, 'create_article', { title: 'Breaking news!' })));
    expectNoCrash(outcomes);
    expect(outcomes.every((o) => !o.isError)).toBe(true);
    const handles = outcomes.map((o) => o.json.handle).sort();
    expect(handles).toEqual(['breaking-news', ...Array.from({ length: 9 }, (_, i) => `breaking-news-${i + 2}`)].sort());
  });

  it('publish racing delete always ends consistent: trashed, one revision per change that succeeded', async () => {
    for (let round = 0; round < 15; round++) {
      const a = await callOk(t, key, 'create_article', { title: `Publish or perish ${round}` });
      const calls = [callTool(t, key, 'publish_article', { id: a.id }), callTool(t, key, 'delete_article', { id: a.id })];
      const [publish, del] = round % 2 ? await Promise.all(calls) : (await Promise.all(calls.reverse())).reverse();
      expectNoCrash([publish, del]);
      // Delete always wins in the end: publish never undeletes.
      expect(del.isError).toBe(false);
      expect(del.json).toEqual({ deleted: true, id: a.id });
      if (publish.isError) expect(publish.json.error.code).toBe('not_found');
      const [row] = await sql(t).query(`SELECT status, version, deleted_at FROM articles WHERE id = $1`, [a.id]);
      const revisions = await sql(t).query(`SELECT version, snapshot->>'status' AS status FROM article_revisions WHERE article_id = $1 ORDER BY version`, [
        a.id,
      ]);
      expect(row.deleted_at).not.toBeNull();
      if (publish.isError) {
        expect(row).toEqual(expect.objectContaining({ status: 'draft', version: 2 }));
        expect(revisions).toEqual([{ version: 1, status: 'draft' }]);
      } else {
        expect(row).toEqual(expect.objectContaining({ status: 'published', version: 3 }));
        expect(revisions).toEqual([
          { version: 1, status: 'draft' },
          { version: 2, status: 'published' },
        ]);
      }
    }
    await expectTotalsMatch(t, key, tenant.projectIds[0]);
  });

  it('updates racing deletes and publishes keep the listing totals equal to count(*)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await callOk(t, key, 'create_article', { title: `Churn ${i}`, status: i % 3 ? 'draft' : 'published' })).id);
    await Promise.all(
      ids.flatMap((id, i) => [
        callTool(t, key, 'update_article', { id, version: 1, tags: ['churn'] }),
        i % 2
          ? callTool(t, key, 'delete_article', { id })
          : callTool(t, key, 'publish_article', { id, published_at: i % 4 ? '2097-01-01T00:00:00Z' : undefined }),
        callTool(t, key, 'create_article', { title: `Churn extra ${i}` }),
      ]),
    );
    await expectTotalsMatch(t, key, tenant.projectIds[0]);
    const [{ all }] = await sql(t).query(`SELECT n::int AS all FROM article_counts WHERE project_id = $1 AND status = '*'`, [tenant.projectIds[0]]);
    expect((await callOk(t, key, 'list_projects', {})).items[0].article_count).toBe(all);
  });
});
