import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DataSource } from 'typeorm';
import { createTenant, ISO, MISSING_ID, newAccountWithProjects, newKey, type Tenant, UUID, withRole } from '../support/fixtures.js';
import { call, connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectToolError, expectToolResult, seedArticle } from './mcp-e2e-helpers.js';

// The read tools (docs/protocol.md#the-tools) and tenancy: other accounts' ids behave exactly like unknown ones.
const SUMMARY_KEYS = ['id', 'handle', 'title', 'excerpt', 'status', 'tags', 'published_at', 'updated_at', 'version'];
const ARTICLE_KEYS = [
  'id',
  'project_id',
  'handle',
  'title',
  'excerpt',
  'body',
  'status',
  'tags',
  'published_at',
  'created_at',
  'updated_at',
  'version',
  'featured_image_id',
  'source',
  'job_id',
];

describe('/mcp read tools', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function tool(client: Client, name: string, args: Record<string, unknown> = {}) {
    return client.callTool({ name, arguments: args });
  }
  /** Sets updated_at so that the order of a listing is known. */
  async function touch(id: string, minutesAgo: number) {
    await db.query(`UPDATE articles SET updated_at = now() - make_interval(mins => $2) WHERE id = $1`, [id, minutesAgo]);
  }

  describe('list_projects', () => {
    it('answers {"items": [{id, name, role, article_count}]} for every reachable project, with its own role', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Blog' }, { name: 'Docs' }, { name: 'Hidden' }]);
      const [blog, docs, hidden] = projectIds;
      for (let i = 0; i < 3; i++) await seedArticle(t, accountId, blog, { title: `Post ${i}` });
      await seedArticle(t, accountId, hidden, { title: 'Not reached' });
      const { key } = await newKey(t, accountId, [
        { project_id: blog, role: 'editor' },
        { project_id: docs, role: 'viewer' },
      ]);
      const client = await connectClient(t, key);
      const value = expectToolResult(await tool(client, 'list_projects'));
      expect(Object.keys(value)).toEqual(['items']);
      expect(value.items).toEqual([
        { id: blog, name: 'Blog', role: 'editor', article_count: 3 },
        { id: docs, name: 'Docs', role: 'viewer', article_count: 0 },
      ]);
      for (const item of value.items) expect(Object.keys(item)).toEqual(['id', 'name', 'role', 'article_count']);
      await client.close();
    });

    it('lists a reachable project even where list_projects itself is disabled, so that its id is known', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'A' }, { name: 'B', disabled_tools: ['list_projects'] }]);
      const { key } = await newKey(t, accountId, withRole(projectIds, 'owner'));
      const res = await rpc(t, key, call(1, 'list_projects', {}));
      expect(expectToolResult(res.body.result).items.map((p: any) => p.id)).toEqual(projectIds);
    });
  });

  describe('list_articles', () => {
    let tenant: Tenant;
    let client: Client;
    beforeAll(async () => {
      tenant = await createTenant(t);
      client = await connectClient(t, tenant.key);
    });
    afterAll(async () => {
      await client?.close();
    });

    it('an empty project: no items, total 0, the default page 1 and page_size 20, 0 pages', async () => {
      const empty = await createTenant(t);
      const res = await rpc(t, empty.key, call(1, 'list_articles', {}));
      expect(expectToolResult(res.body.result)).toEqual({ items: [], pagination: { total: 0, page: 1, page_size: 20, pages: 0 } });
    });

    it('paginates with page and page_size, newest updated_at first', async () => {
      const pager = await createTenant(t);
      const ids: string[] = [];
      for (let i = 0; i < 25; i++) {
        const a = await seedArticle(t, pager.accountId, pager.projectIds[0], { title: `Article ${String(i).padStart(2, '0')}` });
        ids.push(a.id);
      }
      // Article i was updated i minutes ago: Article 00 is the newest; ids are in creation order, so this reverses nothing by accident.
      for (const [i, id] of ids.entries()) await touch(id, i);
      const c = await connectClient(t, pager.key);
      const first = expectToolResult(await tool(c, 'list_articles'));
      expect(first.pagination).toEqual({ total: 25, page: 1, page_size: 20, pages: 2 });
      expect(first.items.map((a: any) => a.id)).toEqual(ids.slice(0, 20));
      const second = expectToolResult(await tool(c, 'list_articles', { page: 2 }));
      expect(second.pagination).toEqual({ total: 25, page: 2, page_size: 20, pages: 2 });
      expect(second.items.map((a: any) => a.id)).toEqual(ids.slice(20));
      const beyond = expectToolResult(await tool(c, 'list_articles', { page: 3 }));
      expect(beyond).toEqual({ items: [], pagination: { total: 25, page: 3, page_size: 20, pages: 2 } });
      const small = expectToolResult(await tool(c, 'list_articles', { page: 4, page_size: 7 }));
      expect(small.pagination).toEqual({ total: 25, page: 4, page_size: 7, pages: 4 });
      expect(small.items.map((a: any) => a.id)).toEqual(ids.slice(21, 25));
      const all = expectToolResult(await tool(c, 'list_articles', { page_size: 100 }));
      expect(all.items.map((a: any) => a.id)).toEqual(ids);
      // A change moves an article to the top.
      await db.query(`UPDATE articles SET updated_at = now() + interval '1 minute' WHERE id = $1`, [ids[24]]);
      const moved = expectToolResult(await tool(c, 'list_articles', { page_size: 1 }));
      expect(moved.items[0].id).toBe(ids[24]);
      await c.close();
    });

    it('items are article summaries with exactly the summary fields', async () => {
      const a = await seedArticle(t, tenant.accountId, tenant.projectIds[0], {
        title: 'Summary shape',
        excerpt: 'Short.',
        body: 'A long body that a listing does not carry.',
        tags: ['x', 'y'],
        status: 'published',
      });
      const value = expectToolResult(await tool(client, 'list_articles', { search: 'summary shape' }));
      expect(value.items).toHaveLength(1);
      const item = value.items[0];
      expect(Object.keys(item)).toEqual(SUMMARY_KEYS);
      expect(item).toEqual({
        id: a.id,
        handle: 'summary-shape',
        title: 'Summary shape',
        excerpt: 'Short.',
        status: 'published',
        tags: ['x', 'y'],
        published_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        version: 1,
      });
      expect(item.id).toMatch(UUID);
    });

    it('filters by status, by tag (exact tag) and combines filters', async () => {
      const p = await createTenant(t);
      const seed = (title: string, status: 'draft' | 'published', tags: string[]) => seedArticle(t, p.accountId, p.projectIds[0], { title, status, tags });
      await seed('Draft news', 'draft', ['news']);
      await seed('Published news', 'published', ['news', 'tech']);
      await seed('Newsletter issue', 'published', ['newsletter']);
      await seed('Draft other', 'draft', []);
      const c = await connectClient(t, p.key);
      const titles = async (args: Record<string, unknown>) =>
        expectToolResult(await tool(c, 'list_articles', args))
          .items.map((a: any) => a.title)
          .sort();
      expect(await titles({ status: 'draft' })).toEqual(['Draft news', 'Draft other']);
      expect(await titles({ status: 'published' })).toEqual(['Newsletter issue', 'Published news']);
      expect(await titles({ status: 'archived' })).toEqual([]);
      expect(await titles({ tag: 'news' })).toEqual(['Draft news', 'Published news']);
      expect(await titles({ tag: 'NEWS' })).toEqual([]);
      expect(await titles({ tag: 'tech', status: 'published' })).toEqual(['Published news']);
      expect(await titles({ tag: 'news', status: 'draft', search: 'DRAFT' })).toEqual(['Draft news']);
      const counted = expectToolResult(await tool(c, 'list_articles', { status: 'draft', page_size: 1 }));
      expect(counted.pagination).toEqual({ total: 2, page: 1, page_size: 1, pages: 2 });
      await c.close();
    });

    it('search matches a case-insensitive substring of the title or of the handle', async () => {
      const p = await createTenant(t);
      await seedArticle(t, p.accountId, p.projectIds[0], { title: 'Hello World' });
      await seedArticle(t, p.accountId, p.projectIds[0], { title: 'Unrelated title', handle: 'secret-slug' });
      await seedArticle(t, p.accountId, p.projectIds[0], { title: 'Something else' });
      const c = await connectClient(t, p.key);
      const titles = async (search: string) =>
        expectToolResult(await tool(c, 'list_articles', { search }))
          .items.map((a: any) => a.title)
          .sort();
      expect(await titles('hello')).toEqual(['Hello World']);
      expect(await titles('O WOR')).toEqual(['Hello World']);
      expect(await titles('hello-world')).toEqual(['Hello World']);
      expect(await titles('SECRET-SL')).toEqual(['Unrelated title']);
      expect(await titles('e')).toEqual(['Hello World', 'Something else', 'Unrelated title']);
      expect(await titles('nothing like it')).toEqual([]);
      const counted = expectToolResult(await tool(c, 'list_articles', { search: 'e', page_size: 2 }));
      expect(counted.pagination).toEqual({ total: 3, page: 1, page_size: 2, pages: 2 });
      await c.close();
    });

    it('% and _ (and \\) in a search are literal characters, not wildcards', async () => {
      const p = await createTenant(t);
      for (const title of ['100% pure', '100 pure', 'snake_case names', 'snakeXcase names', 'C:\\path', 'C:path']) {
        await seedArticle(t, p.accountId, p.projectIds[0], { title });
      }
      const c = await connectClient(t, p.key);
      const titles = async (search: string) =>
        expectToolResult(await tool(c, 'list_articles', { search }))
          .items.map((a: any) => a.title)
          .sort();
      expect(await titles('%')).toEqual(['100% pure']);
      expect(await titles('0%')).toEqual(['100% pure']);
      expect(await titles('e_c')).toEqual(['snake_case names']);
      expect(await titles('_')).toEqual(['snake_case names']);
      expect(await titles('\\')).toEqual(['C:\\path']);
      expect(await titles("' OR '1'='1")).toEqual([]);
      await c.close();
    });

    it("never shows another account's articles, nor those of a project the key does not reach", async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{}, {}]);
      await seedArticle(t, accountId, projectIds[0], { title: 'Reachable' });
      await seedArticle(t, accountId, projectIds[1], { title: 'Unreachable' });
      const other = await createTenant(t);
      await seedArticle(t, other.accountId, other.projectIds[0], { title: 'Foreign' });
      const { key } = await newKey(t, accountId, [{ project_id: projectIds[0], role: 'viewer' }]);
      const res = await rpc(t, key, call(1, 'list_articles', { page_size: 100 }));
      expect(expectToolResult(res.body.result).items.map((a: any) => a.title)).toEqual(['Reachable']);
    });
  });

  describe('get_article', () => {
    let tenant: Tenant;
    let client: Client;
    let article: Awaited<ReturnType<typeof seedArticle>>;
    beforeAll(async () => {
      tenant = await createTenant(t);
      client = await connectClient(t, tenant.key);
      article = await seedArticle(t, tenant.accountId, tenant.projectIds[0], {
        title: 'Full article',
        body: '# Title\n\nBody **markdown**.',
        excerpt: 'Ex',
        tags: ['a'],
      });
    });
    afterAll(async () => {
      await client?.close();
    });

    it('by id: the full article, with exactly the article fields and how many revisions are kept', async () => {
      const value = expectToolResult(await tool(client, 'get_article', { id: article.id }));
      expect(Object.keys(value)).toEqual([...ARTICLE_KEYS, 'revisions']);
      expect(value).toEqual({
        id: article.id,
        project_id: tenant.projectIds[0],
        handle: 'full-article',
        title: 'Full article',
        excerpt: 'Ex',
        body: '# Title\n\nBody **markdown**.',
        status: 'draft',
        tags: ['a'],
        published_at: null,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        version: 1,
        featured_image_id: null,
        source: 'human',
        job_id: null,
        revisions: { kept: 0, limit: 50 },
      });
    });

    it('by handle: the same article', async () => {
      const byId = expectToolResult(await tool(client, 'get_article', { id: article.id }));
      const byHandle = expectToolResult(await tool(client, 'get_article', { handle: 'full-article' }));
      expect(byHandle).toEqual(byId);
    });

    it('both id and handle, or neither, is a tool error', async () => {
      for (const args of [{ id: article.id, handle: 'full-article' }, {}]) {
        const error = expectToolError(await tool(client, 'get_article', args), 'invalid_arguments');
        expect(error.message).toContain('id');
        expect(error.message).toContain('handle');
      }
    });

    it("an unknown id, a non-UUID id, another account's article and an unreachable project's article all get the same tool error", async () => {
      const other = await createTenant(t);
      const foreign = await seedArticle(t, other.accountId, other.projectIds[0], { title: 'Foreign' });
      const { accountId, projectIds } = await newAccountWithProjects(t, [{}, {}]);
      const unreachable = await seedArticle(t, accountId, projectIds[1], { title: 'Unreachable' });
      const { key } = await newKey(t, accountId, [{ project_id: projectIds[0], role: 'owner' }]);
      const sibling = await connectClient(t, key);

      const asked: [Client, string][] = [
        [client, MISSING_ID],
        [client, 'not-a-uuid'],
        [client, "1' OR '1'='1"],
        [client, foreign.id],
        [sibling, unreachable.id],
        [sibling, foreign.id],
      ];
      const messages = new Set<string>();
      for (const [c, id] of asked) {
        const result = await tool(c, 'get_article', { id });
        const error = expectToolError(result, 'not_found');
        expect(error.message).toContain(id);
        messages.add(error.message.replace(id, '<id>'));
      }
      expect(messages.size).toBe(1);

      const handles = new Set<string>();
      for (const [c, handle] of [
        [client, 'no-such-handle'],
        [client, 'foreign'],
        [sibling, 'unreachable'],
      ] as [Client, string][]) {
        const error = expectToolError(await tool(c, 'get_article', { handle }), 'not_found');
        handles.add(error.message.replace(handle, '<handle>'));
      }
      expect(handles.size).toBe(1);
      await sibling.close();
    });

    it('the same over raw HTTP', async () => {
      const res = await rpc(t, tenant.key, call(9, 'get_article', { handle: 'full-article' }));
      expect(res.status).toBe(200);
      expect(expectToolResult(res.body.result).id).toBe(article.id);
    });
  });
});
