import { request as httpRequest } from 'node:http';
import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { OAuthPurgeService } from '../../src/oauth/oauth-purge.service.js';
import { createTenant } from '../support/fixtures.js';
import { newUser } from '../support/people.js';
import { oauthGrant, REAL_BODIES } from '../support/oauth.js';
import { requestFromPeer } from '../support/peer-request.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/oauth.md#dynamic-registration: Dynamic Client Registration (RFC 7591), with the real bodies of the clients it names.

describe('POST /oauth/register', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const register = (body: unknown) => t.http.post('/oauth/register').set('Content-Type', 'application/json').send(JSON.stringify(body));
  const stored = async (id: string) => (await t.app.get(DataSource).query(`SELECT * FROM oauth_clients WHERE id = $1`, [id]))[0];

  describe('the real bodies are accepted', () => {
    it.each(Object.entries(REAL_BODIES))("%s's body: 201 with client_id, client_id_issued_at and the metadata", async (name, body) => {
      const before = Math.floor(Date.now() / 1000);
      const res = await register(body);
      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        ...body,
        client_id: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
        client_id_issued_at: expect.any(Number),
        ...(body.token_endpoint_auth_method === 'none'
          ? {}
          : { client_secret: expect.stringMatching(/^rbcs_[A-Za-z0-9_-]{43}$/), client_secret_expires_at: 0 }),
      });
      expect(res.body.client_id_issued_at).toBeGreaterThanOrEqual(before - 1);
      expect(res.body.client_id_issued_at).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
      const row = await stored(res.body.client_id);
      expect(row).toMatchObject({
        source: 'dcr',
        client_name: body.client_name,
        redirect_uris: body.redirect_uris,
        token_endpoint_auth_method: body.token_endpoint_auth_method,
        last_used_at: null,
      });
      if (name === 'claude') {
        // Shown once: only its hash is kept.
        expect(row.secret_hash).toEqual(hashSecret(res.body.client_secret));
        expect(JSON.stringify(row)).not.toContain(res.body.client_secret);
      } else {
        expect(row.secret_hash).toBeNull();
      }
    });

    it('the defaults: auth method none, the code grant with refresh, response type code', async () => {
      const res = await register({ redirect_uris: ['https://app.example.com/cb'] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        client_id: expect.any(String),
        client_id_issued_at: expect.any(Number),
        redirect_uris: ['https://app.example.com/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
    });

    it('client_secret_basic gets a secret too; two registrations get two ids', async () => {
      const a = await register({ redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' });
      const b = await register({ redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' });
      expect(a.status).toBe(201);
      expect(a.body.client_secret).toMatch(/^rbcs_/);
      expect(a.body.client_id).not.toBe(b.body.client_id);
      expect(a.body.client_secret).not.toBe(b.body.client_secret);
    });

    it.each([
      ['a private-use scheme', 'vscode://vscode.github-authentication/did-authenticate'],
      ['a reverse-domain scheme (RFC 8252 §7.1)', 'com.example.app:/oauth2redirect'],
      ['http on localhost', 'http://localhost:8080/callback'],
      ['http on [::1]', 'http://[::1]:33418/'],
      ['http on 127.0.0.1 without a port', 'http://127.0.0.1/callback'],
      ['https with a port and a query', 'https://app.example.com:8443/cb?tenant=1'],
    ])('%s is a valid redirect URI', async (_what, uri) => {
      expect((await register({ redirect_uris: [uri] })).status).toBe(201);
    });

    it('exactly ten redirect URIs, and nulls for the fields a client leaves out', async () => {
      const uris = Array.from({ length: 10 }, (_, i) => `https://app.example.com/cb/${i}`);
      const res = await register({ redirect_uris: uris, client_name: null, client_uri: null, scope: null });
      expect(res.status).toBe(201);
      expect(res.body.redirect_uris).toEqual(uris);
      expect(res.body).not.toHaveProperty('client_name');
    });

    it('unknown scopes in `scope` are dropped, unknown fields are not echoed', async () => {
      const res = await register({
        redirect_uris: ['https://app.example.com/cb'],
        scope: 'read offline_access write',
        jwks_uri: 'https://app.example.com/jwks',
        application_type: 'web',
      });
      expect(res.status).toBe(201);
      expect(res.body.scope).toBe('read write');
      expect(res.body).not.toHaveProperty('jwks_uri');
    });
  });

  describe('redirect URIs that must fail: 400 invalid_redirect_uri', () => {
    it.each([
      ['javascript:', ['javascript:alert(document.cookie)']],
      ['data:', ['data:text/html,<script>alert(1)</script>']],
      ['file:', ['file:///etc/passwd']],
      ['non-loopback http', ['http://app.example.com/callback']],
      ['http on a private address', ['http://192.168.1.10/callback']],
      ['http on a name that looks like localhost', ['http://localhost.evil.example/callback']],
      ['a fragment', ['https://app.example.com/cb#frag']],
      ['an empty fragment', ['https://app.example.com/cb#']],
      ['userinfo on https', ['https://user:pass@app.example.com/cb']],
      ['userinfo on a private-use scheme', ['cursor://someone@anysphere.cursor-mcp/oauth/callback']],
      ['a relative URI', ['/callback']],
      ['not a string', [42]],
      ['an empty string', ['']],
      ['one bad among good ones', ['https://app.example.com/cb', 'javascript:alert(1)']],
      ['no URI', []],
      ['more than ten', Array.from({ length: 11 }, (_, i) => `https://app.example.com/cb/${i}`)],
    ])('%s', async (_what, uris) => {
      const res = await register({ ...REAL_BODIES.chatgpt, redirect_uris: uris });
      expect(res.status).toBe(400);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({ error: 'invalid_redirect_uri', error_description: expect.any(String) });
    });

    it.each([
      ['missing', {}],
      ['a string, not an array', { redirect_uris: 'https://app.example.com/cb' }],
    ])('redirect_uris %s', async (_what, body) => {
      const res = await register({ client_name: 'x', ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_redirect_uri');
    });
  });

  describe('other bad metadata: 400 invalid_client_metadata', () => {
    it.each([
      ['an unsupported auth method', { token_endpoint_auth_method: 'private_key_jwt' }],
      ['a grant type this server does not have', { grant_types: ['client_credentials'] }],
      ['grant types without the code grant', { grant_types: ['refresh_token'] }],
      ['an implicit response type', { response_types: ['token'] }],
      ['grant_types as a string', { grant_types: 'authorization_code' }],
      ['a client_name that is not a string', { client_name: { en: 'Cursor' } }],
      ['a client_name over 200 characters', { client_name: 'x'.repeat(201) }],
      ['a client_uri that is not a web URL', { client_uri: 'javascript:alert(1)' }],
      ['a logo_uri that is not a URL', { logo_uri: 'logo.png' }],
      ['contacts that are not strings', { contacts: [1, 2] }],
    ])('%s', async (_what, extra) => {
      const res = await register({ redirect_uris: ['https://app.example.com/cb'], ...extra });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_client_metadata', error_description: expect.any(String) });
    });

    it('a body that is an array', async () => {
      const res = await register([REAL_BODIES.claude]);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_client_metadata');
    });

    it.each([
      ['a string', 'redirect_uris'],
      ['null', null],
    ])('a body that is %s: the JSON parser refuses it (objects and arrays only), still in the OAuth shape', async (_what, body) => {
      const res = await register(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    });

    it('a form-encoded body is refused: registration is JSON', async () => {
      const res = await t.http.post('/oauth/register').type('form').send({ redirect_uris: 'https://app.example.com/cb' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });

  describe('body size: at most 16 KiB', () => {
    /** A valid registration body of exactly `size` bytes. */
    const bodyOfSize = (size: number) => {
      const head = '{"redirect_uris":["https://app.example.com/cb"],"software_statement_padding":"';
      return head + 'x'.repeat(size - head.length - 2) + '"}';
    };

    it('16384 bytes are accepted', async () => {
      const body = bodyOfSize(16 * 1024);
      expect(Buffer.byteLength(body)).toBe(16384);
      const res = await t.http.post('/oauth/register').set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(201);
    });

    it('16385 bytes are a JSON 413', async () => {
      const res = await t.http
        .post('/oauth/register')
        .set('Content-Type', 'application/json')
        .send(bodyOfSize(16 * 1024 + 1));
      expect(res.status).toBe(413);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('16384') });
    });

    it('a large body sent chunked, with no Content-Length, is a 413 too', async () => {
      const url = new URL(t.baseUrl);
      const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: '/oauth/register',
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        const body = bodyOfSize(40 * 1024);
        for (let i = 0; i < body.length; i += 4096) req.write(body.slice(i, i + 4096));
        req.end();
      });
      expect(answer.status).toBe(413);
      expect(answer.body.error).toBe('invalid_request');
    });
  });

  describe('purge: clients that never got a grant are removed after 24 h', () => {
    it('removes the day-old unused ones and keeps the recent, the used and the granted', async () => {
      const db = t.app.get(DataSource);
      const ids: Record<string, string> = {};
      for (const name of ['old', 'recent', 'used', 'granted']) ids[name] = (await register(REAL_BODIES.chatgpt)).body.client_id;
      await db.query(`UPDATE oauth_clients SET created_at = now() - interval '25 hours' WHERE id = ANY($1)`, [[ids.old, ids.used, ids.granted]]);
      await db.query(`UPDATE oauth_clients SET created_at = now() - interval '23 hours' WHERE id = $1`, [ids.recent]);
      await db.query(`UPDATE oauth_clients SET last_used_at = now() - interval '2 hours' WHERE id = $1`, [ids.used]);
      const tenant = await createTenant(t);
      const person = await newUser(t);
      await oauthGrant(t, { accountId: tenant.accountId, userId: person.id, clientId: ids.granted, projects: [] });

      await expect(t.app.get(OAuthPurgeService).purge()).resolves.toEqual(expect.objectContaining({ clients: expect.any(Number) }));
      const left = (await db.query(`SELECT id FROM oauth_clients WHERE id = ANY($1)`, [Object.values(ids)])).map((r: { id: string }) => r.id).sort();
      expect(left).toEqual([ids.recent, ids.used, ids.granted].sort());
    });
  });
});

describe('POST /oauth/register: the per-IP limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('over OAUTH_IP_RATE_LIMIT_PER_MINUTE from one address: 429, Retry-After, JSON; another address is not affected', async () => {
    const register = (ip: string) =>
      t.http.post('/oauth/register').set('X-Forwarded-For', ip).set('Content-Type', 'application/json').send(JSON.stringify(REAL_BODIES.claude));
    for (let i = 0; i < 3; i++) expect((await register('203.0.113.7')).status).toBe(201);
    const refused = await register('203.0.113.7');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringContaining('retry after') });
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    expect((await register('203.0.113.8')).status).toBe(201);
  });
});

describe('POST /oauth/register: the per-IP limit when the peer is not a trusted proxy (TRUST_PROXY)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The tests reach the server from loopback: trusting only 10.0.0.0/8 makes the peer an untrusted client.
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '10.0.0.0/8' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ignores the X-Forwarded-For a client writes itself: every address it claims shares its own bucket', async () => {
    const register = (ip: string) =>
      t.http.post('/oauth/register').set('X-Forwarded-For', ip).set('Content-Type', 'application/json').send(JSON.stringify(REAL_BODIES.claude));
    expect((await register('203.0.113.7')).status).toBe(201);
    expect((await register('203.0.113.8')).status).toBe(201);
    expect((await register('203.0.113.9')).status).toBe(429);
    expect((await register('198.51.100.1, 203.0.113.10')).status).toBe(429);
  });
});

describe('POST /oauth/register: the per-IP limit with the default TRUST_PROXY (loopback only)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const registerFrom = (peer: string, forwardedFor: string) =>
    requestFromPeer(t, peer, {
      method: 'POST',
      path: '/oauth/register',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': forwardedFor },
      body: JSON.stringify(REAL_BODIES.claude),
    });

  // A client on a private network reaching the server directly (not through the gateway) cannot
  // pick a new bucket by writing a new X-Forwarded-For each time.
  it.each(['10.1.2.3', '192.168.7.8', '172.16.0.9', '169.254.3.4', 'fd00::5', 'fe80::7', '::ffff:10.1.2.3'])(
    'a peer at %s is the client: every address it claims shares its bucket',
    async (peer) => {
      const statuses = [];
      for (const claimed of ['203.0.113.7', '203.0.113.8', '203.0.113.9', '198.51.100.1, 203.0.113.10'])
        statuses.push((await registerFrom(peer, claimed)).status);
      expect(statuses).toEqual([201, 201, 429, 429]);
    },
  );

  it('a gateway on loopback still names the client: each client it names has its own bucket', async () => {
    for (const claimed of ['203.0.113.20', '203.0.113.21', '203.0.113.22']) expect((await registerFrom('127.0.0.1', claimed)).status).toBe(201);
    expect((await registerFrom('::1', '203.0.113.20')).status).toBe(201);
    expect((await registerFrom('::1', '203.0.113.20')).status).toBe(429);
  });
});
