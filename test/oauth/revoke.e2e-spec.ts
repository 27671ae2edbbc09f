import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { eventually, startInstances, type TestDatabase } from '../support/database.js';
import { rpc } from '../support/mcp-client.js';
import { connectByOAuth, consentingPerson, newClient, REAL_BODIES, tokenRequest } from '../support/oauth.js';
import type { TestApp } from '../support/test-app.js';

// spec/oauth.md "Tokens": POST /oauth/revoke (RFC 7009), on two instances sharing one database.
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('POST /oauth/revoke', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let client: Awaited<ReturnType<typeof newClient>>;

  beforeAll(async () => {
    const env = { OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' };
    ({ db, apps: [a, b] } = await startInstances(env, env));
    person = await consentingPerson(a, ['editor']);
    client = await newClient(a);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const connect = (who: { client_id: string; client_secret?: string; redirect_uris: string[] } = client) =>
    connectByOAuth(a, { client: who, session: person.session, projects: [{ project_id: person.projectIds[0], role: 'editor' }], scopes: ['read'] });
  const revoke = (t: TestApp, fields: Record<string, string>) => t.http.post('/oauth/revoke').type('form').send(fields);
  const grantOf = async (token: string) =>
    (await a.app.get(DataSource).query(`SELECT c.* FROM credentials c JOIN oauth_tokens t ON t.credential_id = c.id WHERE t.token_hash = $1`, [hashSecret(token)]))[0];

  it.each(['access_token', 'refresh_token'] as const)('the %s revokes the whole grant (user): 200 {}, and every instance refuses it at once', async (which) => {
    const pair = await connect();
    // Both instances have the principal cached.
    expect((await rpc(a, pair.access_token, PING)).status).toBe(200);
    expect((await rpc(b, pair.access_token, PING)).status).toBe(200);
    const res = await revoke(a, { token: pair[which], client_id: client.client_id, token_type_hint: which });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await grantOf(pair.access_token)).toMatchObject({ revoked_at: expect.any(Date), revoked_reason: 'user' });
    expect((await rpc(a, pair.access_token, PING)).status).toBe(401);
    // The other instance is told through Postgres; it never waits out its cache.
    await eventually(() => rpc(b, pair.access_token, PING), (r) => r.status === 401, 2_000, 50);
    const refreshed = await tokenRequest(b, { grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: client.client_id });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('an unknown token also answers 200 {}', async () => {
    for (const token of ['rbg_' + 'q'.repeat(43), 'anything']) {
      const res = await revoke(a, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
    }
  });

  it('without client_id, the token alone revokes', async () => {
    const pair = await connect();
    expect((await revoke(b, { token: pair.refresh_token })).status).toBe(200);
    expect((await grantOf(pair.access_token)).revoked_reason).toBe('user');
  });

  it("another client's token: 200 {} and nothing revoked", async () => {
    const pair = await connect();
    const other = await newClient(a);
    expect((await revoke(a, { token: pair.access_token, client_id: other.client_id })).body).toEqual({});
    expect((await grantOf(pair.access_token)).revoked_at).toBeNull();
  });

  it('a confidential client must authenticate right: a wrong secret is 401 invalid_client and revokes nothing', async () => {
    const claude = (await a.http.post('/oauth/register').send(REAL_BODIES.claude)).body;
    const pair = await connect(claude);
    const wrong = await revoke(a, { token: pair.access_token, client_id: claude.client_id, client_secret: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect((await grantOf(pair.access_token)).revoked_at).toBeNull();
    expect((await revoke(a, { token: pair.access_token, client_id: claude.client_id, client_secret: claude.client_secret })).status).toBe(200);
    expect((await grantOf(pair.access_token)).revoked_reason).toBe('user');
  });

  it('no token: 400 invalid_request', async () => {
    const res = await revoke(a, { client_id: client.client_id });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('revoking twice keeps the first reason', async () => {
    const pair = await connect();
    await revoke(a, { token: pair.access_token });
    await revoke(a, { token: pair.refresh_token });
    expect((await grantOf(pair.access_token)).revoked_reason).toBe('user');
  });
});
