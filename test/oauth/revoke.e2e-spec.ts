import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { eventually, startInstances, type TestDatabase } from '../support/database.js';
import { rpc } from '../support/mcp-client.js';
import { authorizeCode, connectByOAuth, consentingPerson, newClient, REAL_BODIES, tokenRequest } from '../support/oauth.js';
import type { TestApp } from '../support/test-app.js';

// docs/oauth.md#revoke: POST /oauth/revoke (RFC 7009), on two instances sharing one database.
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('POST /oauth/revoke', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let client: Awaited<ReturnType<typeof newClient>>;

  beforeAll(async () => {
    const env = { OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' };
    ({
      db,
      apps: [a, b],
    } = await startInstances(env, env));
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
    (
      await a.app
        .get(DataSource)
        .query(`SELECT c.* FROM credentials c JOIN oauth_tokens t ON t.credential_id = c.id WHERE t.token_hash = $1`, [hashSecret(token)])
    )[0];

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
    await eventually(
      () => rpc(b, pair.access_token, PING),
      (r) => r.status === 401,
      2_000,
      50,
    );
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

  describe('a confidential client authenticates as at the token endpoint, by its registered method (RFC 7009 §2.1)', () => {
    const basicHeader = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    const revokeBasic = (fields: Record<string, string>, id: string, secret: string) =>
      a.http.post('/oauth/revoke').type('form').set('Authorization', basicHeader(id, secret)).send(fields);

    /** 401 invalid_client, with the Basic challenge exactly when the request tried Basic, and the grant still live. */
    async function expectRefused(res: { status: number; body: any; headers: Record<string, string> }, token: string, triedBasic: boolean) {
      expect({ status: res.status, error: res.body.error, cacheControl: res.headers['cache-control'] }).toEqual({
        status: 401,
        error: 'invalid_client',
        cacheControl: 'no-store',
      });
      expect(res.body.error_description).toEqual(expect.any(String));
      if (triedBasic) expect(res.headers['www-authenticate']).toMatch(/^Basic realm="reblog"/);
      else expect(res.headers['www-authenticate']).toBeUndefined();
      expect((await grantOf(token)).revoked_at).toBeNull();
      expect((await rpc(a, token, PING)).status).toBe(200);
    }

    let post: { client_id: string; client_secret: string; redirect_uris: string[] };
    let basic: Awaited<ReturnType<typeof newClient>>;
    beforeAll(async () => {
      post = (await a.http.post('/oauth/register').send(REAL_BODIES.claude)).body;
      basic = await newClient(a, { auth: 'client_secret_basic' });
    });
    const connectBasic = async () => {
      const c = await authorizeCode(a, {
        client: basic,
        session: person.session,
        projects: [{ project_id: person.projectIds[0], role: 'editor' }],
        scopes: ['read'],
      });
      const res = await tokenRequest(
        a,
        { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirect_uri },
        { id: basic.client_id, secret: basic.client_secret! },
      );
      expect(res.status).toBe(200);
      return res.body as { access_token: string; refresh_token: string };
    };

    it.each(['access_token', 'refresh_token'] as const)('its %s alone, with no client credentials: 401, nothing revoked', async (which) => {
      const pair = await connect(post);
      await expectRefused(await revoke(a, { token: pair[which] }), pair.access_token, false);
    });

    it('its client_id without the secret: 401, nothing revoked', async () => {
      const pair = await connect(post);
      await expectRefused(await revoke(a, { token: pair.access_token, client_id: post.client_id }), pair.access_token, false);
      await expectRefused(await revoke(a, { token: pair.access_token, client_id: post.client_id, client_secret: '' }), pair.access_token, false);
    });

    it('a client_secret_post client may send its right secret in Basic too: it revokes', async () => {
      const pair = await connect(post);
      const res = await revokeBasic({ token: pair.access_token }, post.client_id, post.client_secret);
      expect(res.status).toBe(200);
      expect((await grantOf(pair.access_token)).revoked_reason).toBe('user');
    });

    it('a client_secret_basic client: a wrong secret or none is 401 and revokes nothing; its right secret in the form or in Basic revokes', async () => {
      const pair = await connectBasic();
      await expectRefused(await revoke(a, { token: pair.refresh_token }), pair.access_token, false);
      await expectRefused(await revoke(a, { token: pair.access_token, client_id: basic.client_id }), pair.access_token, false);
      await expectRefused(await revokeBasic({ token: pair.access_token }, basic.client_id, 'wrong'), pair.access_token, true);
      const res = await revokeBasic({ token: pair.refresh_token }, basic.client_id, basic.client_secret!);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
      expect((await grantOf(pair.access_token)).revoked_reason).toBe('user');
      const other = await connectBasic();
      expect((await revoke(a, { token: other.access_token, client_id: basic.client_id, client_secret: basic.client_secret! })).status).toBe(200);
      expect((await grantOf(other.access_token)).revoked_reason).toBe('user');
    });

    it("an authenticated confidential client naming another client's token: 200 {} and nothing revoked", async () => {
      const pair = await connect();
      expect((await revoke(a, { token: pair.access_token, client_id: post.client_id, client_secret: post.client_secret })).body).toEqual({});
      expect((await grantOf(pair.access_token)).revoked_at).toBeNull();
    });

    it('an unknown client_id: 401 invalid_client, as at the token endpoint; nothing revoked', async () => {
      const pair = await connect();
      const res = await revoke(a, { token: pair.access_token, client_id: 'nobody' });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      expect((await grantOf(pair.access_token)).revoked_at).toBeNull();
    });

    it('a public client sending a secret: 401, nothing revoked', async () => {
      const pair = await connect();
      const res = await revoke(a, { token: pair.access_token, client_id: client.client_id, client_secret: 'rbcs_made_up' });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      expect((await grantOf(pair.access_token)).revoked_at).toBeNull();
    });
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
