import { admin, createTenant, MISSING_ID, type Tenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// Express matches routes case-insensitively and with a trailing slash unless told otherwise; /MCP and
// /mcp/ once reached the MCP controller past its body middleware and answered 500. Every path is now
// matched exactly: any other spelling is the JSON 404 of an unknown route, never a 5xx.
describe('paths are matched exactly', () => {
  let t: TestApp;
  let tenant: Tenant;
  let accountId: string;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    accountId = (await admin(t, 'post', '/admin/v1/accounts', { name: 'Paths', owner_email: 'paths@example.com' }, 201)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const expectNotFound = (res: { status: number; headers: Record<string, string>; body: any }) => {
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.error.code).toBe('not_found');
  };

  it.each(['/MCP', '/Mcp', '/mcp/', '/MCP/', '/mcp//', '/mcp/x'])(
    'POST %s is 404, with or without a body; a body that is not JSON is 400 as on any REST path',
    async (path) => {
      const post = (body: string) =>
        t.http
          .post(path)
          .set('Authorization', `Bearer ${tenant.key}`)
          .set('Content-Type', 'application/json')
          .set('Accept', 'application/json, text/event-stream')
          .send(body);
      expectNotFound(await post(PING));
      expectNotFound(await post(''));
      const garbage = await post('{"not json');
      expect(garbage.status).toBe(400);
      expect(garbage.body.error.code).toBe('invalid_json');
    },
  );

  it.each(['get', 'delete'] as const)('%s /MCP and /mcp/ are 404', async (method) => {
    for (const path of ['/MCP', '/mcp/']) expectNotFound(await t.http[method](path).set('Authorization', `Bearer ${tenant.key}`));
  });

  // /mcp takes nearly every request: the first layer of Express's stack serves it
  // (docs/architecture.md#the-mcp-pipeline), and no route of it is left behind to be matched again.
  it('/mcp is served by the first layer: no /mcp route is left in the stack', async () => {
    const stack = (t.app.getHttpAdapter().getInstance() as { router: { stack: { route?: { path: string } }[] } }).router.stack;
    expect(stack.filter((layer) => layer.route?.path === '/mcp')).toEqual([]);
    // The first layer answers /mcp, every method of it, before anything behind it runs (no X-Powered-By, no pino).
    for (const method of ['post', 'get', 'delete', 'put', 'patch', 'options', 'head'] as const) {
      const res = await t.http[method]('/mcp').set('Authorization', `Bearer ${tenant.key}`);
      expect(res.status).not.toBe(404);
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  it('the exact /mcp still answers', async () => {
    const res = await rpc(t, tenant.key, PING);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it.each([
    ['get', '/Admin/v1/accounts/:account'],
    ['get', '/admin/V1/accounts/:account'],
    ['get', '/admin/v1/accounts/:account/'],
    ['get', '/admin/v1/accounts/:account/projects/'],
    ['post', '/admin/v1/accounts/'],
    ['get', '/HEALTHZ'],
    ['get', '/healthz/'],
    ['get', `/Media/${MISSING_ID}`],
    ['get', `/media/${MISSING_ID}/`],
  ] as const)('%s %s is 404', async (method, path) => {
    const res = await t.http[method](path.replace(':account', accountId))
      .set('Authorization', `Bearer ${t.adminToken}`)
      .send(method === 'post' ? { name: 'x', owner_email: 'x@example.com' } : undefined);
    expectNotFound(res);
  });

  it('GET /.well-known/OAuth-Protected-Resource is 404, in the OAuth error shape of every /.well-known answer', async () => {
    const res = await t.http.get('/.well-known/OAuth-Protected-Resource');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
  });

  it('the exact admin, health and metadata paths still answer', async () => {
    await admin(t, 'get', `/admin/v1/accounts/${accountId}`, undefined, 200);
    await admin(t, 'get', `/admin/v1/accounts/${accountId}/projects`, undefined, 200);
    expect((await t.http.get('/healthz')).status).toBe(200);
    expect((await t.http.get('/.well-known/oauth-protected-resource')).status).toBe(200);
    expect((await t.http.get('/admin/v1/openapi.json')).status).toBe(200);
  });

  it('the docs UI and every script and stylesheet it names still load', async () => {
    const docs = await t.http.get('/admin/v1/docs').redirects(1);
    expect(docs.status).toBe(200);
    const page = new URL(docs.redirects.at(-1) ?? `${t.baseUrl}/admin/v1/docs`);
    const assets = [...docs.text.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => new URL(m[1], page).pathname);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect({ asset, status: (await t.http.get(asset)).status }).toEqual({ asset, status: 200 });
  });
});
