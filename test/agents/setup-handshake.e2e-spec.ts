import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ArticlesService } from '../../src/articles/articles.service.js';
import { createDatabase, withClient, type TestDatabase } from '../support/database.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { connectClient, rpc, toolJson } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

const FRENCH =
  'Le jardin est une source de joie pour les enfants et les parents. Nous avons planté des tomates dans le potager, et les fleurs sont belles avec le soleil qui est là pour nous.';
const ENGLISH =
  'The garden is a source of joy for the children and the parents. We planted tomatoes in the bed, and this is what they need from you to grow with the sun.';

describe('the setup handshake (write_article, generate_image, configure_agent, get_agent_config)', () => {
  let t: TestApp;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({ SYNC_BUDGET_MS: '60000' });
  });
  afterAll(() => db?.drop());

  async function call(client: Client, name: string, args: Record<string, unknown>) {
    return client.callTool({ name, arguments: args });
  }

  it('setup_required → configure_agent → the same call runs, with the SDK client', async () => {
    const tenant = await createTenant(t);
    const client = await connectClient(t, tenant.key);
    try {
      const first = await call(client, 'write_article', { brief: 'How to start a vegetable garden' });
      expect(first.isError).toBeFalsy();
      const setup = toolJson(first);
      expect(setup).toEqual({
        status: 'setup_required',
        agent: 'writer',
        message: 'This project has no writer configured. Ask the user these questions, proposing the answers below, then call configure_agent and retry.',
        questions: expect.any(Array),
        project_context: {
          project: { id: tenant.projectIds[0], name: 'Project 1' },
          article_count: 0,
          top_tags: [],
          languages: [],
          recent_titles: [],
          median_word_count: null,
        },
      });
      expect(first.structuredContent).toEqual(setup);
      expect(setup.questions.map((q: { id: string }) => q.id)).toEqual(['audience', 'tone', 'language', 'topics', 'length', 'banned_words', 'image_style']);
      for (const q of setup.questions) {
        expect(Object.keys(q).sort()).toEqual(
          q.id === 'length' ? ['id', 'options', 'proposed_answer', 'question', 'type'] : ['id', 'proposed_answer', 'question', 'type'],
        );
        expect(typeof q.question).toBe('string');
      }
      expect(setup.questions.find((q: { id: string }) => q.id === 'length')).toMatchObject({
        type: 'choice',
        options: ['short', 'medium', 'long'],
        proposed_answer: 'medium',
      });
      // Nothing was queued: the handshake does no work.
      const jobs = await withClient(db.url, (c) => c.query('SELECT count(*)::int AS n FROM jobs WHERE project_id = $1', [tenant.projectIds[0]]));
      expect(jobs.rows[0].n).toBe(0);

      // generate_image asks the same.
      const image = toolJson(await call(client, 'generate_image', { prompt: 'tomatoes' }));
      expect(image.status).toBe('setup_required');
      // The activity log records both as the handshake, not as work done.
      const logged = await withClient(db.url, (c) =>
        c.query(`SELECT tool, outcome FROM activity_log WHERE account_id = $1 AND method = 'tools/call' ORDER BY tool`, [tenant.accountId]),
      );
      expect(logged.rows).toEqual([
        { tool: 'generate_image', outcome: 'setup_required' },
        { tool: 'write_article', outcome: 'setup_required' },
      ]);

      const none = await call(client, 'get_agent_config', {});
      expect(toolJson(none)).toEqual({ agent: 'writer', config: null });

      const answers = {
        audience: 'Home gardeners',
        tone: 'Warm',
        language: 'en',
        topics: 'vegetables, soil',
        length: 'short',
        banned_words: 'synergy',
        image_style: 'watercolour',
      };
      const configured = await call(client, 'configure_agent', { agent: 'writer', answers });
      expect(configured.isError).toBeFalsy();
      const saved = toolJson(configured);
      expect(saved).toEqual({ agent: 'writer', config: { version: 1, answers, created_at: expect.any(String) } });
      expect(toolJson(await call(client, 'get_agent_config', { agent: 'writer' }))).toEqual(saved);

      const again = await call(client, 'write_article', { brief: 'How to start a vegetable garden' });
      expect(again.isError).toBeFalsy();
      const done = toolJson(again);
      expect(done).toEqual({
        status: 'succeeded',
        job_id: expect.any(String),
        article: expect.objectContaining({ status: 'draft', source: 'ai', project_id: tenant.projectIds[0] }),
      });
      expect(done.article.job_id).toBe(done.job_id);
      expect(done.article.body.length).toBeGreaterThan(100);
      expect(done.article.body.toLowerCase()).not.toContain('synergy');
      const stored = await withClient(db.url, (c) => c.query('SELECT source, job_id, agent_config_version FROM articles WHERE id = $1', [done.article.id]));
      expect(stored.rows[0]).toEqual({ source: 'ai', job_id: done.job_id, agent_config_version: 1 });
    } finally {
      await client.close();
    }
  });

  it('project_context and the proposed answers come from the project’s own articles', async () => {
    const tenant = await createTenant(t);
    const articles = t.app.get(ArticlesService);
    const scope = { accountId: tenant.accountId, projectId: tenant.projectIds[0] };
    // Word counts 30, 60, 90 (the median is 60); tags: jardin ×3, potager ×2, fleurs ×1.
    await articles.create(scope, { title: 'Premier', body: FRENCH, tags: ['jardin', 'potager'] });
    await articles.create(scope, { title: 'Deuxième', body: `${FRENCH} ${FRENCH}`, tags: ['jardin', 'potager', 'fleurs'] });
    await articles.create(scope, { title: 'Third', body: `${ENGLISH} ${ENGLISH} ${ENGLISH}`, tags: ['jardin'] });
    const other = await createTenant(t);
    await articles.create({ accountId: other.accountId, projectId: other.projectIds[0] }, { title: 'Not mine', body: ENGLISH, tags: ['secret'] });

    const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_article', arguments: { brief: 'x' } } });
    const setup = toolJson(res.body.result);
    const words = (s: string) => s.split(/[\s!-/:-@[-`{-~]+/).filter(Boolean).length;
    expect(setup.project_context).toEqual({
      project: { id: tenant.projectIds[0], name: 'Project 1' },
      article_count: 3,
      top_tags: ['jardin', 'potager', 'fleurs'],
      languages: ['fr', 'en'],
      recent_titles: ['Third', 'Deuxième', 'Premier'],
      median_word_count: words(`${FRENCH} ${FRENCH}`),
    });
    const proposed = Object.fromEntries(setup.questions.map((q: { id: string; proposed_answer: string | null }) => [q.id, q.proposed_answer]));
    expect(proposed).toMatchObject({
      language: 'fr',
      topics: 'jardin, potager, fleurs',
      length: 'short',
      audience: 'Readers interested in jardin, potager and fleurs',
    });
  });

  it('project_context reads each article’s stored word count: a 1 MiB body of one-letter words answers, counted right', async () => {
    const tenant = await createTenant(t);
    const articles = t.app.get(ArticlesService);
    const scope = { accountId: tenant.accountId, projectId: tenant.projectIds[0] };
    // 524,288 words: what made counting the bodies on each call cost a statement timeout per few hundred articles.
    const { id } = await articles.create(scope, { title: 'Huge', body: 'a '.repeat(512 * 1024) });
    const stored = await withClient(db.url, (c) => c.query('SELECT word_count FROM articles WHERE id = $1', [id]));
    expect(stored.rows[0].word_count).toBe(524_288);
    const setup = toolJson(
      (await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_article', arguments: { brief: 'x' } } })).body.result,
    );
    expect(setup.project_context).toMatchObject({ article_count: 1, recent_titles: ['Huge'], median_word_count: 524_288 });
    expect(setup.questions.find((q: { id: string }) => q.id === 'length').proposed_answer).toBe('long');
  });

  it('project_context is cached per project until one of its articles changes, on any instance', async () => {
    const tenant = await createTenant(t);
    const articles = t.app.get(ArticlesService);
    const scope = { accountId: tenant.accountId, projectId: tenant.projectIds[0] };
    const first = await articles.create(scope, { title: 'One', body: FRENCH, tags: ['jardin'] });
    await articles.create(scope, { title: 'Two', body: FRENCH, tags: ['jardin'] });
    const context = async () =>
      toolJson(
        (await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_article', arguments: { brief: 'x' } } })).body.result,
      ).project_context;
    const words = (await context()).median_word_count;

    // A stored count changed behind the triggers' back (no generation bump): the cached context still answers.
    // That both shows the answer comes from the stored count, not the bodies, and that it is cached.
    const behindTheBack = (n: number) =>
      withClient(db.url, async (c) => {
        await c.query(`SET session_replication_role = replica`);
        await c.query('UPDATE articles SET word_count = $2 WHERE project_id = $1', [scope.projectId, n]);
      });
    await behindTheBack(777);
    expect((await context()).median_word_count).toBe(words);

    // Any write to one of its articles, here by "another instance" (plain SQL), bumps the project's
    // generation: the next call computes again, and reads the stored counts.
    await withClient(db.url, (c) => c.query(`UPDATE articles SET tags = '{potager}', updated_at = now() WHERE id = $1`, [first.id]));
    expect(await context()).toMatchObject({ top_tags: ['jardin', 'potager'], recent_titles: ['One', 'Two'], median_word_count: 777 });

    // Through the service too; and moving an article to the trash takes it out of the context.
    await behindTheBack(words);
    await articles.update(scope, first.id, first.version, { title: 'One, again' }, { credentialId: null });
    expect(await context()).toMatchObject({ recent_titles: ['One, again', 'Two'], median_word_count: words });
    await articles.delete(scope, first.id, { credentialId: null });
    expect(await context()).toMatchObject({ article_count: 1, recent_titles: ['Two'], top_tags: ['jardin'] });
  });

  it('configure_agent refuses unknown question ids, wrong length values and non-strings, as tool errors, storing nothing', async () => {
    const tenant = await createTenant(t);
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { agent: 'writer', answers: { audience: 'x', mood: 'happy' } },
        /Unknown key "mood" in "answers": allowed keys are audience, tone, language, topics, length, banned_words, image_style\./,
      ],
      [{ agent: 'writer', answers: { length: 'huge' } }, /Invalid value for "answers\.length": must be one of short, medium, long\./],
      [{ agent: 'writer', answers: { tone: 5 } }, /Invalid value for "answers\.tone": expected a string\./],
      [{ agent: 'writer', answers: { tone: ['a'] } }, /Invalid value for "answers\.tone": expected a string\./],
      [{ agent: 'writer', answers: { audience: 'x'.repeat(501) } }, /"answers\.audience": must be at most 500 characters long/],
      [{ agent: 'writer', answers: {} }, /"answers": give at least 1 key/],
      [{ agent: 'reader', answers: { tone: 'x' } }, /Invalid value for "agent": must be one of writer\./],
      [{ answers: { tone: 'x' } }, /Missing required argument "agent"\./],
    ];
    for (const [args, message] of cases) {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'configure_agent', arguments: args } });
      expect(res.status).toBe(200);
      expect(res.body.result.isError).toBe(true);
      expect(res.body.result.structuredContent).toBeUndefined();
      expect(toolJson(res.body.result).error).toEqual({ code: 'invalid_arguments', message: expect.stringMatching(message) });
    }
    // answers given as a string is the argument guard's business only when declared scalar; here it is a schema error.
    const res = await rpc(t, tenant.key, {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'configure_agent', arguments: { agent: 'writer', answers: 'tone=warm' } },
    });
    expect(toolJson(res.body.result).error.message).toBe('Invalid value for "answers": expected a object.');
    const rows = await withClient(db.url, (c) => c.query('SELECT count(*)::int AS n FROM agent_configs WHERE project_id = $1', [tenant.projectIds[0]]));
    expect(rows.rows[0].n).toBe(0);
  });

  it('versions: each configure_agent is a new version, merged over the previous; concurrent calls get distinct versions', async () => {
    const tenant = await createTenant(t);
    const client = await connectClient(t, tenant.key);
    try {
      await call(client, 'configure_agent', { agent: 'writer', answers: { tone: 'Warm', audience: 'Cooks' } });
      const second = toolJson(await call(client, 'configure_agent', { agent: 'writer', answers: { tone: '  Formal  ' } }));
      expect(second.config).toMatchObject({ version: 2, answers: { audience: 'Cooks', tone: 'Formal' } });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => call(client, 'configure_agent', { agent: 'writer', answers: { topics: `topic ${i}` } })),
      );
      const versions = results.map((r) => toolJson(r).config.version).sort((a: number, b: number) => a - b);
      expect(versions).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
      const latest = toolJson(await call(client, 'get_agent_config', {}));
      expect(latest.config.version).toBe(10);
      expect(latest.config.answers).toMatchObject({ audience: 'Cooks', tone: 'Formal' });
    } finally {
      await client.close();
    }
  });

  it('roles and scopes: a viewer reads the config but cannot configure or generate; another tenant never sees it', async () => {
    const owner = await createTenant(t);
    await rpc(t, owner.key, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'configure_agent', arguments: { agent: 'writer', answers: { tone: 'Warm' } } },
    });
    const viewerKey = await t.http
      .post(`/admin/v1/accounts/${owner.accountId}/api-keys`)
      .set('Authorization', `Bearer ${t.adminToken}`)
      .send({ name: 'viewer', scopes: ['read', 'write', 'generate'], projects: [{ project_id: owner.projectIds[0], role: 'viewer' }] });
    const viewer = viewerKey.body.key as string;
    const read = await rpc(t, viewer, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_agent_config', arguments: {} } });
    expect(toolJson(read.body.result).config.answers).toEqual({ tone: 'Warm' });
    for (const name of ['configure_agent', 'write_article']) {
      const res = await rpc(t, viewer, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: {} } });
      // Not in this credential's catalogue at all: no project lets it run them.
      expect(res.body.error).toEqual({ code: -32602, message: `Unknown tool: ${name}` });
    }
    const stranger: Tenant = await createTenant(t);
    const theirs = await rpc(t, stranger.key, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_agent_config', arguments: {} } });
    expect(toolJson(theirs.body.result)).toEqual({ agent: 'writer', config: null });
  });
});
