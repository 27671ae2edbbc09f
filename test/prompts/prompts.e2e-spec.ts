import { ArticlesService } from '../../src/articles/articles.service.js';
import { articleMarkdown, articleUri } from '../../src/resources/resource-uris.js';
import { createTenant, MISSING_ID, newAccountWithProjects, newKey, type Role, type Scope, withRole } from '../support/fixtures.js';
import { connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { seedArticle } from '../mcp/mcp-e2e-helpers.js';

// Prompts (docs/protocol.md#resources-prompts-completions-and-logging): writing workflows with arguments, filtered per credential like the catalogue;
// article ids are looked up among the projects where the credential could run get_article.
const PRODUCT_PROMPTS = ['draft_article', 'edit_for_tone', 'publish_checklist'];

describe('prompts', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  let nextId = 1;
  /** prompts/get over raw HTTP (a stateless client): the JSON-RPC body. */
  async function getRaw(key: string, params: unknown): Promise<any> {
    const res = await rpc(t, key, { jsonrpc: '2.0', id: nextId++, method: 'prompts/get', params });
    expect(res.status).toBe(200);
    return res.body;
  }
  /** The -32602 message prompts/get answers with `params`. */
  async function invalid(key: string, params: unknown): Promise<string> {
    const body = await getRaw(key, params);
    expect(body.result).toBeUndefined();
    expect(body.error.code).toBe(-32602);
    return body.error.message;
  }
  async function listed(key: string): Promise<string[]> {
    const client = await connectClient(t, key);
    try {
      return (await client.listPrompts()).prompts.map((p) => p.name);
    } finally {
      await client.close();
    }
  }
  async function keyFor(projects: { name?: string; disabled_tools?: string[] }[], role: Role = 'owner', scopes?: Scope[]) {
    const { accountId, projectIds } = await newAccountWithProjects(t, projects);
    const { key } = await newKey(t, accountId, withRole(projectIds, role), scopes);
    return { accountId, projectIds, key };
  }

  describe('prompts/list', () => {
    it('lists the three writing prompts to an owner with every scope, each with a title, a description and its arguments', async () => {
      const { key } = await createTenant(t);
      const client = await connectClient(t, key);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(PRODUCT_PROMPTS);
      for (const p of prompts) {
        expect(Object.keys(p).sort()).toEqual(['arguments', 'description', 'name', 'title']);
        expect(p.description).toEqual(expect.any(String));
        for (const a of p.arguments!) expect(a).toEqual({ name: expect.any(String), description: expect.any(String), required: expect.any(Boolean) });
      }
      expect(prompts.find((p) => p.name === 'draft_article')!.arguments).toEqual([
        { name: 'topic', description: expect.any(String), required: true },
        { name: 'audience', description: expect.any(String), required: false },
        { name: 'project_id', description: expect.any(String), required: false },
      ]);
      expect(prompts.find((p) => p.name === 'edit_for_tone')!.arguments!.map((a) => [a.name, a.required])).toEqual([
        ['article_id', true],
        ['tone', true],
      ]);
      expect(prompts.find((p) => p.name === 'publish_checklist')!.arguments!.map((a) => [a.name, a.required])).toEqual([['article_id', true]]);
      await client.close();
    });

    it('a read-only key sees no writing prompt, and getting one is "Unknown prompt" like a prompt that does not exist', async () => {
      const { key, projectIds } = await keyFor([{}], 'owner', ['read']);
      expect(await listed(key)).toEqual([]);
      expect(await invalid(key, { name: 'draft_article', arguments: { topic: 'Bread' } })).toBe('Unknown prompt: draft_article');
      expect(await invalid(key, { name: 'edit_for_tone', arguments: { article_id: MISSING_ID, tone: 'warm' } })).toBe('Unknown prompt: edit_for_tone');
      expect(await invalid(key, { name: 'no_such_prompt' })).toBe('Unknown prompt: no_such_prompt');
      expect(projectIds).toHaveLength(1);
    });

    it('follows the catalogue: scopes, roles and disabled tools decide, any project that allows one needed tool lists the prompt', async () => {
      // A viewer runs no writing tool.
      expect(await listed((await keyFor([{}], 'viewer')).key)).toEqual([]);
      // write without generate: create_article drafts.
      expect(await listed((await keyFor([{}], 'editor', ['read', 'write'])).key)).toEqual(PRODUCT_PROMPTS);
      // generate only: write_article drafts; nothing to update or publish with.
      expect(await listed((await keyFor([{}], 'editor', ['generate'])).key)).toEqual(['draft_article']);
      // update_article disabled in the only project.
      expect(await listed((await keyFor([{ disabled_tools: ['update_article'] }])).key)).toEqual(['draft_article', 'publish_checklist']);
      // ... but allowed in a second one.
      expect(await listed((await keyFor([{ disabled_tools: ['update_article'] }, {}])).key)).toEqual(PRODUCT_PROMPTS);
      // Both drafting tools disabled, publishing too.
      expect(await listed((await keyFor([{ disabled_tools: ['write_article', 'create_article', 'publish_article'] }])).key)).toEqual(['edit_for_tone']);
    });

    it('answers a stateless client too, and lists no conformance fixture in the product', async () => {
      const { key } = await createTenant(t);
      const res = await rpc(t, key, { jsonrpc: '2.0', id: 7, method: 'prompts/list', params: {} });
      expect(res.status).toBe(200);
      expect(res.body.result.prompts.map((p: { name: string }) => p.name)).toEqual(PRODUCT_PROMPTS);
    });
  });

  describe('draft_article', () => {
    it('in the only project, with write_article: names the topic, the audience, the project and the setup step', async () => {
      const { key } = await keyFor([{}]);
      const client = await connectClient(t, key);
      const result = await client.getPrompt({ name: 'draft_article', arguments: { topic: 'Sourdough starters', audience: 'Beginner bakers' } });
      expect(result.messages).toHaveLength(1);
      const [message] = result.messages;
      expect(message.role).toBe('user');
      expect(message.content.type).toBe('text');
      const text = (message.content as { text: string }).text;
      expect(text).toContain('Sourdough starters');
      expect(text).toContain('Beginner bakers');
      // One reachable project: write_article's listed schema has no project_id, so the text names none.
      expect(text).not.toContain('project_id');
      expect(text).toContain('Call write_article with a brief');
      expect(text).toContain('write_article');
      expect(text).toContain('setup_required');
      expect(text).toContain('configure_agent');
      expect(result.description).toContain('Sourdough starters');
      await client.close();
    });

    it('says project_id exactly when the catalogue lists it: a key reaching two projects, drafting in one, is told to pass it', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Bakery' }, { name: 'Archive' }]);
      const { key } = await newKey(t, accountId, [
        { project_id: projectIds[0], role: 'editor' },
        { project_id: projectIds[1], role: 'viewer' },
      ]);
      const tools = (await rpc(t, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools as {
        name: string;
        inputSchema: { required?: string[] };
      }[];
      expect(tools.find((x) => x.name === 'write_article')!.inputSchema.required).toContain('project_id');
      const text: string = (await getRaw(key, { name: 'draft_article', arguments: { topic: 'Baguettes' } })).result.messages[0].content.text;
      expect(text).toContain(`Call write_article with project_id "${projectIds[0]}" and a brief`);
      expect(text).not.toContain(projectIds[1]);
      const article = await seedArticle(t, accountId, projectIds[0], { title: 'Crumb' });
      const edit: string = (await getRaw(key, { name: 'edit_for_tone', arguments: { article_id: article.id, tone: 'dry' } })).result.messages[1].content.text;
      expect(edit).toContain(`save it with update_article: project_id "${projectIds[0]}", id "${article.id}", version 1`);
    });

    it('a key that cannot run configure_agent is told that someone else must set the writer up', async () => {
      const { key } = await keyFor([{}], 'editor', ['read', 'generate']);
      const body = await getRaw(key, { name: 'draft_article', arguments: { topic: 'Spelt' } });
      const text: string = body.result.messages[0].content.text;
      expect(text).toContain('write_article');
      expect(text).not.toContain('save the answers with configure_agent');
      expect(text).toMatch(/set up by someone who may run configure_agent/);
    });

    it('without generate (or with write_article disabled there) it drafts with create_article instead', async () => {
      for (const key of [(await keyFor([{}], 'editor', ['read', 'write'])).key, (await keyFor([{ disabled_tools: ['write_article'] }])).key]) {
        const body = await getRaw(key, { name: 'draft_article', arguments: { topic: 'Rye bread' } });
        const text: string = body.result.messages[0].content.text;
        expect(text).toContain('create_article');
        expect(text).toContain('Save it with create_article, leaving status "draft"');
        expect(text).not.toContain('write_article');
        expect(text).toMatch(/Audience: not given/);
      }
    });

    it('with several projects and no project_id it asks which one, naming the projects where it can draft', async () => {
      const { key, projectIds } = await keyFor([{ name: 'Bakery' }, { name: 'Docs', disabled_tools: ['write_article', 'create_article'] }, { name: 'Travel' }]);
      const body = await getRaw(key, { name: 'draft_article', arguments: { topic: 'Croissants' } });
      const text: string = body.result.messages[0].content.text;
      expect(text).toContain(`"Bakery" (project_id ${projectIds[0]})`);
      expect(text).toContain(`"Travel" (project_id ${projectIds[2]})`);
      expect(text).not.toContain(projectIds[1]);
      expect(text).toMatch(/ask the user which project/i);
      const chosen = await getRaw(key, { name: 'draft_article', arguments: { topic: 'Croissants', project_id: projectIds[2] } });
      expect(chosen.result.messages[0].content.text).toContain(`project_id "${projectIds[2]}"`);
      expect(chosen.result.messages[0].content.text).not.toContain(projectIds[0]);
    });

    it('a project_id of another account, an unreachable or a disallowed project, or not a UUID, is the same -32602', async () => {
      const { accountId, projectIds } = await newAccountWithProjects(t, [{}, {}, { disabled_tools: ['write_article', 'create_article'] }]);
      const { key } = await newKey(t, accountId, withRole([projectIds[0], projectIds[2]], 'owner'));
      const foreign = await createTenant(t);
      const message = (id: string) => `Invalid value for "project_id": unknown project "${id}" for this credential; see list_projects.`;
      for (const id of [foreign.projectIds[0], projectIds[1], projectIds[2], MISSING_ID, 'not-a-uuid']) {
        expect(await invalid(key, { name: 'draft_article', arguments: { topic: 'x', project_id: id } })).toBe(message(id));
      }
    });
  });

  describe('edit_for_tone and publish_checklist', () => {
    it('edit_for_tone embeds the article as a markdown resource and asks for a rewrite saved with update_article and its version', async () => {
      const tenant = await createTenant(t);
      const article = await seedArticle(t, tenant.accountId, tenant.projectIds[0], { title: 'Why rye', body: 'Rye is **great**.', tags: ['rye'] });
      const client = await connectClient(t, tenant.key);
      const result = await client.getPrompt({ name: 'edit_for_tone', arguments: { article_id: article.id, tone: 'playful' } });
      expect(result.messages).toHaveLength(2);
      expect(result.messages[0]).toEqual({
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: articleUri(tenant.projectIds[0], article.id), mimeType: 'text/markdown', text: articleMarkdown(article) },
        },
      });
      const text = (result.messages[1].content as { text: string }).text;
      expect(text).toContain('playful');
      expect(text).toContain('update_article');
      expect(text).toContain(`save it with update_article: id "${article.id}", version 1`);
      expect(text).not.toContain('project_id');
      expect(result.description).toBe('Rewrite "Why rye" in a playful tone.');
      await client.close();
    });

    it("edit_for_tone where update_article is disabled in the article's project (allowed in another): the rewrite is shown, not saved", async () => {
      const { key, accountId, projectIds } = await keyFor([{ disabled_tools: ['update_article'] }, {}]);
      const article = await seedArticle(t, accountId, projectIds[0], { title: 'Read only here' });
      const body = await getRaw(key, { name: 'edit_for_tone', arguments: { article_id: article.id, tone: 'formal' } });
      const text: string = body.result.messages[1].content.text;
      expect(text).toMatch(/cannot run update_article/);
      expect(text).not.toContain('version 1');
    });

    it('publish_checklist embeds the article and counts what can be counted: excerpt, tags, image, links, words', async () => {
      const tenant = await createTenant(t);
      const body = `See [the guide](https://example.com/guide) and https://example.org/x. ${'word '.repeat(40)}`;
      const article = await seedArticle(t, tenant.accountId, tenant.projectIds[0], { title: 'Checklist me', body, tags: ['a', 'b'] });
      const client = await connectClient(t, tenant.key);
      const result = await client.getPrompt({ name: 'publish_checklist', arguments: { article_id: article.id } });
      expect(result.messages[0].content).toEqual({
        type: 'resource',
        resource: { uri: articleUri(tenant.projectIds[0], article.id), mimeType: 'text/markdown', text: articleMarkdown(article) },
      });
      const text = (result.messages[1].content as { text: string }).text;
      expect(text).toContain('- Title: "Checklist me" (12 characters)');
      expect(text).toContain('- Excerpt: missing');
      expect(text).toContain('- Tags: a, b.');
      expect(text).toContain('- Featured image: none.');
      expect(text).toContain('- Links: 2 (https://example.com/guide, https://example.org/x).');
      expect(text).toContain('- Body length: 45 words; under 300');
      expect(text).toContain('- Status: draft.');
      expect(text).toContain(`publish it with publish_article (id "${article.id}")`);
      expect(text).not.toContain('project_id');
      await client.close();
    });

    it.each(['edit_for_tone', 'publish_checklist'])(
      '%s: an article of another account, of an unreachable project, where get_article is disabled, trashed, unknown or malformed is the same -32602',
      async (name) => {
        const { accountId, projectIds } = await newAccountWithProjects(t, [{}, {}, { disabled_tools: ['get_article'] }]);
        const { key } = await newKey(t, accountId, withRole([projectIds[0], projectIds[2]], 'owner'));
        const foreign = await createTenant(t);
        const mine = await seedArticle(t, accountId, projectIds[0], { title: 'Mine' });
        const unreachable = await seedArticle(t, accountId, projectIds[1], { title: 'Unreachable' });
        const unreadable = await seedArticle(t, accountId, projectIds[2], { title: 'Unreadable' });
        const theirs = await seedArticle(t, foreign.accountId, foreign.projectIds[0], { title: 'Theirs' });
        const trashed = await seedArticle(t, accountId, projectIds[0], { title: 'Trashed' });
        await t.app.get(ArticlesService).delete({ accountId, projectId: projectIds[0] }, trashed.id, { credentialId: null });
        const args = (id: string) => (name === 'edit_for_tone' ? { article_id: id, tone: 'warm' } : { article_id: id });
        // The readable one works: what follows fails for the id alone.
        expect((await getRaw(key, { name, arguments: args(mine.id) })).result.messages).toHaveLength(2);
        for (const id of [unreachable.id, unreadable.id, theirs.id, trashed.id, MISSING_ID, 'nope', `${mine.id}x`]) {
          expect(await invalid(key, { name, arguments: args(id) })).toBe(
            `Invalid value for "article_id": no article "${id}" among the projects this credential can read. Find ids with list_articles.`,
          );
        }
      },
    );
  });

  describe('bad input', () => {
    let key: string;
    beforeAll(async () => {
      key = (await createTenant(t)).key;
    });

    it.each([
      ['params not an object', [], 'Invalid params: expected an object with "name" and "arguments".'],
      ['no params', undefined, 'Invalid params: expected an object with "name" and "arguments".'],
      ['name not a string', { name: 42 }, 'Invalid params: "name" must be the name of a prompt (a string).'],
      ['arguments an array', { name: 'draft_article', arguments: ['Bread'] }, 'Invalid params: "arguments" must be an object whose values are strings.'],
      ['arguments a string', { name: 'draft_article', arguments: 'Bread' }, 'Invalid params: "arguments" must be an object whose values are strings.'],
      [
        'a required argument missing',
        { name: 'draft_article', arguments: {} },
        'Missing required argument "topic" for prompt draft_article: What the article is about, and anything it must say.',
      ],
      [
        'a required argument blank',
        { name: 'draft_article', arguments: { topic: '  ' } },
        'Missing required argument "topic" for prompt draft_article: What the article is about, and anything it must say.',
      ],
      [
        'no arguments at all',
        { name: 'edit_for_tone' },
        'Missing required argument "article_id" for prompt edit_for_tone: Id of the article to rewrite (see list_articles).',
      ],
      ['a number', { name: 'draft_article', arguments: { topic: 42 } }, 'Invalid value for "topic": expected a string.'],
      ['an object', { name: 'draft_article', arguments: { topic: { text: 'Bread' } } }, 'Invalid value for "topic": expected a string.'],
      ['null', { name: 'draft_article', arguments: { topic: 'Bread', audience: null } }, 'Invalid value for "audience": expected a string.'],
      [
        'an undeclared argument',
        { name: 'draft_article', arguments: { topic: 'Bread', length: 'short' } },
        'Unexpected argument "length" for prompt draft_article: it takes topic, audience, project_id.',
      ],
      [
        '__proto__',
        { name: 'draft_article', arguments: JSON.parse('{"topic":"Bread","__proto__":{"x":1}}') },
        'Unexpected argument "__proto__" for prompt draft_article: it takes topic, audience, project_id.',
      ],
      [
        'too long',
        { name: 'edit_for_tone', arguments: { article_id: MISSING_ID, tone: 'x'.repeat(201) } },
        'Invalid value for "tone": at most 200 characters.',
      ],
    ])('%s → -32602 with a sentence', async (_case, params, message) => {
      expect(await invalid(key, params)).toBe(message);
    });

    it('the SDK client gets the error as an McpError with the same code', async () => {
      const client = await connectClient(t, key);
      await expect(client.getPrompt({ name: 'draft_article', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      await expect(client.getPrompt({ name: 'test_simple_prompt' })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown prompt: test_simple_prompt'),
      });
      await client.close();
    });

    it('an optional argument given as "" is left out, like one not given', async () => {
      const body = await getRaw(key, { name: 'draft_article', arguments: { topic: 'Bread', audience: '', project_id: '' } });
      expect(body.result.messages[0].content.text).toMatch(/Audience: not given/);
    });
  });
});
