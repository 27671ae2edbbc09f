import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { OAuthPurgeService } from '../../src/oauth/oauth-purge.service.js';
import { activity } from '../support/fixtures.js';
import { callOk, rpc } from '../support/mcp-client.js';
import { authorizeCode, consentingPerson, newClient, REAL_BODIES, tokenRequest } from '../support/oauth.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// POST /oauth/token (docs/oauth.md#tokens), grant_type=authorization_code, and the grant it makes.
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('POST /oauth/token: authorization_code', () => {
  let t: TestApp;
  let person: Awaited<ReturnType<typeof consentingPerson>>;
  let client: Awaited<ReturnType<typeof newClient>>;

  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000', OAUTH_ACCESS_TOKEN_TTL_S: '900', OAUTH_REFRESH_TOKEN_TTL_S: '7200' });
    person = await consentingPerson(t, ['editor', 'viewer', 'editor']);
    client = await newClient(t, { client_name: 'Token client', redirect_uris: ['http://127.0.0.1:9999/callback'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  const db = () => t.app.get(DataSource);
  const consented = (
    projects = [
      { project_id: person.projectIds[0], role: 'editor' },
      { project_id: person.projectIds[1], role: 'viewer' },
    ],
    scopes = ['read', 'write'],
    extra = {},
    who = client,
  ) => authorizeCode(t, { client: who, session: person.session, projects, scopes, extra });
  const exchange = (
    c: { code: string; verifier: string; redirect_uri: string },
    extra: Record<string, string | undefined> = {},
    who: { client_id: string } = client,
  ) =>
    tokenRequest(t, {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: c.redirect_uri,
      client_id: who.client_id,
      ...extra,
    });
  const grantOf = async (accessToken: string) =>
    (await db().query(`SELECT c.* FROM credentials c JOIN oauth_tokens t ON t.credential_id = c.id WHERE t.token_hash = $1`, [hashSecret(accessToken)]))[0];

  /** An OAuth error answer. */
  function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, error: string) {
    expect({ status: res.status, error: res.body.error }).toEqual({ status, error });
    expect(res.body.error_description).toEqual(expect.any(String));
    expect(res.headers['cache-control']).toBe('no-store');
  }

  describe('success', () => {
    it('200 with the documented token answer, no-store', async () => {
      const res = await exchange(await consented());
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        access_token: expect.stringMatching(/^rbg_[A-Za-z0-9_-]{43}$/),
        token_type: 'Bearer',
        expires_in: 900,
        refresh_token: expect.stringMatching(/^rbr_[A-Za-z0-9_-]{43}$/),
        scope: 'read write',
      });
    });

    it('makes the grant in the credentials record: type grant, source oauth, user, client, the client name, no secret of its own; tokens as hashes only', async () => {
      const c = await consented();
      const { body } = await exchange(c);
      const grant = await grantOf(body.access_token);
      expect(grant).toMatchObject({
        type: 'grant',
        source: 'oauth',
        account_id: person.accountId,
        user_id: person.user.id,
        client_id: client.client_id,
        name: 'Token client',
        secret_hash: null,
        scopes: ['read', 'write'],
        expires_at: null,
        revoked_at: null,
        revoked_reason: null,
        secret_prefix: body.access_token.slice(0, 12),
      });
      const links = await db().query(`SELECT project_id, role FROM credential_projects WHERE credential_id = $1 ORDER BY role`, [grant.id]);
      expect(links).toEqual([
        { project_id: person.projectIds[0], role: 'editor' },
        { project_id: person.projectIds[1], role: 'viewer' },
      ]);
      const tokens = await db().query(
        `SELECT token_hash, kind, client_id, extract(epoch FROM expires_at - created_at)::int AS ttl FROM oauth_tokens WHERE credential_id = $1 ORDER BY kind`,
        [grant.id],
      );
      expect(tokens).toEqual([
        { token_hash: hashSecret(body.access_token), kind: 'access', client_id: client.client_id, ttl: 900 },
        { token_hash: hashSecret(body.refresh_token), kind: 'refresh', client_id: client.client_id, ttl: 7200 },
      ]);
      const [code] = await db().query(`SELECT used_at, credential_id FROM oauth_codes WHERE code_hash = $1`, [hashSecret(c.code)]);
      expect(code).toEqual({ used_at: expect.any(Date), credential_id: grant.id });
      const [stored] = await db().query(`SELECT last_used_at FROM oauth_clients WHERE id = $1`, [client.client_id]);
      expect(stored.last_used_at).toEqual(expect.any(Date));
    });

    it('the access token reaches exactly the consented projects and scopes on /mcp; activity names the grant by the client name', async () => {
      const { body } = await exchange(await consented([{ project_id: person.projectIds[2], role: 'viewer' }], ['read']));
      const list = await callOk(t, body.access_token, 'list_projects');
      expect(list.items.map((p: any) => [p.id, p.role])).toEqual([[person.projectIds[2], 'viewer']]);
      const tools = (await rpc(t, body.access_token, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).body.result.tools.map((x: any) => x.name);
      expect(tools).toContain('list_articles');
      expect(tools).not.toContain('create_article');
      const grant = await grantOf(body.access_token);
      const entries = await activity(t, person.accountId, `credential_id=${grant.id}`);
      expect(entries[0].credential).toEqual({ type: 'grant', id: grant.id, name: 'Token client' });
    });

    it('resource, when sent, matches the code’s (the trailing / ignored)', async () => {
      const c = await consented(undefined, undefined, { resource: `${t.config.publicUrl}/mcp` });
      expect((await exchange(c, { resource: `${t.config.publicUrl}/mcp/` })).status).toBe(200);
    });

    it('a client_secret_post client (Claude’s registration) authenticates with its secret in the form', async () => {
      const registered = (await t.http.post('/oauth/register').send(REAL_BODIES.claude)).body;
      const claude = { ...registered, redirect_uris: registered.redirect_uris };
      const c = await consented(undefined, undefined, undefined, claude);
      const res = await exchange(c, { client_secret: registered.client_secret }, claude);
      expect(res.status).toBe(200);
      expect((await grantOf(res.body.access_token)).name).toBe('Claude');
    });

    it('a client_secret_basic client authenticates with Authorization: Basic', async () => {
      const basic = await newClient(t, { auth: 'client_secret_basic', redirect_uris: ['https://app.example.com/cb'] });
      const c = await consented(undefined, undefined, undefined, basic);
      const res = await tokenRequest(
        t,
        { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirect_uri },
        { id: basic.client_id, secret: basic.client_secret! },
      );
      expect(res.status).toBe(200);
    });
  });

  describe('a code is used once', () => {
    it('a second use is invalid_grant and revokes the grant it made (code_replay): its tokens stop working', async () => {
      const c = await consented();
      const first = await exchange(c);
      expect(first.status).toBe(200);
      expect((await rpc(t, first.body.access_token, PING)).status).toBe(200);
      expectError(await exchange(c), 400, 'invalid_grant');
      expect(await grantOf(first.body.access_token)).toMatchObject({ revoked_at: expect.any(Date), revoked_reason: 'code_replay' });
      const after = await rpc(t, first.body.access_token, PING);
      expect(after.status).toBe(401);
      expect(after.headers['www-authenticate']).toMatch(/error="invalid_token"$/);
      expectError(
        await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: client.client_id }),
        400,
        'invalid_grant',
      );
    });

    it('two exchanges at once: one grant, and it is revoked', async () => {
      const c = await consented();
      const answers = await Promise.all([exchange(c), exchange(c)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
      const winner = answers.find((a) => a.status === 200)!;
      expect((await grantOf(winner.body.access_token)).revoked_reason).toBe('code_replay');
      expect((await rpc(t, winner.body.access_token, PING)).status).toBe(401);
    });
  });

  describe('refusals (and the code stays usable after each, but the last)', () => {
    it.each([
      ['a wrong code_verifier (PKCE)', (v: string) => ({ code_verifier: v.slice(0, -2) + (v.endsWith('AA') ? 'BB' : 'AA') }), 400, 'invalid_grant'],
      ['no code_verifier', () => ({ code_verifier: undefined }), 400, 'invalid_request'],
      ['a code_verifier too short', () => ({ code_verifier: 'a'.repeat(42) }), 400, 'invalid_request'],
      ['the challenge sent as verifier', () => ({ code_verifier: undefined as string | undefined, use_challenge: '1' }), 400, 'invalid_grant'],
      ['another redirect_uri', () => ({ redirect_uri: 'http://127.0.0.1:9998/callback' }), 400, 'invalid_grant'],
      ['no redirect_uri', () => ({ redirect_uri: undefined }), 400, 'invalid_request'],
      ['a resource the code was not issued for', () => ({ resource: 'https://other.example/mcp' }), 400, 'invalid_grant'],
      ['a resource when the code has none', (_v: string, url: string) => ({ resource: `${url}/mcp` }), 400, 'invalid_grant'],
      ['no code', () => ({ code: undefined }), 400, 'invalid_request'],
      ['an unknown code', () => ({ code: 'x'.repeat(43) }), 400, 'invalid_grant'],
    ])('%s', async (_what, change, status, error) => {
      const c = await consented();
      const extra: Record<string, string | undefined> = change(c.verifier, t.config.publicUrl);
      if (extra.use_challenge) {
        const { createHash } = await import('node:crypto');
        extra.code_verifier = createHash('sha256').update(c.verifier).digest('base64url');
        delete extra.use_challenge;
      }
      expectError(await exchange(c, extra), status, error);
      expect((await exchange(c)).status).toBe(200);
    });

    it('an expired code (2 minutes)', async () => {
      const c = await consented();
      await db().query(`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1`, [hashSecret(c.code)]);
      expectError(await exchange(c), 400, 'invalid_grant');
    });

    it('a code issued to another client', async () => {
      const other = await newClient(t, { redirect_uris: ['http://127.0.0.1:9999/callback'] });
      const c = await consented();
      expectError(await exchange(c, {}, other), 400, 'invalid_grant');
      expect((await exchange(c)).status).toBe(200);
    });

    it('a person disabled since consenting', async () => {
      const someone = await consentingPerson(t, ['viewer']);
      const c = await authorizeCode(t, {
        client,
        session: someone.session,
        projects: [{ project_id: someone.projectIds[0], role: 'viewer' }],
        scopes: ['read'],
      });
      await db().query(`UPDATE users SET disabled_at = now() WHERE id = $1`, [someone.user.id]);
      expectError(await exchange(c), 400, 'invalid_grant');
    });
  });

  describe('client authentication: invalid_client, 401', () => {
    let claude: { client_id: string; client_secret: string; redirect_uris: string[] };
    beforeAll(async () => {
      claude = (await t.http.post('/oauth/register').send(REAL_BODIES.claude)).body;
    });

    it('a confidential client without its secret', async () => {
      const c = await consented(undefined, undefined, undefined, claude);
      expectError(await exchange(c, {}, claude), 401, 'invalid_client');
      expect((await exchange(c, { client_secret: claude.client_secret }, claude)).status).toBe(200);
    });
    it('a wrong secret', async () => {
      const c = await consented(undefined, undefined, undefined, claude);
      expectError(await exchange(c, { client_secret: claude.client_secret + 'x' }, claude), 401, 'invalid_client');
    });
    it('a wrong secret in Basic: 401 with WWW-Authenticate: Basic', async () => {
      const c = await consented(undefined, undefined, undefined, claude);
      const res = await tokenRequest(
        t,
        { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirect_uri },
        { id: claude.client_id, secret: 'wrong' },
      );
      expectError(res, 401, 'invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="reblog"/);
    });
    it('a confidential client may send its right secret either way: a client_secret_post client in Basic, a client_secret_basic one in the form', async () => {
      const c = await consented(undefined, undefined, undefined, claude);
      const res = await tokenRequest(
        t,
        { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirect_uri },
        { id: claude.client_id, secret: claude.client_secret },
      );
      expect(res.status).toBe(200);
      const basic = await newClient(t, { auth: 'client_secret_basic', redirect_uris: ['https://app.example.com/cb'] });
      const b = await consented(undefined, undefined, undefined, basic);
      expect((await exchange(b, { client_secret: basic.client_secret }, basic)).status).toBe(200);
    });
    it('a public client sending a secret', async () =>
      expectError(await exchange(await consented(), { client_secret: 'rbcs_made_up' }), 401, 'invalid_client'));
    it('an unknown client_id', async () => expectError(await exchange(await consented(), {}, { client_id: 'nobody' }), 401, 'invalid_client'));
    it('no client at all', async () => {
      const c = await consented();
      expectError(
        await tokenRequest(t, { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirect_uri }),
        401,
        'invalid_client',
      );
    });
    it('two ways at once (Basic and client_secret) is invalid_request', async () => {
      const c = await consented(undefined, undefined, undefined, claude);
      const res = await tokenRequest(
        t,
        { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirect_uri, client_secret: claude.client_secret },
        { id: claude.client_id, secret: claude.client_secret },
      );
      expectError(res, 400, 'invalid_request');
    });
  });

  describe('purge', () => {
    it('deletes tokens expired for an hour and codes expired for a day; keeps the live ones (and a used code while a replay may still come)', async () => {
      const old = await consented();
      const oldPair = (await exchange(old)).body;
      const recent = await consented();
      const livePair = (await exchange(recent)).body;
      await db().query(`UPDATE oauth_tokens SET expires_at = now() - interval '61 minutes' WHERE token_hash = ANY($1)`, [
        [hashSecret(oldPair.access_token), hashSecret(oldPair.refresh_token)],
      ]);
      await db().query(`UPDATE oauth_codes SET expires_at = now() - interval '25 hours' WHERE code_hash = $1`, [hashSecret(old.code)]);
      await db().query(`UPDATE oauth_codes SET expires_at = now() - interval '23 hours' WHERE code_hash = $1`, [hashSecret(recent.code)]);
      await t.app.get(OAuthPurgeService).purge();
      const tokens = await db().query(`SELECT token_hash FROM oauth_tokens WHERE token_hash = ANY($1)`, [
        [oldPair.access_token, oldPair.refresh_token, livePair.access_token, livePair.refresh_token].map(hashSecret),
      ]);
      expect(tokens).toHaveLength(2);
      const codesLeft = await db().query(`SELECT code_hash FROM oauth_codes WHERE code_hash = ANY($1)`, [[hashSecret(old.code), hashSecret(recent.code)]]);
      expect(codesLeft).toEqual([{ code_hash: hashSecret(recent.code) }]);
      // The used code that stays still revokes on a replay.
      expectError(await exchange(recent), 400, 'invalid_grant');
      expect((await rpc(t, livePair.access_token, PING)).status).toBe(401);
    });
  });

  describe('the request itself', () => {
    it('no grant_type: invalid_request', async () => expectError(await tokenRequest(t, { client_id: client.client_id }), 400, 'invalid_request'));
    it.each(['password', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code', 'implicit'])(
      'grant_type=%s: unsupported_grant_type',
      async (grantType) => expectError(await tokenRequest(t, { grant_type: grantType, client_id: client.client_id }), 400, 'unsupported_grant_type'),
    );
    it('a parameter sent twice: invalid_request', async () => {
      const c = await consented();
      const body = `grant_type=authorization_code&code=${c.code}&code=${c.code}&code_verifier=${c.verifier}&redirect_uri=${encodeURIComponent(c.redirect_uri)}&client_id=${client.client_id}`;
      expectError(await t.http.post('/oauth/token').type('form').send(body), 400, 'invalid_request');
    });
  });
});

describe('POST /oauth/token: the per-IP limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('over the limit: 429 temporarily_unavailable with Retry-After, whatever the request', async () => {
    for (let i = 0; i < 2; i++) expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'y' })).status).toBe(401);
    const refused = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'y' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(refused.headers['cache-control']).toBe('no-store');
    // Revocation has no limit of its own; registration counts apart.
    expect((await t.http.post('/oauth/revoke').type('form').send('token=x')).status).toBe(200);
  });
});
