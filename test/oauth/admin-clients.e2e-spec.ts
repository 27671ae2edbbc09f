import { DataSource } from 'typeorm';
import { createDatabase, type TestDatabase } from '../support/database.js';
import { admin, ISO, newGrant, walk } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { authorizeCode, connectByOAuth, consentingPerson, REAL_BODIES, tokenRequest } from '../support/oauth.js';
import type { TestApp } from '../support/test-app.js';

// docs/admin-api.md#oauth-clients: GET and DELETE /admin/v1/oauth-clients, on a database of
// this file's own so the list holds exactly what it made.
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('/admin/v1/oauth-clients', () => {
  let db: TestDatabase;
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    person = await consentingPerson(t, ['editor']);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const register = async (body: object) => (await t.http.post('/oauth/register').send(body)).body;
  const connect = (client: { client_id: string; client_secret?: string; redirect_uris: string[] }) =>
    connectByOAuth(t, { client, session: person.session, projects: [{ project_id: person.projectIds[0], role: 'editor' }], scopes: ['read'] });

  it('lists every client, newest first, in the documented shape, paged like every admin list', async () => {
    const made = [];
    for (const body of [REAL_BODIES.cursor, REAL_BODIES.claude, REAL_BODIES.chatgpt, REAL_BODIES.loopback]) made.push(await register(body));
    await connect(made[2]);
    const pages = await walk(t, '/admin/v1/oauth-clients', 3);
    expect(pages.map((p) => p.items.length)).toEqual([3, 1]);
    const items = pages.flatMap((p) => p.items);
    expect(items.map((i) => i.id)).toEqual(made.map((m) => m.client_id).reverse());
    expect(items[1]).toEqual({
      id: made[2].client_id,
      client_name: 'ChatGPT',
      redirect_uris: REAL_BODIES.chatgpt.redirect_uris,
      source: 'dcr',
      created_at: expect.stringMatching(ISO),
      last_used_at: expect.stringMatching(ISO),
    });
    expect(items[0].last_used_at).toBeNull();
    expect(JSON.stringify(items)).not.toContain('secret');
  });

  it('refuses a bad limit or cursor (400), and a missing admin token (401)', async () => {
    for (const query of ['limit=0', 'limit=201', 'cursor=bm90LWEtY3Vyc29y', 'cursor=' + Buffer.from('["1 OR 1=1","x"]').toString('base64url')]) {
      const res = await t.http.get(`/admin/v1/oauth-clients?${query}`).set('Authorization', `Bearer ${t.adminToken}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.error.code).toBe('validation_failed');
    }
    expect((await t.http.get('/admin/v1/oauth-clients')).status).toBe(401);
    expect((await t.http.delete('/admin/v1/oauth-clients/x')).status).toBe(401);
  });

  it('DELETE revokes every grant of the client (client_deleted) at once, and the client is gone', async () => {
    const claude = await register(REAL_BODIES.claude);
    const other = await register(REAL_BODIES.cursor);
    const grants = [await connect(claude), await connect(claude)];
    const kept = await connect(other);
    const adminGrant = await newGrant(t, person.accountId, [{ project_id: person.projectIds[0], role: 'viewer' }], ['read']);
    for (const g of [...grants, kept]) expect((await rpc(t, g.access_token, PING)).status).toBe(200);
    // A pending code of the client goes with it.
    const pending = await authorizeCode(t, {
      client: claude,
      session: person.session,
      projects: [{ project_id: person.projectIds[0], role: 'editor' }],
      scopes: ['read'],
    });

    expect(await admin(t, 'delete', `/admin/v1/oauth-clients/${encodeURIComponent(claude.client_id)}`, undefined, 204)).toEqual({});
    const rows = await t.app.get(DataSource).query(`SELECT revoked_reason FROM credentials WHERE client_id = $1`, [claude.client_id]);
    expect(rows).toEqual([{ revoked_reason: 'client_deleted' }, { revoked_reason: 'client_deleted' }]);
    for (const g of grants) {
      const res = await rpc(t, g.access_token, PING);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    }
    expect((await rpc(t, kept.access_token, PING)).status).toBe(200);
    expect((await rpc(t, adminGrant.token, PING)).status).toBe(200);
    const refreshed = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: grants[0].refresh_token,
      client_id: claude.client_id,
      client_secret: claude.client_secret,
    });
    expect(refreshed.status).toBe(401);
    expect(refreshed.body.error).toBe('invalid_client');
    expect((await t.app.get(DataSource).query(`SELECT 1 FROM oauth_codes WHERE client_id = $1`, [claude.client_id])).length).toBe(0);
    expect(pending.code).toBeTruthy();
    const list = (await walk(t, '/admin/v1/oauth-clients', 200)).flatMap((p) => p.items);
    expect(list.map((i) => i.id)).not.toContain(claude.client_id);
  });

  it('a metadata-document client is named by its URL, percent-encoded as one segment', async () => {
    const url = 'https://client.example.com/oauth/metadata.json';
    await t.app
      .get(DataSource)
      .query(`INSERT INTO oauth_clients (id, source, client_name, redirect_uris) VALUES ($1, 'cimd', 'Doc client', $2)`, [
        url,
        ['https://client.example.com/cb'],
      ]);
    const listed = (await walk(t, '/admin/v1/oauth-clients', 200)).flatMap((p) => p.items).find((i) => i.id === url);
    expect(listed).toMatchObject({ source: 'cimd', client_name: 'Doc client' });
    await admin(t, 'delete', `/admin/v1/oauth-clients/${encodeURIComponent(url)}`, undefined, 204);
    expect((await t.app.get(DataSource).query(`SELECT 1 FROM oauth_clients WHERE id = $1`, [url])).length).toBe(0);
  });

  it('the OpenAPI document lists both endpoints, and nothing of /oauth or /.well-known', async () => {
    const doc = (await t.http.get('/admin/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/admin/v1/oauth-clients'])).toEqual(['get']);
    expect(Object.keys(doc.paths['/admin/v1/oauth-clients/{client_id}'])).toEqual(['delete']);
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/admin/v1/'))).toEqual([]);
  });

  it('an unknown client is 404', async () => {
    const res = await t.http.delete('/admin/v1/oauth-clients/no-such-client').set('Authorization', `Bearer ${t.adminToken}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
