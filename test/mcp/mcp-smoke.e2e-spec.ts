import { createTenant } from '../support/fixtures.js';
import { connectClient, rpc, toolJson } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

describe('/mcp smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('an SDK client initializes, lists tools and calls list_projects', async () => {
    const tenant = await createTenant(t);
    const client = await connectClient(t, tenant.key);
    expect(client.getServerVersion()).toEqual({ name: 'reblog-mcp', version: '1.0.0' });
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual(expect.arrayContaining(['list_projects', 'list_articles', 'get_article']));
    const result = await client.callTool({ name: 'list_projects', arguments: {} });
    expect(toolJson(result).items).toHaveLength(1);
    expect(result.structuredContent).toEqual(toolJson(result));
    const articles = await client.callTool({ name: 'list_articles', arguments: { status: 'draft', page_size: 5 } });
    expect(toolJson(articles).pagination).toEqual({ total: 0, page: 1, page_size: 5, pages: 0 });
    await client.close();
  });

  it('refuses an object for a scalar', async () => {
    const tenant = await createTenant(t);
    const res = await rpc(t, tenant.key, {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'get_article', arguments: { handle: { $ne: null } } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Invalid value for "handle": expected a string.' } });
  });
});
