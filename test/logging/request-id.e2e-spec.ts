import { createDatabase, withClient, type TestDatabase } from '../support/database.js';
import { activity, createTenant, type Tenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import type { ServerProcess } from '../support/server-process.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * X-Request-Id: a gateway's id is kept (else one is made), echoed in the answer, written on the
 * request's activity entry and on every log line made while the request is served. The server runs as
 * `npm start` runs it, so its real log output is read.
 */
describe('X-Request-Id', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let tenant: Tenant;

  beforeAll(async () => {
    db = await createDatabase();
    server = await db.server({ LOG_LEVEL: 'info' });
    tenant = await createTenant(server);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it("keeps the gateway's id: in the answer and on the activity entry", async () => {
    const res = await rpc(server, tenant.key, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'X-Request-Id': 'gw-7f3a-0001' });
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('gw-7f3a-0001');
    const [entry] = await activity(server, tenant.accountId);
    expect(entry).toMatchObject({ method: 'tools/list', request_id: 'gw-7f3a-0001' });
  });

  it('makes one when the gateway sends none, or one that is not printable ASCII of at most 200 characters', async () => {
    const other = await createTenant(server);
    const none = await rpc(server, other.key, { jsonrpc: '2.0', id: 1, method: 'ping' });
    const spaced = await rpc(server, other.key, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'X-Request-Id': 'has a space' });
    const long = await rpc(server, other.key, { jsonrpc: '2.0', id: 3, method: 'ping' }, { 'X-Request-Id': 'x'.repeat(201) });
    const made = [none, spaced, long].map((r) => r.headers['x-request-id'] as string);
    for (const id of made) expect(id).toMatch(UUID);
    expect(new Set(made).size).toBe(3);
    const entries = await activity(server, other.accountId);
    expect(entries.map((e: { request_id: string }) => e.request_id).sort()).toEqual([...made].sort());
  });

  it('is echoed on the other routes too', async () => {
    const res = await server.http.get('/healthz').set('X-Request-Id', 'gw-health-1');
    expect(res.headers['x-request-id']).toBe('gw-health-1');
  });

  it('is on the log lines of the request that made them', async () => {
    await withClient(db.url, (c) => c.query(`ALTER TABLE articles RENAME TO articles_away`));
    try {
      const res = await rpc(
        server,
        tenant.key,
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_articles', arguments: {} } },
        { 'X-Request-Id': 'gw-logged-42' },
      );
      expect(res.headers['x-request-id']).toBe('gw-logged-42');
    } finally {
      await withClient(db.url, (c) => c.query(`ALTER TABLE articles_away RENAME TO articles`));
    }
    await server.waitFor(/relation \\?"articles\\?" does not exist/, 10_000);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => /relation \\?"articles\\?" does not exist/.test(line));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ requestId: 'gw-logged-42' });
  });
});
