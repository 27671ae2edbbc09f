import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { createDatabase, withClient, type TestDatabase } from '../support/database.js';
import { activity, createTenant, newKey, withRole } from '../support/fixtures.js';
import { connectClient, toolJson } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { articleLive, newArticle } from './elicitation-helpers.js';

const SETUP_IDS = ['audience', 'tone', 'language', 'topics', 'length', 'banned_words', 'image_style'];

/** An SDK client declaring elicitation, whose user answers each form with `answer` (and records what was asked). */
async function elicitingClient(t: TestApp, key: string, answer: (request: ElicitRequest) => ElicitResult) {
  const asked: ElicitRequest[] = [];
  const client = await connectClient(t, key, 'eliciting-client', { elicitation: {} });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return answer(request);
  });
  return { client, asked };
}

/** A form-mode request's params. */
function form(request: ElicitRequest): { message: string; requestedSchema: { properties: Record<string, any>; required?: string[] } } {
  return request.params as any;
}

async function jobCount(url: string, projectId: string): Promise<number> {
  return withClient(url, async (c) => (await c.query('SELECT count(*)::int AS n FROM jobs WHERE project_id = $1', [projectId])).rows[0].n);
}

describe('elicitation and sampling with the official SDK client', () => {
  let db: TestDatabase;
  let t: TestApp;
  const clients: Client[] = [];

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({ SYNC_BUDGET_MS: '60000' });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  afterAll(() => db?.drop());

  describe('delete_article asks for confirmation', () => {
    it('a yes deletes; the form is one boolean defaulting to false', async () => {
      const tenant = await createTenant(t);
      const article = await newArticle(t, tenant.key, 'Rye bread');
      const { client, asked } = await elicitingClient(t, tenant.key, () => ({ action: 'accept', content: { confirm: true } }));
      clients.push(client);
      const result = await client.callTool({ name: 'delete_article', arguments: { id: article.id } });
      expect(result.structuredContent).toEqual({ deleted: true, id: article.id });
      expect(asked).toHaveLength(1);
      expect(asked[0].params.message).toContain('"Rye bread" (rye-bread)');
      expect(form(asked[0]).requestedSchema).toEqual({
        type: 'object',
        properties: { confirm: { type: 'boolean', title: 'Delete this article', description: expect.any(String), default: false } },
        required: ['confirm'],
      });
      expect(await articleLive(t, tenant.key, article.id)).toBe(false);
    });

    it.each([
      ['a no', { action: 'accept', content: { confirm: false } }, 'did not confirm'],
      ['an accepted form without the answer', { action: 'accept', content: {} }, 'did not confirm'],
      ['decline', { action: 'decline' }, 'declined'],
      ['cancel', { action: 'cancel' }, 'cancelled'],
    ] as [string, ElicitResult, string][])('%s: tool error not_confirmed, nothing deleted', async (_name, answer, says) => {
      const tenant = await createTenant(t);
      const article = await newArticle(t, tenant.key);
      const { client, asked } = await elicitingClient(t, tenant.key, () => answer);
      clients.push(client);
      const result = await client.callTool({ name: 'delete_article', arguments: { id: article.id } });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      expect(toolJson(result).error).toEqual({
        code: 'not_confirmed',
        message: expect.stringContaining(`The user ${says} the deletion of article ${article.id}; nothing was deleted.`),
      });
      expect(asked).toHaveLength(1);
      expect(await articleLive(t, tenant.key, article.id)).toBe(true);
      // Recorded as a tool error in the activity log.
      const entries = await activity(t, tenant.accountId, 'tool=delete_article');
      expect(entries[0]).toMatchObject({ tool: 'delete_article', outcome: 'tool_error' });
    });

    it('a client without the capability deletes at once, as before', async () => {
      const tenant = await createTenant(t);
      const article = await newArticle(t, tenant.key);
      const client = await connectClient(t, tenant.key);
      clients.push(client);
      const result = await client.callTool({ name: 'delete_article', arguments: { id: article.id } });
      expect(result.structuredContent).toEqual({ deleted: true, id: article.id });
    });
  });

  describe('write_article and generate_image ask the writer setup as a form', () => {
    it('accepted: the answers are saved as configure_agent would, and the same call goes on to write the draft', async () => {
      const tenant = await createTenant(t);
      const { client, asked } = await elicitingClient(t, tenant.key, (request) => {
        const properties = form(request).requestedSchema.properties as Record<string, { default?: string }>;
        const defaults = Object.fromEntries(Object.entries(properties).flatMap(([id, p]) => (p.default === undefined ? [] : [[id, p.default]])));
        return { action: 'accept', content: { ...defaults, audience: 'Gardeners', topics: 'vegetables, compost', length: 'short' } };
      });
      clients.push(client);
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'Starting a vegetable garden' } });
      expect(result.isError).toBeFalsy();
      expect(toolJson(result)).toMatchObject({ status: 'succeeded', article: { source: 'ai', status: 'draft' } });

      expect(asked).toHaveLength(1);
      const schema = form(asked[0]).requestedSchema as { properties: Record<string, any>; required: string[] };
      expect(Object.keys(schema.properties)).toEqual(SETUP_IDS);
      expect(schema.required).toEqual(SETUP_IDS.filter((id) => id !== 'banned_words'));
      expect(schema.properties.length).toEqual({
        type: 'string',
        title: 'How long should a typical article be?',
        enum: ['short', 'medium', 'long'],
        default: 'medium',
      });
      expect(schema.properties.tone).toEqual({ type: 'string', title: expect.any(String), maxLength: 200, default: 'Friendly, clear and practical' });
      // No tags yet: nothing to propose for the audience.
      expect(schema.properties.audience).toEqual({ type: 'string', title: 'Who reads this blog?', maxLength: 500 });
      expect(asked[0].params.message).toContain('write_article');

      const config = toolJson(await client.callTool({ name: 'get_agent_config', arguments: {} }));
      expect(config.config).toMatchObject({
        version: 1,
        answers: {
          audience: 'Gardeners',
          tone: 'Friendly, clear and practical',
          language: 'en',
          topics: 'vegetables, compost',
          length: 'short',
          banned_words: '',
        },
      });
      // The next call has a config: no question.
      await client.callTool({ name: 'write_article', arguments: { brief: 'Compost' } });
      expect(asked).toHaveLength(1);
    });

    it('generate_image asks the same, then makes the image', async () => {
      const tenant = await createTenant(t);
      const { client, asked } = await elicitingClient(t, tenant.key, () => ({
        action: 'accept',
        content: { audience: 'Cooks', tone: 'Warm', language: 'en', topics: 'bread', length: 'medium', banned_words: '', image_style: 'watercolour' },
      }));
      clients.push(client);
      const result = await client.callTool({ name: 'generate_image', arguments: { prompt: 'a loaf' } });
      expect(toolJson(result)).toMatchObject({ status: 'succeeded', media: { mime_type: 'image/png' } });
      expect(asked).toHaveLength(1);
      expect(asked[0].params.message).toContain('generate_image');
    });

    it.each(['decline', 'cancel'] as const)('%s: the documented setup_required answer exactly, nothing saved or queued', async (action) => {
      const tenant = await createTenant(t);
      const plain = await connectClient(t, tenant.key);
      clients.push(plain);
      const seed = await plain.callTool({ name: 'write_article', arguments: { brief: 'x' } });
      const { client, asked } = await elicitingClient(t, tenant.key, () => ({ action }));
      clients.push(client);
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'x' } });
      expect(asked).toHaveLength(1);
      expect(result).toEqual(seed);
      expect(toolJson(result).status).toBe('setup_required');
      expect(toolJson(await client.callTool({ name: 'get_agent_config', arguments: {} })).config).toBeNull();
      expect(await jobCount(db.url, tenant.projectIds[0])).toBe(0);
      const entries = await activity(t, tenant.accountId, 'tool=write_article');
      expect(entries.map((e) => e.outcome)).toEqual(['setup_required', 'setup_required']);
    });

    it('a credential that may not run configure_agent there is not asked: setup_required as before', async () => {
      const tenant = await createTenant(t, { disabledTools: ['configure_agent'] });
      const { client, asked } = await elicitingClient(t, tenant.key, () => ({ action: 'accept', content: {} }));
      clients.push(client);
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'x' } });
      expect(toolJson(result).status).toBe('setup_required');
      expect(asked).toEqual([]);
      // Nor a key without the write scope (configure_agent needs it).
      const generateOnly = await newKey(t, tenant.accountId, withRole(tenant.projectIds, 'owner'), ['read', 'generate']);
      const other = await elicitingClient(t, generateOnly.key, () => ({ action: 'accept', content: {} }));
      clients.push(other.client);
      expect(toolJson(await other.client.callTool({ name: 'generate_image', arguments: { prompt: 'x' } })).status).toBe('setup_required');
      expect(other.asked).toEqual([]);
    });

    it('answers configure_agent would refuse are refused the same way, nothing saved', async () => {
      const tenant = await createTenant(t);
      const { client } = await elicitingClient(t, tenant.key, () => ({ action: 'accept', content: { audience: 'A', topics: 'B', length: 'huge' } }));
      clients.push(client);
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'x' } });
      expect(result.isError).toBe(true);
      expect(toolJson(result).error).toEqual({ code: 'invalid_arguments', message: 'The answer to "length" must be one of short, medium, long.' });
      expect(toolJson(await client.callTool({ name: 'get_agent_config', arguments: {} })).config).toBeNull();
    });

    it('an accepted form missing an answer with nothing to propose names it', async () => {
      const tenant = await createTenant(t);
      const { client } = await elicitingClient(t, tenant.key, () => ({ action: 'accept', content: { topics: 'B' } }));
      clients.push(client);
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'x' } });
      expect(toolJson(result).error).toEqual({ code: 'invalid_arguments', message: expect.stringContaining('without an answer to "audience"') });
    });
  });
});

describe('sampling and elicitation fixtures (conformance) with the SDK client', () => {
  let t: TestApp;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createDatabase();
    t = await startTestApp({ DATABASE_URL: db.url }, [ConformanceFixturesModule]);
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('test_sampling sends sampling/createMessage and answers with the model’s text; a client without sampling gets a tool error', async () => {
    const tenant = await createTenant(t);
    const client = await connectClient(t, tenant.key, 'sampler', { sampling: {} });
    const seen: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      seen.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'Hello from the model' }, model: 'm', stopReason: 'endTurn' };
    });
    try {
      const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Say hello' } });
      expect(result.content).toEqual([{ type: 'text', text: 'LLM response: Hello from the model' }]);
      expect(seen).toEqual([{ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }], maxTokens: 100 }]);
    } finally {
      await client.close();
    }
    const plain = await connectClient(t, tenant.key);
    try {
      const refused = await plain.callTool({ name: 'test_sampling', arguments: { prompt: 'Say hello' } });
      expect(refused.isError).toBe(true);
      expect(toolJson(refused).error.code).toBe('unavailable');
      const noElicitation = await plain.callTool({ name: 'test_elicitation', arguments: { message: 'hi' } });
      expect(toolJson(noElicitation).error.code).toBe('unavailable');
    } finally {
      await plain.close();
    }
  });

  it('test_elicitation answers what the user did', async () => {
    const tenant = await createTenant(t);
    const client = await connectClient(t, tenant.key, 'eliciter', { elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }));
    try {
      const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      const [block] = result.content as { type: string; text: string }[];
      expect(block.text).toMatch(/^User response: action=accept, content=/);
      expect(JSON.parse(block.text.slice('User response: action=accept, content='.length))).toEqual({ username: 'ada', email: 'ada@example.com' });
    } finally {
      await client.close();
    }
  });
});
