import { readFileSync } from 'node:fs';
import { createTenant, MISSING_ID, type Tenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectToolError, expectToolResult, outputValidator, seedArticle } from './mcp-e2e-helpers.js';

// docs/protocol.md#methods, with its JSON examples.
const PACKAGE_VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

describe('/mcp methods', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('initialize', () => {
    it('answers the page handshake exactly', async () => {
      const res = await rpc(t, tenant.key, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'my-agent', version: '1.0.0' } },
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: {
            tools: { listChanged: false },
            resources: { subscribe: true, listChanged: false },
            prompts: { listChanged: false },
            completions: {},
            logging: {},
          },
          serverInfo: { name: 'reblog-mcp', version: '1.0.0' },
          instructions: expect.any(String),
        },
      });
      expect(Object.keys(res.body.result)).toEqual(['protocolVersion', 'capabilities', 'serverInfo', 'instructions']);
      expect(res.body.result.serverInfo.version).toBe(PACKAGE_VERSION);
      expect(res.headers['mcp-session-id']).toEqual(expect.any(String));
    });

    it('instructions begin as on the page, then name list_projects, the setup step and job ids', async () => {
      const { res } = await initSession(t, tenant.key);
      const text: string = res.body.result.instructions;
      expect(text.startsWith('Reblog MCP server. Tools act on your articles and projects.')).toBe(true);
      expect(text).toContain('list_projects');
      expect(text).toMatch(/project_id/);
      expect(text).toMatch(/setup/i);
      expect(text).toContain('configure_agent');
      expect(text).toMatch(/job id/i);
      expect(text).toContain('get_job');
      // One sentence each for resources and prompts (docs/protocol.md#initialize).
      expect(text.match(/[^.]*\bresources\b[^.]*\./g)).toHaveLength(1);
      expect(text).toContain('reblog://projects/<project_id>/articles/<handle>');
      expect(text.match(/[^.]*\bPrompts\b[^.]*\./g)).toHaveLength(1);
      expect(text).toContain('draft_article');
    });

    it('the official SDK client sees the same server info, capabilities and instructions', async () => {
      const client = await connectClient(t, tenant.key);
      expect(client.getServerVersion()).toEqual({ name: 'reblog-mcp', version: '1.0.0' });
      expect(client.getServerCapabilities()).toEqual({
        tools: { listChanged: false },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
        logging: {},
      });
      expect(client.getInstructions()).toMatch(/^Reblog MCP server\. Tools act on your articles and projects\./);
      await client.close();
    });

    it('clientInfo is optional', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'i', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } });
      expect(res.status).toBe(200);
      expect(res.body.result.protocolVersion).toBe('2025-06-18');
    });

    it('params that are not an initialize request are -32602 with HTTP 200 and the id', async () => {
      for (const params of [undefined, [], 'x', { capabilities: {} }, { protocolVersion: 20250618 }]) {
        const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 9, method: 'initialize', ...(params === undefined ? {} : { params }) });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ jsonrpc: '2.0', id: 9, error: { code: -32602, message: expect.stringContaining('protocolVersion') } });
        expect(res.headers['mcp-session-id']).toBeUndefined();
      }
    });
  });

  describe('notifications/initialized and ping', () => {
    it('notifications/initialized is 202 with no body, in and out of a session', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      const inSession = await rpc(t, tenant.key, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders(sessionId));
      expect(inSession.status).toBe(202);
      expect(inSession.text).toBe('');
      const stateless = await rpc(t, tenant.key, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(stateless.status).toBe(202);
    });

    it('ping answers {} (raw and through the SDK)', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 2, method: 'ping' });
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
      const client = await connectClient(t, tenant.key);
      await expect(client.ping()).resolves.toEqual({});
      await client.close();
    });
  });

  describe('unknown methods', () => {
    it.each(['resources/lists', 'prompts/lists', 'tools/lists', 'logging/getLevel', 'server/discover', ''])(
      '"%s" is -32601 with HTTP 200 and the id',
      async (method) => {
        const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'm-1', method });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ jsonrpc: '2.0', id: 'm-1', error: { code: -32601, message: expect.any(String) } });
      },
    );

    it('a method named like an object property is not found either', async () => {
      for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 3, method });
        expect(res.body.error.code).toBe(-32601);
      }
    });
  });

  describe('tools/list', () => {
    it('answers {"tools": [...]}, each with name, title, description, a closed object inputSchema and annotations', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.result)).toEqual(['tools']);
      const tools: any[] = res.body.result.tools;
      expect(tools.map((x) => x.name)).toEqual(expect.arrayContaining(['list_projects', 'list_articles', 'get_article']));
      for (const tool of tools) {
        expect(tool).toEqual(expect.objectContaining({ name: expect.any(String), title: expect.any(String), description: expect.any(String) }));
        expect(tool.description.length).toBeGreaterThan(20);
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.inputSchema.additionalProperties).toBe(false);
        expect(typeof tool.inputSchema.properties).toBe('object');
      }
    });

    it('list_articles is listed as on the page: page and page_size with their bounds and defaults, readOnlyHint', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      const tool = res.body.result.tools.find((x: any) => x.name === 'list_articles');
      expect(tool.description).toMatch(/^List articles in a project\./);
      expect(tool.description).toMatch(/pagination/);
      expect(tool.description).toMatch(/search by title\/handle/);
      expect(tool.inputSchema.properties.page).toEqual(expect.objectContaining({ type: 'integer', minimum: 1, default: 1 }));
      expect(tool.inputSchema.properties.page_size).toEqual(expect.objectContaining({ type: 'integer', minimum: 1, maximum: 100, default: 20 }));
      expect(tool.inputSchema.properties.status.enum).toEqual(['draft', 'scheduled', 'published', 'archived']);
      expect(tool.annotations).toEqual({ readOnlyHint: true });
    });

    it('the SDK client lists the same tools', async () => {
      const raw = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const client = await connectClient(t, tenant.key);
      const { tools } = await client.listTools();
      expect(tools).toEqual(raw.body.result.tools);
      await client.close();
    });
  });

  describe('tools/call', () => {
    it('answers the page call of list_articles with status and page_size: one text block of pretty-printed JSON', async () => {
      const projectId = tenant.projectIds[0];
      for (let i = 0; i < 7; i++) await seedArticle(t, tenant.accountId, projectId, { title: `Draft ${i}`, status: 'draft' });
      await seedArticle(t, tenant.accountId, projectId, { title: 'Live', status: 'published' });
      const res = await rpc(t, tenant.key, {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'list_articles', arguments: { project_id: projectId, status: 'draft', page_size: 5 } },
      });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(3);
      const result = res.body.result;
      const value = expectToolResult(result);
      expect(result.content[0].text).toMatch(/^\{\n  "items": \[/);
      expect(value.items).toHaveLength(5);
      expect(value.items.every((a: any) => a.status === 'draft')).toBe(true);
      expect(value.pagination).toEqual({ total: 7, page: 1, page_size: 5, pages: 2 });
    });

    it('every result validates against the tool outputSchema (list_projects, list_articles, get_article)', async () => {
      const list = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const schemas = new Map<string, object>(list.body.result.tools.map((x: any) => [x.name, x.outputSchema]));
      const ajv = outputValidator();
      const article = await seedArticle(t, tenant.accountId, tenant.projectIds[0], { title: 'Schema check', tags: ['a', 'b'], status: 'published' });
      const calls: [string, object][] = [
        ['list_projects', {}],
        ['list_articles', { page_size: 3 }],
        ['list_articles', { status: 'published' }],
        ['get_article', { id: article.id }],
      ];
      for (const [name, args] of calls) {
        const schema = schemas.get(name);
        expect(schema).toEqual(expect.objectContaining({ type: 'object' }));
        const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: name, method: 'tools/call', params: { name, arguments: args } });
        const value = expectToolResult(res.body.result);
        const validate = ajv.compile(schema!);
        if (!validate(value)) throw new Error(`${name} result does not match its outputSchema: ${ajv.errorsText(validate.errors)}`);
      }
    });

    it('the SDK client gets the same shape and accepts structuredContent against outputSchema', async () => {
      const client = await connectClient(t, tenant.key);
      await client.listTools();
      const result = await client.callTool({ name: 'list_projects', arguments: {} });
      const value = expectToolResult(result);
      expect(value.items).toEqual([{ id: tenant.projectIds[0], name: 'Project 1', role: 'owner', article_count: expect.any(Number) }]);
      await client.close();
    });

    it('a tool failure keeps the shape, adds isError and carries {"error":{code,message}} without structuredContent', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'get_article', arguments: { id: MISSING_ID } } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.result).sort()).toEqual(['content', 'isError']);
      const error = expectToolError(res.body.result, 'not_found');
      expect(error.message).toContain(MISSING_ID);
    });

    it('omitted arguments are taken as {}', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'list_projects' } });
      expect(expectToolResult(res.body.result).items).toHaveLength(1);
    });

    it('params without a tool name, or an unknown tool, are -32602 with HTTP 200 and the id', async () => {
      const cases: [unknown, RegExp][] = [
        [undefined, /name/],
        [[], /name/],
        [{}, /name/],
        [{ name: 42 }, /name/],
        [{ name: 'nope' }, /^Unknown tool: nope$/],
        [{ name: 'toString' }, /^Unknown tool: toString$/],
        [{ name: '__proto__' }, /^Unknown tool: __proto__$/],
      ];
      for (const [params, message] of cases) {
        const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'c', method: 'tools/call', ...(params === undefined ? {} : { params }) });
        expect(res.status).toBe(200);
        expect(res.body.id).toBe('c');
        expect(res.body.error.code).toBe(-32602);
        expect(res.body.error.message).toMatch(message);
      }
    });
  });
});
