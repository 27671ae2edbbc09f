import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { rpc } from '../support/mcp-client.js';
import { connectByOAuth, consentingPerson, newClient, tokenRequest } from '../support/oauth.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/oauth.md#tokens: grant_type=refresh_token, rotation with a grace for parallel refreshes, reuse
// after it revokes the grant, narrowing, idle expiry. All of it in one transaction with row locks.
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };
const GRACE_S = 120;

describe('POST /oauth/token: refresh_token', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let client: Awaited<ReturnType<typeof newClient>>;

  beforeAll(async () => {
    t = await startTestApp({
      OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000',
      OAUTH_ACCESS_TOKEN_TTL_S: '600',
      OAUTH_REFRESH_TOKEN_TTL_S: '3600',
      OAUTH_REFRESH_REUSE_GRACE_S: String(GRACE_S),
    });
    person = await consentingPerson(t, ['editor', 'viewer']);
    client = await newClient(t, { client_name: 'Refresh client' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const db = () => t.app.get(DataSource);
  const connect = (scopes = ['read', 'write', 'delete']) =>
    connectByOAuth(t, { client, session: person.session, projects: [{ project_id: person.projectIds[0], role: 'editor' }], scopes });
  const refresh = (token: string, extra: Record<string, string | undefined> = {}) =>
    tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: client.client_id, ...extra });
  const grantOf = async (token: string) =>
    (await db().query(`SELECT c.* FROM credentials c JOIN oauth_tokens t ON t.credential_id = c.id WHERE t.token_hash = $1`, [hashSecret(token)]))[0];
  const tokenRow = async (token: string) => (await db().query(`SELECT * FROM oauth_tokens WHERE token_hash = $1`, [hashSecret(token)]))[0];
  const works = async (access: string) => (await rpc(t, access, PING)).status === 200;
  function expectError(res: { status: number; body: any }, status: number, error: string) {
    expect({ status: res.status, error: res.body.error }).toEqual({ status, error });
  }

  it('rotates: a new pair, the same grant, projects and scopes; the used refresh token is marked rotated', async () => {
    const first = await connect();
    const res = await refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^rbg_/),
      token_type: 'Bearer',
      expires_in: 600,
      refresh_token: expect.stringMatching(/^rbr_/),
      scope: 'read write delete',
    });
    expect(res.body.access_token).not.toBe(first.access_token);
    expect(res.body.refresh_token).not.toBe(first.refresh_token);
    expect((await grantOf(res.body.access_token)).id).toBe((await grantOf(first.access_token)).id);
    expect((await tokenRow(first.refresh_token)).rotated_at).toEqual(expect.any(Date));
    expect((await tokenRow(res.body.refresh_token)).rotated_at).toBeNull();
    expect(await works(res.body.access_token)).toBe(true);
    // The earlier access token lives out its own lifetime.
    expect(await works(first.access_token)).toBe(true);
    expect((await refresh(res.body.refresh_token)).status).toBe(200);
  });

  it('the new refresh token expires OAUTH_REFRESH_TOKEN_TTL_S after it is issued (idle expiry); an expired one is invalid_grant', async () => {
    const first = await connect();
    const next = (await refresh(first.refresh_token)).body;
    const [row] = await db().query(`SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM oauth_tokens WHERE token_hash = $1`, [
      hashSecret(next.refresh_token),
    ]);
    expect(row.ttl).toBe(3600);
    await db().query(`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [hashSecret(next.refresh_token)]);
    expectError(await refresh(next.refresh_token), 400, 'invalid_grant');
  });

  it('an expired access token is 401 invalid_token; a refresh brings a working one', async () => {
    const first = await connect();
    await db().query(`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [hashSecret(first.access_token)]);
    const res = await rpc(t, first.access_token, PING);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(await works((await refresh(first.refresh_token)).body.access_token)).toBe(true);
  });

  describe('parallel refreshes and reuse', () => {
    it('two refreshes with one token at once both work, each with a pair of its own that keeps working', async () => {
      const first = await connect();
      const [a, b] = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.refresh_token).not.toBe(b.body.refresh_token);
      expect(a.body.access_token).not.toBe(b.body.access_token);
      for (const pair of [a.body, b.body]) expect(await works(pair.access_token)).toBe(true);
      const [a2, b2] = await Promise.all([refresh(a.body.refresh_token), refresh(b.body.refresh_token)]);
      expect([a2.status, b2.status]).toEqual([200, 200]);
      expect((await grantOf(a2.body.access_token)).revoked_at).toBeNull();
    });

    it('within the grace, a rotated token gets a fresh pair and the winner’s pair stays valid', async () => {
      const first = await connect();
      const winner = (await refresh(first.refresh_token)).body;
      const late = await refresh(first.refresh_token);
      expect(late.status).toBe(200);
      expect(late.body.refresh_token).not.toBe(winner.refresh_token);
      expect(await works(winner.access_token)).toBe(true);
      expect((await refresh(winner.refresh_token)).status).toBe(200);
      expect((await refresh(late.body.refresh_token)).status).toBe(200);
    });

    it('after the grace, the whole grant is revoked (refresh_token_reuse): every token of it stops working', async () => {
      const first = await connect();
      const winner = (await refresh(first.refresh_token)).body;
      await db().query(`UPDATE oauth_tokens SET rotated_at = now() - make_interval(secs => $2) WHERE token_hash = $1`, [
        hashSecret(first.refresh_token),
        GRACE_S + 1,
      ]);
      expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
      expect(await grantOf(winner.access_token)).toMatchObject({ revoked_at: expect.any(Date), revoked_reason: 'refresh_token_reuse' });
      const res = await rpc(t, winner.access_token, PING);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
      expect(await works(first.access_token)).toBe(false);
      expectError(await refresh(winner.refresh_token), 400, 'invalid_grant');
    });

    it('just inside the grace still works', async () => {
      const first = await connect();
      await refresh(first.refresh_token);
      await db().query(`UPDATE oauth_tokens SET rotated_at = now() - make_interval(secs => $2) WHERE token_hash = $1`, [
        hashSecret(first.refresh_token),
        GRACE_S - 5,
      ]);
      expect((await refresh(first.refresh_token)).status).toBe(200);
    });
  });

  describe('scope', () => {
    it('a narrower scope narrows the grant itself: the answer, the record, later refreshes and the live access tokens', async () => {
      const first = await connect(['read', 'write', 'delete']);
      const tools = async (access: string) => (await rpc(t, access, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).body.result.tools.map((x: any) => x.name);
      expect(await tools(first.access_token)).toContain('create_article');
      const res = await refresh(first.refresh_token, { scope: 'read' });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('read');
      expect((await grantOf(first.access_token)).scopes).toEqual(['read']);
      // Every cached principal was dropped: the earlier access token is narrowed too, at once.
      expect(await tools(first.access_token)).not.toContain('create_article');
      const later = await refresh(res.body.refresh_token);
      expect(later.body.scope).toBe('read');
    });

    it('the same scopes change nothing', async () => {
      const first = await connect(['read', 'write']);
      expect((await refresh(first.refresh_token, { scope: 'write read' })).body.scope).toBe('read write');
    });

    it.each([
      ['a scope the grant does not have', 'read generate'],
      ['an unknown scope', 'read admin'],
    ])('%s is invalid_scope, and the refresh token is not used up', async (_what, scope) => {
      const first = await connect(['read', 'write']);
      expectError(await refresh(first.refresh_token, { scope }), 400, 'invalid_scope');
      expect((await tokenRow(first.refresh_token)).rotated_at).toBeNull();
      expect((await grantOf(first.access_token)).scopes).toEqual(['read', 'write']);
      expect((await refresh(first.refresh_token)).status).toBe(200);
    });
  });

  describe('refusals', () => {
    it('bound to its client: another client presenting it is invalid_grant, and it stays usable', async () => {
      const first = await connect();
      const other = await newClient(t);
      expectError(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: other.client_id }), 400, 'invalid_grant');
      expect((await refresh(first.refresh_token)).status).toBe(200);
    });
    it('an access token is not a refresh token', async () => expectError(await refresh((await connect()).access_token), 400, 'invalid_grant'));
    it('an unknown refresh token', async () => expectError(await refresh('rbr_' + 'z'.repeat(43)), 400, 'invalid_grant'));
    it('no refresh_token', async () => expectError(await refresh(undefined as unknown as string), 400, 'invalid_request'));
    it('a revoked grant', async () => {
      const first = await connect();
      expect((await t.http.post('/oauth/revoke').type('form').send({ token: first.access_token })).status).toBe(200);
      expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
    });
    it('a disabled person: refresh refused, /mcp 401', async () => {
      const someone = await consentingPerson(t, ['viewer']);
      const pair = await connectByOAuth(t, {
        client,
        session: someone.session,
        projects: [{ project_id: someone.projectIds[0], role: 'viewer' }],
        scopes: ['read'],
      });
      await db().query(`UPDATE users SET disabled_at = now() WHERE id = $1`, [someone.user.id]);
      expectError(await refresh(pair.refresh_token), 400, 'invalid_grant');
      expect((await rpc(t, pair.access_token, PING)).status).toBe(401);
    });
  });
});
