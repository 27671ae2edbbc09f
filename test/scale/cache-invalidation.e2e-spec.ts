import { PRINCIPAL_TTL_MS } from '../../src/auth/principal.resolver.js';
import { eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, createTenant } from '../support/fixtures.js';
import { initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/**
 * What one instance changes reaches the caches of the others at once (through PostgreSQL
 * NOTIFY), not when their entries expire: each check below waits at most `SOON`, well under the
 * cache lifetimes (principals 3 s, sessions 2 s), so it fails if the change is only picked up on expiry.
 */
const SOON = 1_000;

describe('cache invalidation across instances', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
  });
  afterAll(() => db?.drop());

  const list = (t: TestApp, key: string, headers: Record<string, string> = {}) => rpc(t, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
  const toolNames = (res: { body: any }) => (res.body.result.tools as { name: string }[]).map((tool) => tool.name);

  it('an API key revoked on one instance is refused by the other at once', async () => {
    expect(PRINCIPAL_TTL_MS).toBeGreaterThanOrEqual(3 * SOON);
    const tenant = await createTenant(a);
    expect((await list(b, tenant.key)).status).toBe(200); // now cached by b
    await admin(a, 'delete', `/admin/v1/api-keys/${tenant.keyId}`, undefined, 204);
    expect((await list(a, tenant.key)).status).toBe(401);
    const refused = await eventually(
      () => list(b, tenant.key),
      (res) => res.status === 401,
      SOON,
      20,
    );
    expect(refused.body.error.message).toMatch(/revoked/);
  });

  it('a tool disabled in a project on one instance leaves the other’s catalogue at once', async () => {
    const tenant = await createTenant(a);
    expect(toolNames(await list(b, tenant.key))).toContain('delete_article');
    await admin(a, 'patch', `/admin/v1/projects/${tenant.projectIds[0]}`, { disabled_tools: ['delete_article'] }, 200);
    await eventually(
      () => list(b, tenant.key),
      (res) => !toolNames(res).includes('delete_article'),
      SOON,
      20,
    );
  });

  it('a session ended on one instance is unknown to the other at once', async () => {
    const tenant = await createTenant(a);
    const headers = sessionHeaders((await initSession(a, tenant.key)).sessionId);
    expect((await list(b, tenant.key, headers)).status).toBe(200); // now cached by b
    const ended = await a.http.delete('/mcp').set('Authorization', `Bearer ${tenant.key}`).set(headers);
    expect(ended.status).toBe(204);
    await eventually(
      () => list(b, tenant.key, headers),
      (res) => res.status === 404,
      SOON,
      20,
    );
  });

  it('after its LISTEN connection is cut, an instance listens again, and drops what it may have missed meanwhile', async () => {
    const listeners = () =>
      withClient(db.url, async (c) =>
        Number(
          (await c.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'reblog-mcp-listen' AND datname = current_database()`)).rows[0].n,
        ),
      );
    expect(await listeners()).toBe(2);
    const missed = await createTenant(a);
    const later = await createTenant(a);
    expect((await list(b, missed.key)).status).toBe(200); // cached by b, for 3 s
    expect((await list(b, later.key)).status).toBe(200);

    await withClient(db.url, (c) =>
      c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'reblog-mcp-listen' AND datname = current_database()`),
    );
    await eventually(listeners, (n) => n === 0, SOON, 10);
    // Revoked while nobody listens: b never hears of it, and must not serve it until its entry expires.
    await admin(a, 'delete', `/admin/v1/api-keys/${missed.keyId}`, undefined, 204);
    await eventually(listeners, (n) => n === 2, 5_000, 50);
    await eventually(
      () => list(b, missed.key),
      (res) => res.status === 401,
      SOON,
      20,
    );

    // Listening again: a revocation now reaches b at once.
    expect((await list(b, later.key)).status).toBe(200);
    await admin(a, 'delete', `/admin/v1/api-keys/${later.keyId}`, undefined, 204);
    await eventually(
      () => list(b, later.key),
      (res) => res.status === 401,
      SOON,
      20,
    );
  });
});
