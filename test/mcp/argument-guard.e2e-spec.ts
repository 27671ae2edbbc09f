import { startFixtureApp } from '../support/fixture-app.js';
import { activity, createTenant, type Tenant } from '../support/fixtures.js';
import { call, connectClient, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectToolError, expectToolResult } from './mcp-e2e-helpers.js';

// docs/protocol.md#the-argument-guard, word for word.
// `f` is the real app plus fixture tools that declare what no product tool declares yet (number, boolean, a rich body).
describe('/mcp argument guard', () => {
  let t: TestApp;
  let f: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    [t, f] = await Promise.all([startTestApp(), startFixtureApp()]);
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), f?.close()]);
  });

  const invalidParams = (id: unknown, message: string) => ({ jsonrpc: '2.0', id, error: { code: -32602, message } });

  describe('a declared scalar that arrives as an object or an array is -32602', () => {
    it('the page example: "handle" as an object', async () => {
      const res = await rpc(t, tenant.key, call(4, 'get_article', { handle: { $ne: null } }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(invalidParams(4, 'Invalid value for "handle": expected a string.'));
    });

    it('the SDK client gets the same -32602', async () => {
      const client = await connectClient(t, tenant.key);
      await expect(client.callTool({ name: 'get_article', arguments: { handle: { $gt: '' } } })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Invalid value for "handle": expected a string.'),
      });
      await client.close();
    });

    it.each([
      ['get_article', 'id', { $regex: '.*' }, 'a string'],
      ['get_article', 'handle', ['a', 'b'], 'a string'],
      ['list_articles', 'search', { $where: 'sleep(1000)' }, 'a string'],
      ['list_articles', 'tag', ['news'], 'a string'],
      ['list_articles', 'status', { $in: ['draft'] }, 'a string'],
      ['list_articles', 'page', {}, 'an integer'],
      ['list_articles', 'page_size', [5], 'an integer'],
    ])('%s %s', async (tool, name, value, expected) => {
      const res = await rpc(t, tenant.key, call('g', tool, { [name]: value }));
      expect(res.body).toEqual(invalidParams('g', `Invalid value for "${name}": expected ${expected}.`));
    });

    it.each([
      ['s', { a: 1 }, 'a string'],
      ['n', { $gt: 0 }, 'a number'],
      ['n', [1, 2], 'a number'],
      ['i', {}, 'an integer'],
      ['b', { $ne: false }, 'a boolean'],
      ['b', [true], 'a boolean'],
    ])('every scalar type: "%s" given %j is "expected %s."', async (name, value, expected) => {
      const res = await rpc(f, tenant.key, call('s', 'test_e2e_scalars', { [name]: value }));
      expect(res.body).toEqual(invalidParams('s', `Invalid value for "${name}": expected ${expected}.`));
    });

    it('declared scalars of the right shape reach the handler', async () => {
      const res = await rpc(f, tenant.key, call('ok', 'test_e2e_scalars', { s: 'x', n: 1.5, i: 2, b: false }));
      expect(expectToolResult(res.body.result)).toEqual({ received: { s: 'x', n: 1.5, i: 2, b: false } });
    });

    it('the guard answers before project routing', async () => {
      const two = await createTenant(t, { projects: 2 });
      const res = await rpc(t, two.key, call(5, 'get_article', { handle: { $ne: null } }));
      expect(res.body).toEqual(invalidParams(5, 'Invalid value for "handle": expected a string.'));
    });
  });

  describe('an undeclared object or array argument is -32602', () => {
    it.each([
      ['filter', { status: 'draft' }],
      ['where', []],
      ['query', [{ $ne: 1 }]],
    ])('"%s"', async (name, value) => {
      const res = await rpc(t, tenant.key, call(6, 'list_articles', { [name]: value }));
      expect(res.body).toEqual(invalidParams(6, `Unexpected argument "${name}": objects are not accepted here.`));
    });

    it('unless the tool accepts a rich body: then it reaches the handler, and declared scalars are still guarded', async () => {
      const ok = await rpc(f, tenant.key, call(7, 'test_e2e_rich_body', { title: 't', body: { blocks: [{ type: 'p', text: 'hi' }] } }));
      expect(expectToolResult(ok.body.result)).toEqual({ received: { title: 't', body: { blocks: [{ type: 'p', text: 'hi' }] } } });
      const bad = await rpc(f, tenant.key, call(8, 'test_e2e_rich_body', { title: { $ne: 1 } }));
      expect(bad.body).toEqual(invalidParams(8, 'Invalid value for "title": expected a string.'));
    });
  });

  describe('arguments that are not an object, and forbidden keys', () => {
    it.each([[[]], [['a']], ['text'], [5], [true], [null]])('arguments %j is -32602', async (args) => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_articles', arguments: args } });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(9);
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.message).toContain('arguments');
    });

    // JSON.parse makes "__proto__" an own key; the bodies are sent as JSON text to keep it.
    it.each([
      ['__proto__ at the top, object value', '{"__proto__":{"isAdmin":true}}', 'list_articles', '__proto__'],
      ['__proto__ at the top, scalar value', '{"__proto__":"x"}', 'list_articles', '__proto__'],
      ['constructor at the top', '{"constructor":{"prototype":{"x":1}}}', 'list_articles', 'constructor'],
      ['prototype at the top', '{"prototype":1}', 'list_articles', 'prototype'],
      ['__proto__ nested in an object', '{"title":"t","body":{"a":{"__proto__":{"x":1}}}}', 'test_e2e_rich_body', '__proto__'],
      ['constructor nested in an array', '{"body":[1,{"constructor":2}]}', 'test_e2e_rich_body', 'constructor'],
      ['prototype nested deep', '{"body":{"a":[[{"b":{"prototype":null}}]]}}', 'test_e2e_rich_body', 'prototype'],
    ])('%s is -32602 naming the key', async (_case, args, tool, key) => {
      const app = tool.startsWith('test_') ? f : t;
      const body = `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"${tool}","arguments":${args}}}`;
      const res = await rpc(app, null, body, { Authorization: `Bearer ${tenant.key}` });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(10);
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.message).toContain(`"${key}"`);
    });

    it('the same keys as values, or inside string values, are fine', async () => {
      const res = await rpc(f, tenant.key, call(11, 'test_e2e_rich_body', { title: '__proto__', body: { note: 'constructor prototype' } }));
      expect(expectToolResult(res.body.result).received.title).toBe('__proto__');
    });
  });

  describe('other schema violations are tool errors naming the argument and what is allowed', () => {
    it.each([
      ['page_size above 100', 'list_articles', { page_size: 101 }, ['page_size', '100']],
      ['page_size below 1', 'list_articles', { page_size: 0 }, ['page_size', '1']],
      ['page below 1', 'list_articles', { page: 0 }, ['page', '1']],
      ['page not an integer', 'list_articles', { page: 1.5 }, ['page', 'integer']],
      // Found by the fuzz test: an offset past PostgreSQL's bigint was an internal error.
      ['page past any listing', 'list_jobs', { page: 461168601842738800 }, ['page', '1000000']],
      ['page past any listing, list_articles', 'list_articles', { page: 1_000_001 }, ['page', '1000000']],
      ['page as a string', 'list_articles', { page: '2' }, ['page', 'integer']],
      ['a wrong enum value', 'list_articles', { status: 'deleted' }, ['status', 'draft, scheduled, published, archived']],
      ['an empty search', 'list_articles', { search: '' }, ['search']],
      ['a null handle', 'get_article', { handle: null }, ['handle', 'string']],
      ['an undeclared scalar', 'list_articles', { sort: 'title' }, ['sort']],
      ['an undeclared scalar on get_article', 'get_article', { slug: 'x' }, ['slug']],
    ])('%s', async (_case, tool, args, mentions) => {
      const res = await rpc(t, tenant.key, call(12, tool, args));
      expect(res.status).toBe(200);
      expect(res.body.error).toBeUndefined();
      const error = expectToolError(res.body.result, 'invalid_arguments');
      for (const text of mentions) expect(error.message).toContain(text);
      expect(error.message).toContain(`"${mentions[0]}"`);
    });

    it('a missing required argument, and a bound of another tool', async () => {
      const missing = expectToolError((await rpc(f, tenant.key, call(13, 'test_e2e_required', {}))).body.result, 'invalid_arguments');
      expect(missing.message).toBe('Missing required argument "title".');
      const bound = expectToolError((await rpc(f, tenant.key, call(14, 'test_e2e_required', { title: 'x', count: 11 }))).body.result, 'invalid_arguments');
      expect(bound.message).toContain('"count"');
      expect(bound.message).toContain('10');
    });

    it('the SDK client receives them as results with isError', async () => {
      const client = await connectClient(t, tenant.key);
      const result = await client.callTool({ name: 'list_articles', arguments: { page_size: 500 } });
      expect(expectToolError(result, 'invalid_arguments').message).toContain('page_size');
      await client.close();
    });

    it('each refusal is in the activity log as "invalid"', async () => {
      const fresh = await createTenant(t);
      await rpc(t, fresh.key, call(1, 'get_article', { handle: { $ne: null } }));
      await rpc(t, fresh.key, call(2, 'list_articles', { page_size: 101 }));
      const entries = await activity(t, fresh.accountId, 'outcome=invalid');
      expect(entries).toHaveLength(2);
      expect(entries.map((e) => e.tool)).toEqual(['list_articles', 'get_article']);
      expect(entries[1].error).toEqual({ code: -32602, message: 'Invalid value for "handle": expected a string.' });
    });
  });

  describe('what the handler receives', () => {
    it('project_id is stripped; the handler gets the resolved project', async () => {
      const owner = await createTenant(t, { projects: 2 });
      const res = await rpc(f, owner.key, call(15, 'test_e2e_owner_only', { project_id: owner.projectIds[1], note: 'n' }));
      expect(expectToolResult(res.body.result)).toEqual({ project_id: owner.projectIds[1], args: { note: 'n' } });
    });

    it('an unexpected failure in a handler is -32603 with HTTP 200 and the id; a domain error is a tool error', async () => {
      const crash = await rpc(f, tenant.key, call(16, 'test_e2e_crash', {}));
      expect(crash.status).toBe(200);
      expect(crash.body).toEqual({ jsonrpc: '2.0', id: 16, error: { code: -32603, message: expect.any(String) } });
      expect(crash.body.error.message).not.toContain('fixture crash');
      const domain = await rpc(f, tenant.key, call(17, 'test_e2e_crash', { domain: true }));
      expect(expectToolError(domain.body.result, 'forbidden').message).toBe('Refused by the fixture.');
    });
  });
});
