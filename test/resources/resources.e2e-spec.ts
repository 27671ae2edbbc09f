import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { DataSource } from 'typeorm';
import type { ArticleView } from '../../src/articles/article.views.js';
import { newId } from '../../src/common/ids.js';
import { RESOURCES_PAGE } from '../../src/resources/article-resources.js';
import { articleMarkdown, articleHandleUri, articleUri, mediaUri } from '../../src/resources/resource-uris.js';
import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { MISSING_ID, createTenant, newAccountWithProjects, newKey, withRole } from '../support/fixtures.js';
import { callOk, connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { seedArticle } from '../mcp/mcp-e2e-helpers.js';

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4AWP4z8DwHwAFAAH/e+m+7wAAAABJRU5ErkJggg==', 'base64');

let nextId = 1;

/** A raw JSON-RPC request (stateless unless `headers` name a session); answers the body. */
async function raw(t: TestApp, key: string, method: string, params?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await rpc(
    t,
    key,
    { jsonrpc: '2.0', id: nextId++, method, ...(params === undefined ? {} : { params }) },
    { 'MCP-Protocol-Version': '2025-11-25', ...headers },
  );
  expect(res.status).toBe(200);
  return res.body;
}

/** The JSON-RPC error `-32002 Resource not found: <uri>` with `data.uri`, exactly. */
function expectNotFound(body: any, uri: string): void {
  expect(body.result).toBeUndefined();
  expect(body.error).toEqual({ code: -32002, message: `Resource not found: ${uri}`, data: { uri } });
}

function expectInvalidParams(body: any, message: RegExp): void {
  expect(body.result).toBeUndefined();
  expect(body.error.code).toBe(-32602);
  expect(body.error.message).toMatch(message);
}

describe('MCP resources', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Stores an image as generate_image does (its bytes in Postgres). */
  async function seedMedia(accountId: string, projectId: string, data = PNG): Promise<string> {
    const id = newId();
    await db.query(`INSERT INTO media (id, account_id, project_id, mime_type, width, height, size, data) VALUES ($1, $2, $3, 'image/png', 1, 1, $4, $5)`, [
      id,
      accountId,
      projectId,
      data.length,
      data,
    ]);
    return id;
  }
  async function minutesAgo(articleId: string, minutes: number): Promise<void> {
    await db.query(`UPDATE articles SET updated_at = now() - make_interval(mins => $2) WHERE id = $1`, [articleId, minutes]);
  }

  describe('resources/list', () => {
    it("lists the caller's live articles newest first (by-id URI, handle, title, excerpt, markdown), then images, in pages of 50 by an opaque cursor", async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Blog' }, { name: 'Docs' }]);
      const [blog, docs] = projectIds;
      const articles: ArticleView[] = [];
      for (let i = 0; i < RESOURCES_PAGE + 3; i++) {
        const article = await seedArticle(t, accountId, i % 2 ? blog : docs, { title: `Post ${i}`, excerpt: i === 0 ? '' : `About ${i}` });
        await minutesAgo(article.id, 1000 - i);
        articles.push(article);
      }
      // The last of page one and the first of page two share updated_at: the id breaks the tie, and the cursor must skip neither.
      await db.query(`UPDATE articles SET updated_at = (SELECT updated_at FROM articles WHERE id = $1) WHERE id = $2`, [articles[2].id, articles[3].id]);
      const trashed = await seedArticle(t, accountId, blog, { title: 'Trashed' });
      await db.query(`UPDATE articles SET deleted_at = now() WHERE id = $1`, [trashed.id]);
      const media = [await seedMedia(accountId, blog), await seedMedia(accountId, docs)];
      const { key } = await newKey(t, accountId, withRole(projectIds, 'viewer'), ['read']);
      const client = await connectClient(t, key);

      const first = await client.listResources();
      expect(first.resources).toHaveLength(RESOURCES_PAGE);
      expect(typeof first.nextCursor).toBe('string');
      const second = await client.listResources({ cursor: first.nextCursor });
      expect(second.nextCursor).toBeUndefined();
      const all = [...first.resources, ...second.resources];
      // Newest first; 3 and 2 tie on updated_at and 3 has the greater id.
      const expectedArticleUris = [...articles].reverse().map((a) => articleUri(a.project_id, a.id));
      expect(first.resources[RESOURCES_PAGE - 1].uri).toBe(articleUri(articles[3].project_id, articles[3].id));
      expect(all.map((r) => r.uri)).toEqual([...expectedArticleUris, mediaUri(docs, media[1]), mediaUri(blog, media[0])]);
      expect(all.find((r) => r.uri.includes(trashed.id))).toBeUndefined();

      const post1 = articles[1];
      expect(all.find((r) => r.uri === articleUri(blog, post1.id))).toEqual({
        uri: `reblog://projects/${blog}/articles/id/${post1.id}`,
        name: post1.handle,
        title: 'Post 1',
        description: 'About 1',
        mimeType: 'text/markdown',
        annotations: { lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      });
      // No excerpt: no description.
      expect(all.find((r) => r.uri === articleUri(docs, articles[0].id))).not.toHaveProperty('description');
      expect(all.find((r) => r.uri === mediaUri(blog, media[0]))).toEqual({
        uri: `reblog://projects/${blog}/media/${media[0]}`,
        name: media[0],
        title: 'Image 1×1',
        description: 'A 1×1 image (image/png).',
        mimeType: 'image/png',
        size: PNG.length,
      });
      await client.close();
    });

    it('pages exactly: 50 articles make one full page and the images start the next', async () => {
      const tenant = await createTenant(t);
      for (let i = 0; i < RESOURCES_PAGE; i++) await seedArticle(t, tenant.accountId, tenant.projectIds[0], { title: `A${i}` });
      const image = await seedMedia(tenant.accountId, tenant.projectIds[0]);
      const first = (await raw(t, tenant.key, 'resources/list')).result;
      expect(first.resources).toHaveLength(RESOURCES_PAGE);
      expect(first.resources.every((r: any) => r.mimeType === 'text/markdown')).toBe(true);
      const second = (await raw(t, tenant.key, 'resources/list', { cursor: first.nextCursor })).result;
      expect(second).toEqual({ resources: [expect.objectContaining({ uri: mediaUri(tenant.projectIds[0], image) })] });
    });

    it('lists only what the credential could read with get_article: not another account, an unreachable project, one with get_article disabled, nor without the read scope', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [
        { name: 'Open' },
        { name: 'Closed', disabled_tools: ['get_article'] },
        { name: 'Unreached' },
      ]);
      const [open, closed, unreached] = projectIds;
      const visible = await seedArticle(t, accountId, open, { title: 'Visible' });
      await seedArticle(t, accountId, closed, { title: 'Disabled there' });
      await seedArticle(t, accountId, unreached, { title: 'Not reached' });
      await seedMedia(accountId, closed);
      await seedMedia(accountId, unreached);
      const other = await createTenant(t);
      await seedArticle(t, other.accountId, other.projectIds[0], { title: 'Another account' });
      const { key } = await newKey(t, accountId, withRole([open, closed], 'owner'));
      const { resources } = (await raw(t, key, 'resources/list')).result;
      expect(resources.map((r: any) => r.uri)).toEqual([articleUri(open, visible.id)]);
      const { key: writeOnly } = await newKey(t, accountId, withRole([open], 'owner'), ['write']);
      expect((await raw(t, writeOnly, 'resources/list')).result).toEqual({ resources: [] });
    });

    it('refuses a cursor it did not give, and a cursor or params of the wrong type, with -32602', async () => {
      const tenant = await createTenant(t);
      const forged = [
        'nope',
        Buffer.from('{"p":"elsewhere"}').toString('base64url'),
        Buffer.from('{"p":"reblog","c":"a.1.x"}').toString('base64url'),
        Buffer.from('{"p":"reblog","c":"m.not-a-uuid"}').toString('base64url'),
        Buffer.from('[1]').toString('base64url'),
        '',
        'a'.repeat(2_000),
      ];
      for (const cursor of forged) expectInvalidParams(await raw(t, tenant.key, 'resources/list', { cursor }), /"cursor" is not one resources\/list gave/);
      for (const params of [{ cursor: 5 }, { cursor: null }, [], 'x']) expectInvalidParams(await raw(t, tenant.key, 'resources/list', params), /cursor|object/);
    });
  });

  describe('resources/templates/list', () => {
    it('gives the three product templates with name, title, description and mimeType', async () => {
      const tenant = await createTenant(t);
      const client = await connectClient(t, tenant.key);
      const { resourceTemplates, nextCursor } = await client.listResourceTemplates();
      expect(nextCursor).toBeUndefined();
      expect(resourceTemplates.map((r) => [r.uriTemplate, r.name, r.mimeType])).toEqual([
        ['reblog://projects/{project_id}/articles/{handle}', 'article-by-handle', 'text/markdown'],
        ['reblog://projects/{project_id}/articles/id/{article_id}', 'article-by-id', 'text/markdown'],
        ['reblog://projects/{project_id}/media/{media_id}', 'media', 'image/png'],
      ]);
      for (const template of resourceTemplates) {
        expect(template.title).toEqual(expect.any(String));
        expect(template.description).toEqual(expect.any(String));
      }
      await client.close();
    });
  });

  describe('resources/read', () => {
    it('reads an article by id and by handle as markdown with its metadata (the URI as asked), and an image as a base64 blob', async () => {
      const tenant = await createTenant(t);
      const [project] = tenant.projectIds;
      const article = await seedArticle(t, tenant.accountId, project, { title: 'Hello, world', body: '# Hi\n\nText.', tags: ['a', 'b'], excerpt: 'Short' });
      const image = await seedMedia(tenant.accountId, project);
      const client = await connectClient(t, tenant.key);
      const byId = await client.readResource({ uri: articleUri(project, article.id) });
      expect(byId).toEqual({ contents: [{ uri: articleUri(project, article.id), mimeType: 'text/markdown', text: articleMarkdown(article) }] });
      const text = (byId.contents[0] as { text: string }).text;
      expect(text).toMatch(/^---\ntitle: "Hello, world"\n/);
      expect(text).toContain(`\nid: "${article.id}"\n`);
      expect(text).toContain('\ntags: ["a","b"]\n');
      expect(text.endsWith('---\n\n# Hi\n\nText.')).toBe(true);
      const byHandle = await client.readResource({ uri: articleHandleUri(project, article.handle) });
      expect(byHandle.contents).toEqual([{ uri: articleHandleUri(project, article.handle), mimeType: 'text/markdown', text }]);
      const blob = await client.readResource({ uri: mediaUri(project, image) });
      expect(blob).toEqual({ contents: [{ uri: mediaUri(project, image), mimeType: 'image/png', blob: PNG.toString('base64') }] });
      await client.close();
    });

    it('decodes percent-escapes in URIs: an escaped handle or id reads the same article', async () => {
      const tenant = await createTenant(t);
      const [project] = tenant.projectIds;
      const article = await seedArticle(t, tenant.accountId, project, { title: 'Escapes', handle: 'caf-au-lait' });
      const escapedHandle = `reblog://projects/${project}/articles/caf%2Dau%2dlait`;
      expect((await raw(t, tenant.key, 'resources/read', { uri: escapedHandle })).result.contents[0]).toEqual(
        expect.objectContaining({ uri: escapedHandle, mimeType: 'text/markdown' }),
      );
      const escapedProject = `reblog://projects/${project.replace(/-/g, '%2D')}/articles/id/${article.id}`;
      expect((await raw(t, tenant.key, 'resources/read', { uri: escapedProject })).result.contents[0].uri).toBe(escapedProject);
    });

    it('answers the same -32002 "Resource not found" with data.uri for every URI it cannot read, of every shape', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [
        { name: 'Open' },
        { name: 'Closed', disabled_tools: ['get_article'] },
        { name: 'Unreached' },
      ]);
      const [open, closed, unreached] = projectIds;
      const { key } = await newKey(t, accountId, withRole([open, closed], 'viewer'), ['read']);
      const other = await createTenant(t);
      const seeded = async (accountId: string, projectId: string) => ({
        article: await seedArticle(t, accountId, projectId, { title: `In ${projectId.slice(0, 8)}` }),
        media: await seedMedia(accountId, projectId),
      });
      const unreadable = [
        await seeded(accountId, closed), // get_article disabled there
        await seeded(accountId, unreached), // not reached by the key
        await seeded(other.accountId, other.projectIds[0]), // another account's
      ];
      const uris: string[] = [];
      for (const { article, media } of unreadable) {
        uris.push(articleUri(article.project_id, article.id), articleHandleUri(article.project_id, article.handle), mediaUri(article.project_id, media));
      }
      const live = await seedArticle(t, accountId, open, { title: 'Live' });
      const trashed = await seedArticle(t, accountId, open, { title: 'Trashed' });
      await callOk(t, (await newKey(t, accountId, withRole([open], 'owner'))).key, 'delete_article', { id: trashed.id });
      uris.push(
        articleUri(open, trashed.id),
        articleHandleUri(open, trashed.handle),
        articleUri(open, MISSING_ID),
        articleHandleUri(open, 'no-such-handle'),
        mediaUri(open, MISSING_ID),
        mediaUri(open, live.id), // an article's id is no image
        `reblog://projects/not-a-uuid/articles/id/${live.id}`,
        `reblog://projects/${open}/articles/id/not-a-uuid`,
        `reblog://projects/${open}/media/not-a-uuid`,
        `reblog://projects/${open}/articles/%E0%A4%A`, // a broken escape
        `reblog://projects/${open}/articles/id/${live.id}/more`,
        `reblog://projects/${open}/articles/id/${live.id}?x=1`,
        `reblog://projects/${open}/pages/${live.id}`,
        `REBLOG://projects/${open}/articles/id/${live.id}`,
        `https://example.com/${live.id}`,
        'test://static-text', // a fixture: not in the product
        'not a uri',
      );
      for (const uri of uris) expectNotFound(await raw(t, key, 'resources/read', { uri }), uri);
      // The one readable article reads, so the refusals above are the tenancy rule, not a broken read.
      expect((await raw(t, key, 'resources/read', { uri: articleUri(open, live.id) })).result.contents).toHaveLength(1);
      const client = await connectClient(t, key);
      const err = await client.readResource({ uri: uris[0] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect(err).toMatchObject({ code: -32002, data: { uri: uris[0] } });
      await client.close();
    });

    it('refuses a missing or non-string uri with -32602', async () => {
      const tenant = await createTenant(t);
      for (const params of [undefined, {}, { uri: 5 }, { uri: null }, { uri: ['x'] }, [], 'reblog://x', { uri: '' }, { uri: 'x'.repeat(3000) }]) {
        expectInvalidParams(await raw(t, tenant.key, 'resources/read', params), /uri|object/);
      }
    });
  });

  describe('resources/subscribe and unsubscribe', () => {
    async function subscriptions(sessionId: string): Promise<{ uri: string; article_id: string | null }[]> {
      return db.query(`SELECT uri, article_id FROM mcp_resource_subscriptions WHERE session_id = $1 ORDER BY uri`, [sessionId]);
    }

    it("stores a session's subscriptions in Postgres, idempotently (concurrent duplicates too); unsubscribe of anything is {}", async () => {
      const tenant = await createTenant(t);
      const [project] = tenant.projectIds;
      const article = await seedArticle(t, tenant.accountId, project, { title: 'Watched' });
      const image = await seedMedia(tenant.accountId, project);
      const { sessionId } = await initSession(t, tenant.key, '2025-11-25');
      const headers = sessionHeaders(sessionId, '2025-11-25');
      const byId = articleUri(project, article.id);
      const byHandle = articleHandleUri(project, article.handle);
      const answers = await Promise.all(
        [byId, byId, byId, byHandle, mediaUri(project, image)].map((uri) => raw(t, tenant.key, 'resources/subscribe', { uri }, headers)),
      );
      for (const body of answers) expect(body).toEqual({ jsonrpc: '2.0', id: body.id, result: {} });
      expect(await subscriptions(sessionId)).toEqual(
        [
          { uri: byHandle, article_id: article.id },
          { uri: byId, article_id: article.id },
          { uri: mediaUri(project, image), article_id: null },
        ].sort((a, b) => (a.uri < b.uri ? -1 : 1)),
      );
      expect((await raw(t, tenant.key, 'resources/unsubscribe', { uri: byId }, headers)).result).toEqual({});
      expect((await raw(t, tenant.key, 'resources/unsubscribe', { uri: byId }, headers)).result).toEqual({});
      expect((await raw(t, tenant.key, 'resources/unsubscribe', { uri: 'reblog://never/subscribed' }, headers)).result).toEqual({});
      expect((await subscriptions(sessionId)).map((s) => s.uri)).not.toContain(byId);
      // The session's end takes its subscriptions with it (when ended sessions are purged).
      await t.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set('Mcp-Session-Id', sessionId).expect(204);
      await db.query(`DELETE FROM mcp_sessions WHERE id = $1`, [sessionId]);
      expect(await subscriptions(sessionId)).toEqual([]);
    });

    it('subscribes only to a URI that reads: anything else is the same -32002 as resources/read, and nothing is stored', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Open' }, { name: 'Closed', disabled_tools: ['get_article'] }]);
      const [open, closed] = projectIds;
      const { key } = await newKey(t, accountId, withRole(projectIds, 'owner'));
      const hidden = await seedArticle(t, accountId, closed, { title: 'Hidden' });
      const other = await createTenant(t);
      const foreign = await seedArticle(t, other.accountId, other.projectIds[0], { title: 'Foreign' });
      const { sessionId } = await initSession(t, key, '2025-11-25');
      const headers = sessionHeaders(sessionId, '2025-11-25');
      for (const uri of [
        articleUri(closed, hidden.id),
        articleUri(foreign.project_id, foreign.id),
        articleUri(open, MISSING_ID),
        'reblog://projects/x/articles/y',
        'test://watched-resource',
      ]) {
        expectNotFound(await raw(t, key, 'resources/subscribe', { uri }, headers), uri);
      }
      expect(await subscriptions(sessionId)).toEqual([]);
    });

    it('needs a session (-32602 saying so) and a string uri (-32602)', async () => {
      const tenant = await createTenant(t);
      const article = await seedArticle(t, tenant.accountId, tenant.projectIds[0], { title: 'X' });
      for (const method of ['resources/subscribe', 'resources/unsubscribe']) {
        expectInvalidParams(await raw(t, tenant.key, method, { uri: articleUri(tenant.projectIds[0], article.id) }), /needs a session.*Mcp-Session-Id/);
      }
      const { sessionId } = await initSession(t, tenant.key, '2025-11-25');
      for (const method of ['resources/subscribe', 'resources/unsubscribe']) {
        for (const params of [undefined, {}, { uri: 1 }, [], { uri: '' }])
          expectInvalidParams(await raw(t, tenant.key, method, params, sessionHeaders(sessionId, '2025-11-25')), /uri|object/);
      }
      // Another credential's session is 404 before any method runs.
      const other = await createTenant(t);
      const res = await rpc(
        t,
        other.key,
        { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'x' } },
        sessionHeaders(sessionId, '2025-11-25'),
      );
      expect(res.status).toBe(404);
    });
  });

  describe('with the conformance fixtures', () => {
    let f: TestApp;
    beforeAll(async () => {
      f = await startTestApp({}, [ConformanceFixturesModule]);
    });
    afterAll(async () => {
      await f?.close();
    });

    it("lists, reads and templates the test:// resources through the same registry, beside the product's", async () => {
      const tenant = await createTenant(f);
      const article = await seedArticle(f, tenant.accountId, tenant.projectIds[0], { title: 'Product' });
      const client = await connectClient(f, tenant.key);
      const first = await client.listResources();
      const all = [...first.resources, ...(first.nextCursor ? (await client.listResources({ cursor: first.nextCursor })).resources : [])];
      expect(all.map((r) => r.uri).sort()).toEqual(
        [articleUri(tenant.projectIds[0], article.id), 'test://static-binary', 'test://static-text', 'test://watched-resource'].sort(),
      );
      expect((await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate)).toContain('test://template/{id}/data');
      expect(await client.readResource({ uri: 'test://template/123/data' })).toEqual({
        contents: [{ uri: 'test://template/123/data', mimeType: 'application/json', text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}' }],
      });
      expect((await client.readResource({ uri: 'test://static-binary' })).contents[0]).toEqual({
        uri: 'test://static-binary',
        mimeType: 'image/png',
        blob: expect.any(String),
      });
      await expect(client.readResource({ uri: 'test://nothing' })).rejects.toMatchObject({ code: -32002 });
      await expect(client.subscribeResource({ uri: 'test://watched-resource' })).resolves.toEqual({});
      await client.close();
    });
  });
});
