import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ArticlesService } from '../../src/articles/articles.service.js';
import { DomainError } from '../../src/common/domain-error.js';
import { createTenant, ISO, MISSING_ID, newKey, type Tenant, withRole } from '../support/fixtures.js';
import { callError, callOk, callTool, connectClient, rpc, toolJson } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { sql } from './article-helpers.js';

const HANDLE_RULE = 'Invalid value for "handle": must be lower-case letters a-z and digits, words joined by single hyphens (like "my-first-post").';
function DATE_RULE(name: string): string {
  return `Invalid value for "${name}": must be an ISO-8601 date-time with a time zone, such as "2026-01-31T09:00:00Z".`;
}

describe('article write tools', () => {
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

  describe('through the SDK client', () => {
    let client: Client;
    beforeAll(async () => {
      client = await connectClient(t, key);
    });
    afterAll(async () => {
      await client.close();
    });

    it('lists the four tools with output schemas and the verb annotations', async () => {
      const { tools } = await client.listTools();
      const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
      for (const name of ['create_article', 'update_article', 'publish_article']) {
        expect(byName[name].annotations).toEqual({ readOnlyHint: false, destructiveHint: false });
        expect(byName[name].outputSchema?.required).toEqual(expect.arrayContaining(['id', 'handle', 'version', 'body', 'status']));
      }
      expect(byName.delete_article.annotations).toEqual({ readOnlyHint: false, destructiveHint: true });
      expect(byName.delete_article.outputSchema).toEqual(expect.objectContaining({ required: ['deleted', 'id'] }));
      expect(byName.create_article.inputSchema).toEqual(expect.objectContaining({ required: ['title'], additionalProperties: false }));
      expect(byName.update_article.inputSchema.required).toEqual(['id', 'version']);
    });

    it('creates, updates, publishes and deletes an article; the SDK validates every result against its outputSchema', async () => {
      const created = await client.callTool({
        name: 'create_article',
        arguments: { title: 'Crème brûlée: a story', body: '# Hi', tags: ['food', 'food', ' dessert '] },
      });
      expect(created.isError).toBeFalsy();
      const article = toolJson(created);
      expect(created.structuredContent).toEqual(article);
      expect(article).toEqual({
        id: expect.any(String),
        project_id: tenant.projectIds[0],
        handle: 'creme-brulee-a-story',
        title: 'Crème brûlée: a story',
        excerpt: '',
        body: '# Hi',
        status: 'draft',
        tags: ['food', 'dessert'],
        published_at: null,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        version: 1,
        featured_image_id: null,
        source: 'human',
        job_id: null,
      });

      const updated = toolJson(
        await client.callTool({ name: 'update_article', arguments: { id: article.id, version: 1, title: 'Crème brûlée, again', excerpt: 'Sweet.' } }),
      );
      expect(updated).toEqual({ ...article, title: 'Crème brûlée, again', excerpt: 'Sweet.', version: 2, updated_at: expect.stringMatching(ISO) });

      const published = toolJson(await client.callTool({ name: 'publish_article', arguments: { id: article.id } }));
      expect(published).toEqual(expect.objectContaining({ status: 'published', version: 3, published_at: expect.stringMatching(ISO) }));

      const deleted = await client.callTool({ name: 'delete_article', arguments: { id: article.id } });
      expect(toolJson(deleted)).toEqual({ deleted: true, id: article.id });
      expect(deleted.structuredContent).toEqual({ deleted: true, id: article.id });

      const gone = await client.callTool({ name: 'get_article', arguments: { id: article.id } });
      expect(gone.isError).toBe(true);
      expect(toolJson(gone).error.code).toBe('not_found');
    });
  });

  describe('create_article', () => {
    it('derives handles from the title and suffixes -2, -3 when taken', async () => {
      const handles: string[] = [];
      for (let i = 0; i < 3; i++) handles.push((await callOk(t, key, 'create_article', { title: 'Über Ärger!' })).handle);
      expect(handles).toEqual(['uber-arger', 'uber-arger-2', 'uber-arger-3']);
    });

    it('refuses a taken explicit handle with handle_taken naming a free one, which then works', async () => {
      await callOk(t, key, 'create_article', { title: 'First', handle: 'launch-notes' });
      await callOk(t, key, 'create_article', { title: 'Second', handle: 'launch-notes-2' });
      const err = await callError(t, key, 'create_article', { title: 'Third', handle: 'launch-notes' });
      expect(err.code).toBe('handle_taken');
      expect(err.message).toBe(
        'The handle "launch-notes" is already used by another article in this project; "launch-notes-3" is free. Retry with handle "launch-notes-3", or leave handle out to derive one from the title.',
      );
      expect((await callOk(t, key, 'create_article', { title: 'Third', handle: 'launch-notes-3' })).handle).toBe('launch-notes-3');
    });

    it('gives up its handle when deleted, so a new article can take it', async () => {
      const a = await callOk(t, key, 'create_article', { title: 'Reused', handle: 'reused-handle' });
      await callOk(t, key, 'delete_article', { id: a.id });
      const b = await callOk(t, key, 'create_article', { title: 'Reused again', handle: 'reused-handle' });
      expect(b.handle).toBe('reused-handle');
      expect(b.id).not.toBe(a.id);
    });

    it('publishes at once with status "published", and schedules with a future published_at', async () => {
      const now = await callOk(t, key, 'create_article', { title: 'Out now', status: 'published' });
      expect(now.status).toBe('published');
      expect(Math.abs(Date.parse(now.published_at) - Date.now())).toBeLessThan(60_000);

      const past = await callOk(t, key, 'create_article', { title: 'Imported', status: 'published', published_at: '2020-05-01T10:00:00Z' });
      expect(past).toEqual(expect.objectContaining({ status: 'published', published_at: '2020-05-01T10:00:00.000Z' }));

      const later = await callOk(t, key, 'create_article', { title: 'Later', status: 'published', published_at: '2099-01-01T09:00:00+02:00' });
      expect(later).toEqual(expect.objectContaining({ status: 'scheduled', published_at: '2099-01-01T07:00:00.000Z' }));
    });

    it('refuses published_at on a draft, saying how to schedule', async () => {
      const err = await callError(t, key, 'create_article', { title: 'Draft with a date', published_at: '2099-01-01T00:00:00Z' });
      expect(err).toEqual({ code: 'invalid_arguments', message: expect.stringContaining('"published_at": it applies only with status "published"') });
    });
  });

  describe('bad arguments are tool errors naming the argument and the rule', () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['a title over 300 characters', 'create_article', { title: 'x'.repeat(301) }, 'Invalid value for "title": must be at most 300 characters long.'],
      ['an empty title', 'create_article', { title: '' }, 'Invalid value for "title": must not be empty.'],
      ['a blank title', 'create_article', { title: '   ' }, 'Invalid value for "title": must be a non-empty string.'],
      ['no title', 'create_article', { body: 'text' }, 'Missing required argument "title".'],
      [
        'more than 20 tags',
        'create_article',
        { title: 'T', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
        'Invalid value for "tags": at most 20 items.',
      ],
      [
        'a tag over 50 characters',
        'create_article',
        { title: 'T', tags: ['ok', 'x'.repeat(51)] },
        'Invalid value for "tags.1": must be at most 50 characters long.',
      ],
      ['an empty tag', 'create_article', { title: 'T', tags: [''] }, 'Invalid value for "tags.0": must not be empty.'],
      ['a tag that is not a string', 'create_article', { title: 'T', tags: [5] }, 'Invalid value for "tags.0": expected a string.'],
      ['tags as a string', 'create_article', { title: 'T', tags: 'a,b' }, 'Invalid value for "tags": expected a array.'],
      ['an unknown status', 'create_article', { title: 'T', status: 'scheduled' }, 'Invalid value for "status": must be one of draft, published.'],
      ['a date that is not a date', 'create_article', { title: 'T', status: 'published', published_at: 'tomorrow' }, DATE_RULE('published_at')],
      ['a date without a time zone', 'create_article', { title: 'T', status: 'published', published_at: '2026-01-31T09:00:00' }, DATE_RULE('published_at')],
      ['an impossible date', 'create_article', { title: 'T', status: 'published', published_at: '2026-02-30T09:00:00Z' }, DATE_RULE('published_at')],
      ['a handle with capitals and spaces', 'create_article', { title: 'T', handle: 'Hello World' }, HANDLE_RULE],
      ['a handle with an underscore', 'create_article', { title: 'T', handle: 'a_b' }, HANDLE_RULE],
      ['a handle with a double hyphen', 'create_article', { title: 'T', handle: 'a--b' }, HANDLE_RULE],
      ['a handle with a leading hyphen', 'create_article', { title: 'T', handle: '-ab' }, HANDLE_RULE],
      ['a handle with non-ASCII letters', 'create_article', { title: 'T', handle: 'über' }, HANDLE_RULE],
      [
        'a handle over 120 characters',
        'create_article',
        { title: 'T', handle: 'a'.repeat(121) },
        'Invalid value for "handle": must be at most 120 characters long.',
      ],
      ['an undeclared argument', 'create_article', { title: 'T', author: 'me' }, 'Unexpected argument "author": this tool does not take it.'],
      [
        'an excerpt over 2000 characters',
        'create_article',
        { title: 'T', excerpt: 'e'.repeat(2001) },
        'Invalid value for "excerpt": must be at most 2000 characters long.',
      ],
      ['update without a version', 'update_article', { id: MISSING_ID, title: 'T' }, 'Missing required argument "version".'],
      ['update with version 0', 'update_article', { id: MISSING_ID, version: 0, title: 'T' }, 'Invalid value for "version": must be >= 1.'],
      ['update with a fractional version', 'update_article', { id: MISSING_ID, version: 1.5, title: 'T' }, 'Invalid value for "version": expected an integer.'],
      [
        'update with a title over 300',
        'update_article',
        { id: MISSING_ID, version: 1, title: 'x'.repeat(301) },
        'Invalid value for "title": must be at most 300 characters long.',
      ],
      ['update with a bad handle', 'update_article', { id: MISSING_ID, version: 1, handle: 'No Way' }, HANDLE_RULE],
      [
        'update with 21 tags',
        'update_article',
        { id: MISSING_ID, version: 1, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
        'Invalid value for "tags": at most 20 items.',
      ],
      [
        'update with nothing to change',
        'update_article',
        { id: MISSING_ID, version: 1 },
        'Nothing to update: give at least one of title, body, handle, excerpt or tags.',
      ],
      ['publish with an invalid date', 'publish_article', { id: MISSING_ID, published_at: '31/01/2026' }, DATE_RULE('published_at')],
      ['publish without an id', 'publish_article', {}, 'Missing required argument "id".'],
      ['delete without an id', 'delete_article', {}, 'Missing required argument "id".'],
    ];

    it.each(cases)('%s', async (_what, tool, args, message) => {
      const before = await articleRows(t, tenant.projectIds[0]);
      const err = await callError(t, key, tool, args);
      expect(err).toEqual({ code: 'invalid_arguments', message });
      expect(await articleRows(t, tenant.projectIds[0])).toBe(before);
    });

    it('an object or array where a scalar is declared is refused before the handler (-32602)', async () => {
      const out = await callTool(t, key, 'update_article', { id: { $ne: null }, version: 1, title: 'T' });
      expect(out.rpcError).toEqual({ code: -32602, message: 'Invalid value for "id": expected a string.' });
      const out2 = await callTool(t, key, 'create_article', { title: ['a'] });
      expect(out2.rpcError).toEqual({ code: -32602, message: 'Invalid value for "title": expected a string.' });
    });
  });

  describe('the 1 MiB body limit', () => {
    it('a body argument over 1 MiB cannot reach the tool: the transport answers 413 and nothing is written', async () => {
      const before = await articleRows(t, tenant.projectIds[0]);
      const res = await rpc(t, key, {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'create_article', arguments: { title: 'Huge', body: 'x'.repeat(1024 * 1024 + 1) } },
      });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'The request body is larger than 1 MiB.' } });
      expect(await articleRows(t, tenant.projectIds[0])).toBe(before);
    });

    it('a body just under the request limit is stored whole', async () => {
      const body = 'word '.repeat(200_000) + 'é'.repeat(20_000);
      const a = await callOk(t, key, 'create_article', { title: 'Long read', body });
      expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(1_000_000);
      const [row] = await sql(t).query(`SELECT length(body) AS n FROM articles WHERE id = $1`, [a.id]);
      expect(row.n).toBe(body.length);
    });

    it('the domain keeps the 1 MiB rule for writers that are not the transport (jobs, admin)', async () => {
      const service = t.app.get(ArticlesService);
      const scope = { accountId: tenant.accountId, projectId: tenant.projectIds[0] };
      const err = await service.create(scope, { title: 'Too big', body: 'é'.repeat(512 * 1024 + 1) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toEqual(
        expect.objectContaining({ code: 'invalid_arguments', message: 'Invalid value for "body": must be at most 1 MiB (1,048,576 bytes of UTF-8).' }),
      );
    });
  });

  describe('update_article', () => {
    it('changes only the given fields, bumps the version and keeps every previous state as a revision', async () => {
      const a = await callOk(t, key, 'create_article', { title: 'Revisions', body: 'v1', tags: ['x'] });
      const b = await callOk(t, key, 'update_article', { id: a.id, version: 1, body: 'v2' });
      expect(b).toEqual({ ...a, body: 'v2', version: 2, updated_at: expect.any(String) });
      const c = await callOk(t, key, 'update_article', { id: a.id, version: 2, title: 'Revisions!', tags: [], excerpt: '' });
      expect(c).toEqual({ ...b, title: 'Revisions!', tags: [], version: 3, updated_at: expect.any(String) });
      const d = await callOk(t, key, 'update_article', { id: a.id, version: 3, handle: 'revisions-renamed' });
      expect(d.handle).toBe('revisions-renamed');

      const revisions = await sql(t).query(
        `SELECT version, credential_id, snapshot->>'title' AS title, snapshot->>'body' AS body, snapshot->>'handle' AS handle, account_id, created_at FROM article_revisions WHERE article_id = $1 ORDER BY version`,
        [a.id],
      );
      expect(revisions).toEqual([
        expect.objectContaining({ version: 1, credential_id: tenant.keyId, title: 'Revisions', body: 'v1', handle: 'revisions', account_id: tenant.accountId }),
        expect.objectContaining({ version: 2, credential_id: tenant.keyId, title: 'Revisions', body: 'v2', handle: 'revisions' }),
        expect.objectContaining({ version: 3, credential_id: tenant.keyId, title: 'Revisions!', body: 'v2', handle: 'revisions' }),
      ]);
    });

    it('a stale version is a version_conflict carrying the current version, and changes nothing', async () => {
      const a = await callOk(t, key, 'create_article', { title: 'Stale' });
      await callOk(t, key, 'update_article', { id: a.id, version: 1, body: 'first' });
      await callOk(t, key, 'update_article', { id: a.id, version: 2, body: 'second' });
      const err = await callError(t, key, 'update_article', { id: a.id, version: 1, body: 'late' });
      expect(err).toEqual({
        code: 'version_conflict',
        message: `The article "${a.id}" is at version 3, not 1: it changed since you read it. Read it again with get_article and retry with version 3.`,
        details: { current_version: 3 },
      });
      expect((await callOk(t, key, 'get_article', { id: a.id })).body).toBe('second');
    });

    it('a handle used by another article is handle_taken with a free suggestion; its own handle is fine', async () => {
      await callOk(t, key, 'create_article', { title: 'Holder', handle: 'held' });
      const a = await callOk(t, key, 'create_article', { title: 'Mover' });
      const err = await callError(t, key, 'update_article', { id: a.id, version: 1, handle: 'held' });
      expect(err.code).toBe('handle_taken');
      expect(err.message).toContain('"held-2" is free');
      expect((await callOk(t, key, 'update_article', { id: a.id, version: 1, handle: a.handle, title: 'Mover 2' })).version).toBe(2);
    });
  });

  describe('publish_article', () => {
    it('publishes now, schedules a future time, and is a no-op on an article already published', async () => {
      const a = await callOk(t, key, 'create_article', { title: 'To publish' });
      const scheduled = await callOk(t, key, 'publish_article', { id: a.id, published_at: '2098-06-01T12:00:00Z' });
      expect(scheduled).toEqual(expect.objectContaining({ status: 'scheduled', published_at: '2098-06-01T12:00:00.000Z', version: 2 }));
      const now = await callOk(t, key, 'publish_article', { id: a.id });
      expect(now.status).toBe('published');
      expect(Date.parse(now.published_at)).toBeLessThan(Date.parse('2098-01-01'));
      expect(now.version).toBe(3);
      const again = await callOk(t, key, 'publish_article', { id: a.id });
      expect(again).toEqual(now);
      const backdated = await callOk(t, key, 'publish_article', { id: a.id, published_at: '2019-01-01T00:00:00Z' });
      expect(backdated).toEqual(expect.objectContaining({ status: 'published', published_at: '2019-01-01T00:00:00.000Z', version: 4 }));
      const [{ n }] = await sql(t).query(`SELECT count(*)::int AS n FROM article_revisions WHERE article_id = $1`, [a.id]);
      expect(n).toBe(3);
    });
  });

  describe('delete_article', () => {
    it('moves the article to the trash with who and when, keeping its last state as a revision', async () => {
      const a = await callOk(t, key, 'create_article', { title: 'Doomed' });
      await callOk(t, key, 'delete_article', { id: a.id });
      const [row] = await sql(t).query(`SELECT deleted_at, deleted_by, version FROM articles WHERE id = $1`, [a.id]);
      expect(row).toEqual({ deleted_at: expect.any(Date), deleted_by: tenant.keyId, version: 2 });
      const revisions = await sql(t).query(
        `SELECT version, credential_id, snapshot->>'deleted_at' AS deleted_at FROM article_revisions WHERE article_id = $1`,
        [a.id],
      );
      expect(revisions).toEqual([{ version: 1, credential_id: tenant.keyId, deleted_at: null }]);
      // Deleting it again, updating or publishing it: it no longer exists for the tools.
      for (const [tool, args] of [
        ['delete_article', { id: a.id }],
        ['update_article', { id: a.id, version: 2, title: 'x' }],
        ['publish_article', { id: a.id }],
      ] as const) {
        expect(await callError(t, key, tool, args)).toEqual({ code: 'not_found', message: `No article with id "${a.id}" in this project.` });
      }
      const listed = await callOk(t, key, 'list_articles', { search: 'doomed' });
      expect(listed.items).toEqual([]);
    });
  });

  describe('scopes and roles (docs/protocol.md#who-calls-and-what-they-reach)', () => {
    it('a viewer sees none of the write tools, and calling one is "Unknown tool"', async () => {
      const viewer = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'viewer'));
      const listed = await rpc(t, viewer.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const names = (listed.body.result.tools as { name: string }[]).map((x) => x.name);
      for (const name of ['create_article', 'update_article', 'publish_article', 'delete_article']) expect(names).not.toContain(name);
      expect((await callTool(t, viewer.key, 'create_article', { title: 'No' })).rpcError).toEqual({ code: -32602, message: 'Unknown tool: create_article' });
    });

    it('an editor writes but cannot delete; an owner without the delete scope cannot either', async () => {
      const editor = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'editor'));
      const a = await callOk(t, editor.key, 'create_article', { title: 'By an editor' });
      await callOk(t, editor.key, 'publish_article', { id: a.id });
      expect((await callTool(t, editor.key, 'delete_article', { id: a.id })).rpcError).toEqual({ code: -32602, message: 'Unknown tool: delete_article' });
      const noDelete = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'owner'), ['read', 'write']);
      expect((await callTool(t, noDelete.key, 'delete_article', { id: a.id })).rpcError).toEqual({ code: -32602, message: 'Unknown tool: delete_article' });
      const readOnly = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'owner'), ['read']);
      expect((await callTool(t, readOnly.key, 'update_article', { id: a.id, version: 2, title: 'x' })).rpcError).toEqual({
        code: -32602,
        message: 'Unknown tool: update_article',
      });
      expect((await callOk(t, key, 'get_article', { id: a.id })).version).toBe(2);
    });
  });
});

async function articleRows(t: TestApp, projectId: string): Promise<number> {
  const [{ n }] = await sql(t).query(`SELECT count(*)::int AS n FROM articles WHERE project_id = $1`, [projectId]);
  return n;
}
