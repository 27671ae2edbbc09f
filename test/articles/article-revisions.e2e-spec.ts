import { createTenant, type Tenant } from '../support/fixtures.js';
import { callOk, callTool, connectClient } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { sql } from './article-helpers.js';

/** The stored revisions of an article, oldest first. */
async function revisions(t: TestApp, articleId: string): Promise<number[]> {
  const rows = (await sql(t).query(`SELECT version FROM article_revisions WHERE article_id = $1 ORDER BY version`, [articleId])) as { version: number }[];
  return rows.map((r) => r.version);
}

/** Updates `id` until one update of this writer went through, re-reading the version after each conflict. */
async function updateUntilDone(t: TestApp, key: string, id: string, body: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { version } = await callOk(t, key, 'get_article', { id });
    const out = await callTool(t, key, 'update_article', { id, version, body });
    if (!out.isError) return;
    expect(out.json.error.code).toBe('version_conflict');
  }
  throw new Error('100 conflicts in a row');
}

describe('article revisions: at most ARTICLE_REVISIONS_KEPT per article, the newest, pruned with each change', () => {
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    t = await startTestApp({ ARTICLE_REVISIONS_KEPT: '3' });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('6 updates leave the 3 newest revisions, and get_article says how many are kept and the limit', async () => {
    const a = await callOk(t, tenant.key, 'create_article', { title: 'Often edited' });
    expect((await callOk(t, tenant.key, 'get_article', { id: a.id })).revisions).toEqual({ kept: 0, limit: 3 });
    let version = a.version as number;
    for (let i = 1; i <= 6; i++) {
      version = (await callOk(t, tenant.key, 'update_article', { id: a.id, version, body: `edit ${i}` })).version;
      expect((await revisions(t, a.id)).length).toBe(Math.min(i, 3));
    }
    expect(version).toBe(7);
    // The states before the last three updates (versions 4, 5 and 6); the current one is the article itself.
    expect(await revisions(t, a.id)).toEqual([4, 5, 6]);
    const snapshot = (await sql(t).query(`SELECT snapshot->>'body' AS body FROM article_revisions WHERE article_id = $1 AND version = 6`, [a.id])) as {
      body: string;
    }[];
    expect(snapshot).toEqual([{ body: 'edit 5' }]);

    const got = await callOk(t, tenant.key, 'get_article', { id: a.id });
    expect(got).toMatchObject({ id: a.id, version: 7, body: 'edit 6', revisions: { kept: 3, limit: 3 } });
  });

  it('10 writers updating one article at once never leave more than 3 revisions', async () => {
    const a = await callOk(t, tenant.key, 'create_article', { title: 'Contended edits' });
    let watching = true;
    let most = 0;
    const watcher = (async () => {
      while (watching) most = Math.max(most, (await revisions(t, a.id)).length);
    })();
    await Promise.all(Array.from({ length: 10 }, (_, i) => updateUntilDone(t, tenant.key, a.id, `writer ${i}`)));
    watching = false;
    await watcher;
    expect(most).toBeLessThanOrEqual(3);
    const final = await callOk(t, tenant.key, 'get_article', { id: a.id });
    expect(final.version).toBe(11);
    expect(await revisions(t, a.id)).toEqual([8, 9, 10]);
  });

  it('the other changes (publish, delete) keep the bound too, and the SDK client accepts get_article against its output schema', async () => {
    const a = await callOk(t, tenant.key, 'create_article', { title: 'Published and edited' });
    let version = a.version as number;
    for (let i = 0; i < 4; i++) version = (await callOk(t, tenant.key, 'update_article', { id: a.id, version, body: `edit ${i}` })).version;
    // Versions 1 to 4 were kept by the updates, 5 by the publish: the newest 3 remain.
    await callOk(t, tenant.key, 'publish_article', { id: a.id });
    expect(await revisions(t, a.id)).toEqual([3, 4, 5]);

    const client = await connectClient(t, tenant.key);
    try {
      const tools = await client.listTools();
      const schema = tools.tools.find((x) => x.name === 'get_article')!.outputSchema as { properties: Record<string, unknown>; required: string[] };
      expect(schema.properties.revisions).toBeDefined();
      expect(schema.required).toContain('revisions');
      // The SDK validates structuredContent against the tool's outputSchema and throws when it does not match.
      const result = await client.callTool({ name: 'get_article', arguments: { id: a.id } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ version: 6, status: 'published', revisions: { kept: 3, limit: 3 } });
    } finally {
      await client.close();
    }

    await callOk(t, tenant.key, 'delete_article', { id: a.id });
    expect(await revisions(t, a.id)).toEqual([4, 5, 6]);
  });
});
