import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { SessionsService } from '../../src/mcp/sessions.service.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

async function sessionRows(t: TestApp, ids: string[]): Promise<{ id: string; last_used_at: Date; version: string }[]> {
  return t.app.get(DataSource).query(`SELECT id, last_used_at, xmin::text AS version FROM mcp_sessions WHERE id = ANY($1)`, [ids]);
}

describe('MCP sessions expire after SESSION_IDLE_TTL_S idle and are purged', () => {
  let t: TestApp;
  let tenant: Tenant;
  const auth = () => ({ Authorization: `Bearer ${tenant.key}` });

  beforeAll(async () => {
    t = await startTestApp({ SESSION_IDLE_TTL_S: '2' });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 404 (-32001) to a session idle past the TTL, on POST, GET and DELETE, and keeps one in use', async () => {
    const idle = (await initSession(t, tenant.key)).sessionId;
    const active = (await initSession(t, tenant.key)).sessionId;
    // Both in use once (and so in this instance's session cache).
    expect((await rpc(t, tenant.key, PING, sessionHeaders(idle))).status).toBe(200);
    const until = Date.now() + 2_600;
    while (Date.now() < until) {
      expect((await rpc(t, tenant.key, PING, sessionHeaders(active))).status).toBe(200);
      await sleep(250);
    }
    const post = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'late', method: 'ping' }, sessionHeaders(idle));
    expect(post.status).toBe(404);
    expect(post.body).toEqual({
      jsonrpc: '2.0',
      id: 'late',
      error: {
        code: -32001,
        message: expect.stringMatching(/^Session not found: it ended, expired or belongs to another credential\. Initialize a new session\.$/),
      },
    });
    expect((await t.http.get('/mcp').set(auth()).set(sessionHeaders(idle))).status).toBe(404);
    expect((await t.http.delete('/mcp').set(auth()).set(sessionHeaders(idle))).status).toBe(404);
    expect((await rpc(t, tenant.key, PING, sessionHeaders(active))).status).toBe(200);
  });

  it('purges expired and ended sessions, in batches, by Postgres time, and keeps the live ones', async () => {
    const db = t.app.get(DataSource);
    const expired = (await initSession(t, tenant.key)).sessionId;
    const ended = (await initSession(t, tenant.key)).sessionId;
    const live = (await initSession(t, tenant.key)).sessionId;
    expect((await t.http.delete('/mcp').set(auth()).set(sessionHeaders(ended))).status).toBe(204);
    // More than one batch of long-idle sessions.
    const credentialId = tenant.keyId;
    await db.query(
      `INSERT INTO mcp_sessions (id, account_id, credential_id, protocol_version, last_used_at)
       SELECT 'old-' || i, $1, $2, '2025-06-18', now() - interval '1 day' FROM generate_series(1, 1200) i`,
      [tenant.accountId, credentialId],
    );
    await db.query(`UPDATE mcp_sessions SET last_used_at = now() - interval '3 seconds' WHERE id = $1`, [expired]);

    // Every instance purges on its own timer too, so this call's count is not asserted exactly: the state is.
    await expect(t.app.get(SessionsService).purgeExpired()).resolves.toEqual(expect.any(Number));
    const left = await sessionRows(t, [expired, ended, live]);
    expect(left.map((r) => r.id)).toEqual([live]);
    const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM mcp_sessions WHERE id LIKE 'old-%'`)) as { n: number }[];
    expect(n).toBe(0);
    expect((await rpc(t, tenant.key, PING, sessionHeaders(live))).status).toBe(200);
  });

  it('two instances purging at once both succeed', async () => {
    const t2 = await startTestApp({ SESSION_IDLE_TTL_S: '2' });
    try {
      const db = t.app.get(DataSource);
      await db.query(
        `INSERT INTO mcp_sessions (id, account_id, credential_id, protocol_version, last_used_at)
         SELECT 'race-' || i, $1, $2, '2025-06-18', now() - interval '1 day' FROM generate_series(1, 1500) i`,
        [tenant.accountId, tenant.keyId],
      );
      const counts = await Promise.all([t.app.get(SessionsService).purgeExpired(), t2.app.get(SessionsService).purgeExpired()]);
      expect(counts[0] + counts[1]).toBeGreaterThanOrEqual(1500);
      const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM mcp_sessions WHERE id LIKE 'race-%'`)) as { n: number }[];
      expect(n).toBe(0);
    } finally {
      await t2.close();
    }
  });
});

describe('MCP session last-used time with the default TTL (24 h)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('is not written on every request: 20 requests in a fresh session leave its row untouched', async () => {
    expect(t.config.sessionIdleTtlS).toBe(86_400);
    const tenant = await createTenant(t);
    const { sessionId } = await initSession(t, tenant.key);
    const [before] = await sessionRows(t, [sessionId]);
    for (let i = 0; i < 20; i++) expect((await rpc(t, tenant.key, PING, sessionHeaders(sessionId))).status).toBe(200);
    const [after] = await sessionRows(t, [sessionId]);
    // xmin changes with any UPDATE of the row.
    expect(after).toEqual(before);
  });

  it('is touched once it is older than a tenth of the TTL, which keeps the session alive', async () => {
    const tenant = await createTenant(t);
    const { sessionId } = await initSession(t, tenant.key);
    const db = t.app.get(DataSource);
    // Used 23 hours ago: past a tenth of the TTL, within the TTL.
    await db.query(`UPDATE mcp_sessions SET last_used_at = now() - interval '23 hours' WHERE id = $1`, [sessionId]);
    expect((await rpc(t, tenant.key, PING, sessionHeaders(sessionId))).status).toBe(200);
    const [row] = await sessionRows(t, [sessionId]);
    expect(Date.now() - new Date(row.last_used_at).getTime()).toBeLessThan(60_000);
  });
});

describe('SESSION_IDLE_TTL_S', () => {
  it.each(['0', '-5', 'soon', '2592001'])('refuses %p with a sentence naming it', (value) => {
    expect(() => loadConfig({ SESSION_IDLE_TTL_S: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SESSION_IDLE_TTL_S: value })).toThrow(/^SESSION_IDLE_TTL_S must be a whole number from 1 to 2592000; got "/);
  });
});
