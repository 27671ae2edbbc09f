import { DataSource } from 'typeorm';
import { ArticlesService } from '../../src/articles/articles.service.js';
import { declaredHotStatements } from '../../src/database/sql.js';
import { ARTICLE_BY_HANDLE_TEMPLATE, ARTICLE_BY_ID_TEMPLATE, MEDIA_TEMPLATE } from '../../src/resources/resource-uris.js';
import { createTenant, MISSING_ID, newAccountWithProjects, newKey, withRole } from '../support/fixtures.js';
import { callOk, connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { seedArticle } from '../mcp/mcp-e2e-helpers.js';

// Completions (docs/protocol.md#resources-prompts-completions-and-logging): prompt arguments and resource-template variables, from the caller's own
// readable data only (where it could run get_article), by indexed prefix search, at most 100 values.
describe('completion/complete', () => {
  let t: TestApp;
  let db: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  let nextId = 1;
  async function completeRaw(key: string, params: unknown): Promise<any> {
    const res = await rpc(t, key, { jsonrpc: '2.0', id: nextId++, method: 'completion/complete', params });
    expect(res.status).toBe(200);
    return res.body;
  }
  /** The completion answered for `params` (must succeed). */
  async function complete(key: string, params: unknown): Promise<{ values: string[]; total?: number; hasMore: boolean }> {
    const body = await completeRaw(key, params);
    if (!body.result) throw new Error(`completion/complete failed: ${JSON.stringify(body)}`);
    expect(Object.keys(body.result)).toEqual(['completion']);
    return body.result.completion;
  }
  async function invalid(key: string, params: unknown): Promise<string> {
    const body = await completeRaw(key, params);
    expect(body.result).toBeUndefined();
    expect(body.error.code).toBe(-32602);
    return body.error.message;
  }
  const prompt = (name: string, argument: string, value: string, context?: Record<string, string>) => ({
    ref: { type: 'ref/prompt', name },
    argument: { name: argument, value },
    ...(context ? { context: { arguments: context } } : {}),
  });
  const template = (uri: string, argument: string, value: string, context?: Record<string, string>) => ({
    ref: { type: 'ref/resource', uri },
    argument: { name: argument, value },
    ...(context ? { context: { arguments: context } } : {}),
  });

  /**
   * An account with a readable project (Bakery), a second readable one (Travel), one the key does not
   * reach, one where get_article is disabled; another account; articles with the same prefixes everywhere.
   */
  async function world() {
    const { accountId, projectIds } = await newAccountWithProjects(t, [
      { name: 'Bakery' },
      { name: 'Travel' },
      { name: 'Hidden' },
      { name: 'Sealed', disabled_tools: ['get_article'] },
    ]);
    const [bakery, travel, hidden, sealed] = projectIds;
    const { key } = await newKey(t, accountId, withRole([bakery, travel, sealed], 'owner'));
    const foreign = await createTenant(t);
    const seed = (projectId: string, handle: string, tags: string[] = [], account = accountId) =>
      seedArticle(t, account, projectId, { title: handle, handle, tags });
    const a = {
      breadBasics: await seed(bakery, 'bread-basics', ['Baking', 'bread']),
      breadAdvanced: await seed(bakery, 'bread-advanced', ['baking-tips']),
      cake: await seed(bakery, 'cake', ['cake']),
      bretagne: await seed(travel, 'bretagne', ['brittany']),
      hidden: await seed(hidden, 'bread-hidden', ['bakery-secret']),
      sealed: await seed(sealed, 'bread-sealed', ['bake-sealed']),
      foreign: await seed(foreign.projectIds[0], 'bread-foreign', ['bake-foreign'], foreign.accountId),
      trashed: await seed(bakery, 'bread-trashed', ['bake-trashed']),
    };
    await t.app.get(ArticlesService).delete({ accountId, projectId: bakery }, a.trashed.id, { credentialId: null });
    return { accountId, key, bakery, travel, hidden, sealed, foreign, a };
  }
  let w: Awaited<ReturnType<typeof world>>;
  beforeAll(async () => {
    w = await world();
  });

  describe('article ids (edit_for_tone, publish_checklist, the by-id template)', () => {
    it('proposes ids of readable live articles whose handle starts with the value, case-insensitive, by handle', async () => {
      const expected = { values: [w.a.breadAdvanced.id, w.a.breadBasics.id, w.a.bretagne.id], total: 3, hasMore: false };
      expect(await complete(w.key, prompt('edit_for_tone', 'article_id', 'bre'))).toEqual(expected);
      expect(await complete(w.key, prompt('publish_checklist', 'article_id', 'BRE'))).toEqual(expected);
      expect(await complete(w.key, template(ARTICLE_BY_ID_TEMPLATE, 'article_id', 'bre'))).toEqual(expected);
      // Not one of: unreachable, get_article disabled, another account's, trashed.
      expect(await complete(w.key, prompt('edit_for_tone', 'article_id', 'bread-'))).toEqual({
        values: [w.a.breadAdvanced.id, w.a.breadBasics.id],
        total: 2,
        hasMore: false,
      });
    });

    it('or whose id starts with the value', async () => {
      const prefix = w.a.cake.id.slice(0, 13);
      const { values } = await complete(w.key, prompt('edit_for_tone', 'article_id', prefix.toUpperCase()));
      expect(values).toContain(w.a.cake.id);
      for (const id of values) expect(id.startsWith(prefix)).toBe(true);
      expect(await complete(w.key, prompt('edit_for_tone', 'article_id', w.a.foreign.id))).toEqual({ values: [], total: 0, hasMore: false });
      expect(await complete(w.key, prompt('edit_for_tone', 'article_id', w.a.hidden.id))).toEqual({ values: [], total: 0, hasMore: false });
      expect(await complete(w.key, prompt('edit_for_tone', 'article_id', w.a.sealed.id))).toEqual({ values: [], total: 0, hasMore: false });
      expect(await complete(w.key, prompt('edit_for_tone', 'article_id', w.a.trashed.id))).toEqual({ values: [], total: 0, hasMore: false });
    });

    it('narrowed by context.arguments.project_id; a project the caller cannot read narrows to nothing', async () => {
      expect((await complete(w.key, template(ARTICLE_BY_ID_TEMPLATE, 'article_id', 'b', { project_id: w.travel }))).values).toEqual([w.a.bretagne.id]);
      for (const other of [w.hidden, w.sealed, w.foreign.projectIds[0], MISSING_ID, 'nope']) {
        expect(await complete(w.key, template(ARTICLE_BY_ID_TEMPLATE, 'article_id', 'b', { project_id: other }))).toEqual({
          values: [],
          total: 0,
          hasMore: false,
        });
      }
    });

    it("LIKE's own characters are taken literally; a NUL matches nothing (and is no internal error)", async () => {
      for (const value of ['%', '_', 'b%', 'br_ad', '\\', '\u0000', 'br\u0000']) {
        expect((await complete(w.key, prompt('edit_for_tone', 'article_id', value))).values).toEqual([]);
        expect((await complete(w.key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', value))).values).toEqual([]);
        expect((await complete(w.key, prompt('draft_article', 'topic', value))).values).toEqual([]);
      }
    });
  });

  describe('handles, tags, projects, tones, media', () => {
    it('handles (the by-handle template) by prefix, readable live articles only, narrowed by project', async () => {
      expect(await complete(w.key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', 'br'))).toEqual({
        values: ['bread-advanced', 'bread-basics', 'bretagne'],
        total: 3,
        hasMore: false,
      });
      expect((await complete(w.key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', '', { project_id: w.bakery }))).values).toEqual([
        'bread-advanced',
        'bread-basics',
        'cake',
      ]);
      expect((await complete(w.key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', '', { project_id: w.hidden }))).values).toEqual([]);
    });

    it("tags (draft_article's topic) by prefix, case-insensitive, of readable live articles, as they are spelt", async () => {
      expect(await complete(w.key, prompt('draft_article', 'topic', 'ba'))).toEqual({ values: ['Baking', 'baking-tips'], total: 2, hasMore: false });
      expect((await complete(w.key, prompt('draft_article', 'topic', 'B'))).values).toEqual(['Baking', 'baking-tips', 'bread', 'brittany']);
      // A tag no live article carries any more is not proposed.
      await t.app.get(ArticlesService).update({ accountId: w.accountId, projectId: w.bakery }, w.a.cake.id, 1, { tags: ['gateau'] }, { credentialId: null });
      expect((await complete(w.key, prompt('draft_article', 'topic', 'ca'))).values).toEqual([]);
      expect((await complete(w.key, prompt('draft_article', 'topic', 'gat'))).values).toEqual(['gateau']);
    });

    it('tags written by concurrent writers (the same new tags, in different orders) are all proposed, none twice', async () => {
      const { key, projectIds } = await createTenant(t);
      const orders = [
        ['zeta', 'Yak', 'xylo'],
        ['xylo', 'zeta', 'Yak'],
        ['Yak', 'xylo', 'zeta'],
      ];
      const created = await Promise.all(
        Array.from({ length: 12 }, (_, i) => callOk(t, key, 'create_article', { title: `Concurrent ${i}`, tags: orders[i % 3] })),
      );
      expect(created).toHaveLength(12);
      expect(await complete(key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', 'concurrent-', { project_id: projectIds[0] }))).toMatchObject({ total: 12 });
      expect((await complete(key, prompt('draft_article', 'topic', ''))).values.sort()).toEqual(['Yak', 'xylo', 'zeta'].sort());
    });

    it('project ids whose id or name starts with the value, readable projects where the prompt leads somewhere', async () => {
      expect(await complete(w.key, prompt('draft_article', 'project_id', 'ba'))).toEqual({ values: [w.bakery], total: 1, hasMore: false });
      expect((await complete(w.key, prompt('draft_article', 'project_id', w.travel.slice(0, 20)))).values).toEqual([w.travel]);
      expect((await complete(w.key, prompt('draft_article', 'project_id', ''))).values).toEqual([w.bakery, w.travel]);
      expect((await complete(w.key, template(MEDIA_TEMPLATE, 'project_id', 'h'))).values).toEqual([]);
      expect((await complete(w.key, template(MEDIA_TEMPLATE, 'project_id', 's'))).values).toEqual([]);
      // A project where drafting is disabled is not proposed for draft_article.
      const { accountId, projectIds } = await newAccountWithProjects(t, [
        { name: 'Alpha' },
        { name: 'Also', disabled_tools: ['write_article', 'create_article'] },
      ]);
      const { key } = await newKey(t, accountId, withRole(projectIds, 'owner'));
      expect((await complete(key, prompt('draft_article', 'project_id', 'al'))).values).toEqual([projectIds[0]]);
      expect((await complete(key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'project_id', 'AL'))).values).toEqual(projectIds);
    });

    it('tones from a fixed list; media ids by prefix among readable projects', async () => {
      expect(await complete(w.key, prompt('edit_for_tone', 'tone', 'f'))).toEqual({ values: ['formal', 'friendly'], total: 2, hasMore: false });
      const media = await db.query(
        `INSERT INTO media (id, account_id, project_id, mime_type, width, height, size, data) VALUES ($1, $2, $3, 'image/png', 1, 1, 1, '\\x00'), ($4, $2, $5, 'image/png', 1, 1, 1, '\\x00') RETURNING id`,
        ['0badcafe-0000-4000-8000-000000000001', w.accountId, w.bakery, '0badcafe-0000-4000-8000-000000000002', w.hidden],
      );
      expect(media).toHaveLength(2);
      expect((await complete(w.key, template(MEDIA_TEMPLATE, 'media_id', '0BADCAFE'))).values).toEqual(['0badcafe-0000-4000-8000-000000000001']);
      expect((await complete(w.key, template(MEDIA_TEMPLATE, 'media_id', '0badcafe-0000-4000-8000-000000000002'))).values).toEqual([]);
      expect((await complete(w.key, template(MEDIA_TEMPLATE, 'media_id', 'zz'))).values).toEqual([]);
    });

    it('a read-only key completes resource templates from what it reads; an argument without a completer completes to nothing', async () => {
      const reader = await newKey(t, w.accountId, withRole([w.bakery], 'viewer'), ['read']);
      expect((await complete(reader.key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', 'c'))).values).toEqual(['cake']);
      expect(await complete(w.key, prompt('draft_article', 'audience', 'a'))).toEqual({ values: [], total: 0, hasMore: false });
    });
  });

  describe('at most 100 values', () => {
    it('with more matches: 100 values, hasMore, and the total', async () => {
      const { accountId, projectIds, key } = await createTenant(t);
      const handles = Array.from({ length: 150 }, (_, i) => `post-${String(i).padStart(3, '0')}`);
      await db.query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, status, tags) SELECT gen_random_uuid(), $1, $2, h, h, 'draft', ARRAY['tag-' || h] FROM unnest($3::text[]) h`,
        [accountId, projectIds[0], handles],
      );
      expect(await complete(key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', 'post'))).toEqual({ values: handles.slice(0, 100), total: 150, hasMore: true });
      const ids = await complete(key, prompt('edit_for_tone', 'article_id', 'POST-'));
      expect(ids.values).toHaveLength(100);
      expect(ids).toMatchObject({ total: 150, hasMore: true });
      expect(await complete(key, prompt('draft_article', 'topic', 'tag-post-'))).toEqual({
        values: handles.slice(0, 100).map((h) => `tag-${h}`),
        total: 150,
        hasMore: true,
      });
      expect(await complete(key, template(ARTICLE_BY_HANDLE_TEMPLATE, 'handle', 'post-1'))).toEqual({ values: handles.slice(100), total: 50, hasMore: false });
      // The SDK client reads the same answer.
      const client = await connectClient(t, key);
      const sdk = await client.complete({
        ref: { type: 'ref/resource', uri: ARTICLE_BY_HANDLE_TEMPLATE },
        argument: { name: 'handle', value: 'post-14' },
        context: { arguments: { project_id: projectIds[0] } },
      });
      expect(sdk.completion).toEqual({ values: handles.slice(140), total: 10, hasMore: false });
      await client.close();
    });
  });

  describe('indexed prefix search', () => {
    let big: { accountId: string; projectIds: string[] };
    beforeAll(async () => {
      big = await createTenant(t);
      await db.query(
        `INSERT INTO articles (id, account_id, project_id, handle, title, status, tags)
         SELECT gen_random_uuid(), $1, $2, 'a-' || md5(i::text), 'A', 'draft', ARRAY['t-' || md5(i::text)] FROM generate_series(1, 3000) i`,
        [big.accountId, big.projectIds[0]],
      );
      await db.query('ANALYZE articles');
      await db.query('ANALYZE project_tags');
    });

    it.each([
      [
        'completions.article_ids',
        /(?:Index Scan using|Bitmap Index Scan on) articles_handle_prefix_idx[^\n]*\n\s*Index Cond: [^\n]*handle ~>=~[\s\S]*(?:Index Scan using|Bitmap Index Scan on) articles_id_prefix_idx[^\n]*\n\s*Index Cond: [^\n]*\(id\)::text ~>=~/,
      ],
      ['completions.handles', /(?:Index (?:Only )?Scan using|Bitmap Index Scan on) articles_handle_prefix_idx[^\n]*\n\s*Index Cond: [^\n]*handle ~>=~/],
      ['completions.tags', /(?:Index Scan using|Bitmap Index Scan on) project_tags_prefix_idx[^\n]*\n\s*Index Cond: [^\n]*lower\(tag\) ~>=~/],
    ])('%s is an index range scan on the prefix (EXPLAIN of 3,000 articles)', async (name, pattern) => {
      const text = declaredHotStatements().get(name)!;
      const plan = ((await db.query(`EXPLAIN ${text}`, [big.accountId, big.projectIds, 'a-1%', 101])) as { 'QUERY PLAN': string }[])
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      expect(plan).toMatch(pattern);
      expect(plan).not.toMatch(/Seq Scan/);
    });
  });

  describe('bad input', () => {
    it.each([
      ['params not an object', 'x', 'Invalid params: expected an object with "ref" and "argument".'],
      ['no ref', { argument: { name: 'tone', value: '' } }, 'Invalid params: "ref" must be an object.'],
      [
        'a ref of another type',
        { ref: { type: 'ref/tool', name: 'x' }, argument: { name: 'tone', value: '' } },
        'Invalid params: "ref.type" must be "ref/prompt" or "ref/resource".',
      ],
      [
        'a prompt ref without a name',
        { ref: { type: 'ref/prompt' }, argument: { name: 'tone', value: '' } },
        'Invalid params: "ref.name" must be the name of a prompt (a string).',
      ],
      [
        'a resource ref without a uri',
        { ref: { type: 'ref/resource', uri: 5 }, argument: { name: 'handle', value: '' } },
        'Invalid params: "ref.uri" must be a resource template URI (a string).',
      ],
      [
        'no argument',
        { ref: { type: 'ref/prompt', name: 'edit_for_tone' } },
        'Invalid params: "argument" must be an object with a string "name" and a string "value".',
      ],
      [
        'a value not a string',
        prompt('edit_for_tone', 'tone', 5 as never),
        'Invalid params: "argument" must be an object with a string "name" and a string "value".',
      ],
      ['a value too long', prompt('edit_for_tone', 'tone', 'x'.repeat(501)), 'Invalid params: "argument.value" must be at most 500 characters.'],
      ['an unknown prompt', prompt('no_such_prompt', 'x', ''), 'Unknown prompt: no_such_prompt'],
      ['a conformance fixture in the product', prompt('test_prompt_with_arguments', 'arg1', ''), 'Unknown prompt: test_prompt_with_arguments'],
      ['an argument the prompt does not have', prompt('edit_for_tone', 'handle', ''), 'Prompt edit_for_tone has no argument "handle".'],
      [
        'an unknown template',
        template('reblog://projects/{project_id}/drafts/{x}', 'x', ''),
        'Unknown resource template: reblog://projects/{project_id}/drafts/{x}',
      ],
      ['a variable the template does not have', template(MEDIA_TEMPLATE, 'handle', ''), `Resource template ${MEDIA_TEMPLATE} has no variable "handle".`],
      ['context not an object', { ...prompt('edit_for_tone', 'tone', ''), context: [] }, 'Invalid params: "context" must be an object.'],
      [
        'context.arguments not an object',
        { ...prompt('edit_for_tone', 'tone', ''), context: { arguments: 'x' } },
        'Invalid params: "context.arguments" must be an object.',
      ],
      [
        'a context argument not a string',
        { ...prompt('edit_for_tone', 'tone', ''), context: { arguments: { project_id: 1 } } },
        'Invalid params: "context.arguments.project_id" must be a string.',
      ],
    ])('%s → -32602 with a sentence', async (_case, params, message) => {
      expect(await invalid(w.key, params)).toBe(message);
    });

    it('a prompt the caller does not see is unknown to it, like in prompts/get', async () => {
      const reader = await newKey(t, w.accountId, withRole([w.bakery], 'owner'), ['read']);
      expect(await invalid(reader.key, prompt('edit_for_tone', 'article_id', 'b'))).toBe('Unknown prompt: edit_for_tone');
    });
  });
});
