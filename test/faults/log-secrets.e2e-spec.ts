import { createDatabase, withClient, type TestDatabase } from '../support/database.js';
import { admin, createTenant, MISSING_ID, type Tenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import type { ServerProcess } from '../support/server-process.js';

/**
 * Secrets never reach the logs. A log line made while a request is served carries the request
 * (nestjs-pino binds it), headers included; a 5xx is where such lines are written. Each surface is
 * made to fail for real (its table renamed away under the running server) with every kind of secret
 * in the request, and the process's whole output is searched for them.
 */
describe('no secret in the logs of a failing request', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let tenant: Tenant;
  const COOKIE = 'session=cookie-secret-5f1c9e';
  const SECRET_HEADERS = { 'X-Api-Token': 'header-token-7d2a41', 'X-Client-Secret': 'header-secret-93bb0c' };

  beforeAll(async () => {
    db = await createDatabase();
    server = await db.server({ LOG_LEVEL: 'info' });
    tenant = await createTenant(server);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  /** Runs `fn` while `table` is missing, so every statement on it fails inside the server. */
  async function without(table: string, fn: () => Promise<void>): Promise<void> {
    await withClient(db.url, (c) => c.query(`ALTER TABLE ${table} RENAME TO ${table}_away`));
    try {
      await fn();
    } finally {
      await withClient(db.url, (c) => c.query(`ALTER TABLE ${table}_away RENAME TO ${table}`));
    }
  }

  function expectNoSecret(secrets: string[]): void {
    const output = server.output();
    for (const secret of [...secrets, COOKIE.split('=')[1], ...Object.values(SECRET_HEADERS)]) expect(output).not.toContain(secret);
  }

  it('/admin/v1: a 500 is logged with its request, without the admin token, cookies or *token*/*secret* headers', async () => {
    await without('accounts', async () => {
      const res = await server.http
        .get(`/admin/v1/accounts/${tenant.accountId}`)
        .set('Authorization', `Bearer ${server.adminToken}`)
        .set('Cookie', COOKIE)
        .set(SECRET_HEADERS);
      expect(res.status).toBe(500);
    });
    await server.waitFor(missing('accounts'), 10_000);
    expect(server.output()).toMatch(/"url":"\/admin\/v1\/accounts\//); // the request is still described
    expectNoSecret([server.adminToken]);
  });

  it('/media: a 500 is logged without the API key, in the header or the query string', async () => {
    await without('media', async () => {
      // The key in the query string too (ignored for authentication, but it stands in the logged URL).
      const res = await server.http
        .get(`/media/${MISSING_ID}?access_token=${tenant.key}&api_key=${tenant.key}`)
        .set('Authorization', `Bearer ${tenant.key}`)
        .set('Cookie', COOKIE)
        .set(SECRET_HEADERS);
      expect(res.status).toBe(500);
    });
    await server.waitFor(missing('media'), 10_000);
    expectNoSecret([tenant.key, server.adminToken]);
  });

  it('/mcp: an internal error of a tool is logged without the API key', async () => {
    await without('articles', async () => {
      const res = await rpc(
        server,
        tenant.key,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_articles', arguments: {} } },
        { Cookie: COOKIE, ...SECRET_HEADERS },
      );
      expect(res.body.error?.code ?? res.body.result?.isError).toBeTruthy();
    });
    await server.waitFor(missing('articles'), 10_000);
    expectNoSecret([tenant.key, server.adminToken]);
  });

  it('a grant made by the admin API: its access token is in the answer, never in the log', async () => {
    const grant = await admin(server, 'post', `/admin/v1/accounts/${tenant.accountId}/grants`, { client_name: 'logs', scopes: ['read'], projects: [] }, 201);
    await without('credentials', async () => {
      const res = await rpc(server, grant.access_token, { jsonrpc: '2.0', id: 2, method: 'ping' }, { Cookie: COOKIE });
      expect(res.body.error.code).toBe(-32603);
    });
    await server.waitFor(missing('credentials'), 10_000);
    expectNoSecret([grant.access_token, tenant.key]);
  });
});

/** The database's complaint about a missing table, as it stands in a JSON log line or a plain one. */
const missing = (table: string) => new RegExp(`relation \\\\?"${table}\\\\?" does not exist`);
