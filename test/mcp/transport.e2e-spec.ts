import { request as httpRequest } from 'node:http';
import { DataSource } from 'typeorm';
import { admin, createTenant, newGrant, newKey, type Tenant } from '../support/fixtures.js';
import { connectClient, initSession, postBytes, rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/protocol.md#transport and docs/protocol.md#who-calls-and-what-they-reach, statement by statement.
const PUBLIC_URL = 'https://reblog.example.com';
const ALLOWED = ['https://app.example.com', 'https://admin.example.org:8443'];
const CHALLENGE = `Bearer resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource", scope="read write generate delete"`;
/** The challenge when a bearer token was sent but names no live credential (docs/oauth.md#discovery). */
const INVALID_TOKEN = `${CHALLENGE}, error="invalid_token"`;
const PING = { jsonrpc: '2.0', id: 7, method: 'ping' };

describe('/mcp transport', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_URL, ALLOWED_ORIGINS: ALLOWED.join(',') });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  const auth = (token = tenant.key) => ({ Authorization: `Bearer ${token}` });

  /** A JSON-RPC error answer: status, JSON content type, the id, the code, and nothing else in the body. */
  function expectRpcError(res: { status: number; headers: Record<string, string>; body: any; text: string }, status: number, code: number, id: unknown) {
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['error', 'id', 'jsonrpc']);
    expect(res.body.jsonrpc).toBe('2.0');
    expect(res.body.id).toEqual(id);
    expect(res.body.error.code).toBe(code);
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.error.message.length).toBeGreaterThan(10);
    return res.body.error as { code: number; message: string };
  }

  describe('one JSON-RPC message per POST, answered as application/json', () => {
    it('answers a request with a JSON-RPC result carrying its id', async () => {
      const res = await rpc(t, tenant.key, PING);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
      const str = await rpc(t, tenant.key, { ...PING, id: 'abc-1' });
      expect(str.body).toEqual({ jsonrpc: '2.0', id: 'abc-1', result: {} });
    });

    it('answers application/json to a client that accepts only application/json', async () => {
      const res = await rpc(t, null, JSON.stringify(PING), { ...auth(), Accept: 'application/json' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.result).toEqual({});
    });

    it('acknowledges notifications with 202 and no body', async () => {
      for (const method of ['notifications/initialized', 'notifications/cancelled', 'notifications/whatever']) {
        const res = await rpc(t, tenant.key, { jsonrpc: '2.0', method, params: { requestId: 1 } });
        expect(res.status).toBe(202);
        expect(res.text).toBe('');
      }
    });

    it('acknowledges responses from the client (result or error) with 202 and no body', async () => {
      const ok = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 5, result: {} });
      expect(ok.status).toBe(202);
      expect(ok.text).toBe('');
      const err = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'srv-1', error: { code: -32601, message: 'no' } });
      expect(err.status).toBe(202);
      expect(err.text).toBe('');
    });

    it('answers an unknown method with -32601 and HTTP 200', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 11, method: 'resources/lists' });
      const error = expectRpcError(res, 200, -32601, 11);
      expect(error.message).toContain('resources/lists');
    });

    it('answers ping with {}', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 'p', method: 'ping', params: {} });
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    });

    it('answers a batch with -32600 "Batches are not supported" (400)', async () => {
      const res = await rpc(t, tenant.key, [PING, { ...PING, id: 8 }]);
      const error = expectRpcError(res, 400, -32600, null);
      expect(error.message).toBe('Batches are not supported');
      const empty = await rpc(t, tenant.key, []);
      expect(expectRpcError(empty, 400, -32600, null).message).toBe('Batches are not supported');
    });

    it('answers malformed JSON with -32700 (400)', async () => {
      for (const body of ['{"jsonrpc":"2.0","id":1,', '', 'not json', '{"a":1}{"b":2}']) {
        const res = await rpc(t, null, body, auth());
        expectRpcError(res, 400, -32700, null);
      }
    });

    it('answers a body that is not UTF-8 with -32700 (400)', async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('"}}'),
      ]);
      const res = await postBytes(t, bytes, { 'Content-Type': 'application/json', ...auth() });
      expect(expectRpcError(res, 400, -32700, null).message).toMatch(/UTF-8/);
      // The same bytes made valid are served: only the encoding was wrong.
      const fixed = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"é"}}');
      expect((await postBytes(t, fixed, { 'Content-Type': 'application/json', ...auth() })).status).toBe(200);
    });

    it('answers what is not a JSON-RPC request with -32600 (400), carrying the id where it is readable', async () => {
      const cases: [unknown, unknown][] = [
        [{ jsonrpc: '1.0', id: 21, method: 'ping' }, 21],
        [{ id: 22, method: 'ping' }, 22],
        [{ jsonrpc: '2.0', id: 23, method: 5 }, 23],
        [{ jsonrpc: '2.0', id: 24 }, 24],
        [{ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null],
        [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
        ['hello', null],
        [42, null],
        [null, null],
      ];
      for (const [body, id] of cases) {
        const res = await rpc(t, tenant.key, JSON.stringify(body));
        expectRpcError(res, 400, -32600, id);
      }
    });

    it('refuses a Content-Type other than application/json with -32600 (400) and accepts its parameters and any case', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp', '']) {
        const res = await rpc(t, null, JSON.stringify(PING), { ...auth(), 'Content-Type': type });
        const error = expectRpcError(res, 400, -32600, 7);
        expect(error.message).toContain('Content-Type: application/json');
      }
      for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
        const res = await rpc(t, null, JSON.stringify(PING), { ...auth(), 'Content-Type': type });
        expect(res.status).toBe(200);
      }
    });

    it('answers another HTTP method with a JSON-RPC error body, never an HTML page', async () => {
      for (const method of ['put', 'patch'] as const) {
        const res = await t.http[method]('/mcp').set(auth()).set('Content-Type', 'application/json').send(JSON.stringify(PING));
        expect(res.status).toBe(405);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body.jsonrpc).toBe('2.0');
        expect(res.body.error.code).toEqual(expect.any(Number));
      }
    });
  });

  describe('GET and DELETE', () => {
    it('GET /mcp without a session is 400 with a JSON-RPC error: stateless clients have no stream (test/resources covers the stream)', async () => {
      const res = await t.http.get('/mcp').set(auth()).set('Accept', 'text/event-stream');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('Mcp-Session-Id') } });
    });

    it('GET /mcp checks Origin and the credential first, like every request', async () => {
      const noKey = await t.http.get('/mcp');
      expect(noKey.status).toBe(401);
      expect(noKey.headers['www-authenticate']).toBe(CHALLENGE);
      const badOrigin = await t.http.get('/mcp').set(auth()).set('Origin', 'https://evil.example');
      expect(badOrigin.status).toBe(403);
      const unknownSession = await t.http.get('/mcp').set(auth()).set('Mcp-Session-Id', 'gone');
      expect(unknownSession.status).toBe(404);
      const { sessionId } = await initSession(t, tenant.key);
      const inSession = await t.http.get('/mcp').set(auth()).set('Mcp-Session-Id', sessionId).set('Accept', 'application/json');
      expect(inSession.status).toBe(406);
    });

    it('DELETE with a session id ends the session (204); the id is then 404', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      const before = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
      expect(before.status).toBe(200);
      const del = await t.http.delete('/mcp').set(auth()).set('Mcp-Session-Id', sessionId);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const after = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
      expectRpcError(after, 404, -32001, 7);
      const again = await t.http.delete('/mcp').set(auth()).set('Mcp-Session-Id', sessionId);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe(-32001);
    });

    it('DELETE without a session id is 400; with another credential it is 404 and the session lives on', async () => {
      const none = await t.http.delete('/mcp').set(auth());
      expect(none.status).toBe(400);
      expect(none.body.error.message).toContain('Mcp-Session-Id');
      const { sessionId } = await initSession(t, tenant.key);
      const other = await createTenant(t);
      const foreign = await t.http.delete('/mcp').set(auth(other.key)).set('Mcp-Session-Id', sessionId);
      expect(foreign.status).toBe(404);
      const still = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
      expect(still.status).toBe(200);
    });

    it('two DELETEs of one session at once: one ends it (204), the other finds it gone (404)', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      const answers = await Promise.all([1, 2].map(() => t.http.delete('/mcp').set(auth()).set('Mcp-Session-Id', sessionId)));
      expect(answers.map((r) => r.status).sort()).toEqual([204, 404]);
    });

    it('the SDK client ends its session with DELETE on terminateSession()', async () => {
      const client = await connectClient(t, tenant.key);
      const transport = client.transport as unknown as { sessionId?: string; terminateSession(): Promise<void> };
      const sessionId = transport.sessionId!;
      expect(sessionId).toEqual(expect.any(String));
      await transport.terminateSession();
      const after = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
      expect(after.status).toBe(404);
      await client.close();
    });
  });

  describe('protocol versions', () => {
    it.each(['2025-03-26', '2025-06-18', '2025-11-25'])('initialize echoes the supported version %s', async (version) => {
      const { res } = await initSession(t, tenant.key, version);
      expect(res.body.result.protocolVersion).toBe(version);
    });

    it.each(['2024-11-05', '2026-07-28', '1.0', 'latest'])('initialize answers the latest version (2025-11-25) to an unsupported %s', async (version) => {
      const { res } = await initSession(t, tenant.key, version);
      expect(res.body.result.protocolVersion).toBe('2025-11-25');
    });

    it('the official SDK client negotiates and then speaks its version in the header', async () => {
      const client = await connectClient(t, tenant.key);
      const transport = client.transport as unknown as { protocolVersion?: string };
      expect(transport.protocolVersion).toBe('2025-11-25');
      await expect(client.ping()).resolves.toEqual({});
      await client.close();
    });

    it('after initialize, a missing MCP-Protocol-Version header is accepted (taken as 2025-03-26)', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      const res = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
      expect(res.status).toBe(200);
      const stateless = await rpc(t, tenant.key, PING);
      expect(stateless.status).toBe(200);
    });

    it.each(['2025-03-26', '2025-06-18', '2025-11-25'])('the supported header %s is accepted', async (version) => {
      const { sessionId } = await initSession(t, tenant.key, version);
      const res = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': version });
      expect(res.status).toBe(200);
    });

    it('an unsupported MCP-Protocol-Version header is 400 with a JSON-RPC error naming the supported ones', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      for (const version of ['2024-11-05', '2026-07-28', 'garbage']) {
        const res = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': version });
        const error = expectRpcError(res, 400, -32600, 7);
        expect(error.message).toContain(version);
        expect(error.message).toContain('2025-06-18');
      }
      const stateless = await rpc(t, tenant.key, PING, { 'MCP-Protocol-Version': '2024-11-05' });
      expectRpcError(stateless, 400, -32600, 7);
    });
  });

  describe('sessions', () => {
    it('initialize issues an Mcp-Session-Id of visible ASCII with at least 122 random bits, new each time', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const { sessionId } = await initSession(t, tenant.key);
        expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
        // base64url characters carry 6 bits each.
        expect(sessionId).toMatch(/^[A-Za-z0-9_-]{21,}$/);
        ids.add(sessionId);
      }
      expect(ids.size).toBe(3);
    });

    it('a session lives in Postgres: another instance serves it, and ending it on one ends it on the other', async () => {
      const other = await startTestApp({ PUBLIC_URL, ALLOWED_ORIGINS: ALLOWED.join(',') });
      try {
        const { sessionId } = await initSession(t, tenant.key);
        const served = await rpc(other, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
        expect(served.status).toBe(200);
        const { sessionId: second } = await initSession(t, tenant.key);
        const del = await t.http.delete('/mcp').set(auth()).set('Mcp-Session-Id', second);
        expect(del.status).toBe(204);
        const ended = await rpc(other, tenant.key, PING, { 'Mcp-Session-Id': second });
        expect(ended.status).toBe(404);
      } finally {
        await other.close();
      }
    });

    it('a session id is bound to its credential: another key of the same account, or of another account, is 404', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      const sibling = await newKey(t, tenant.accountId, [{ project_id: tenant.projectIds[0], role: 'owner' }]);
      const other = await createTenant(t);
      for (const key of [sibling.key, other.key]) {
        const res = await rpc(t, key, PING, { 'Mcp-Session-Id': sessionId });
        expect(expectRpcError(res, 404, -32001, 7).message).toMatch(/[Ii]nitialize/);
      }
      // The owner still uses it.
      expect((await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId })).status).toBe(200);
    });

    it('an unknown session id is 404, the same answer as an ended or foreign one', async () => {
      const unknown = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': 'x'.repeat(32) });
      const a = expectRpcError(unknown, 404, -32001, 7);
      const { sessionId } = await initSession(t, tenant.key);
      await t.http.delete('/mcp').set(auth()).set('Mcp-Session-Id', sessionId);
      const ended = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId });
      expect(expectRpcError(ended, 404, -32001, 7)).toEqual(a);
    });

    it('requests without a session id are served (stateless clients)', async () => {
      const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_projects', arguments: {} } });
      expect(res.status).toBe(200);
      expect(res.body.result.structuredContent.items).toHaveLength(1);
    });
  });

  describe('Origin and Host (DNS rebinding), while listening on loopback', () => {
    it.each(['http://localhost:1234', 'http://127.0.0.1:9', 'http://localhost', 'http://[::1]:8080', PUBLIC_URL, ...ALLOWED])(
      'the origin %s is allowed',
      async (origin) => {
        const res = await rpc(t, tenant.key, PING, { Origin: origin });
        expect(res.status).toBe(200);
      },
    );

    it('no Origin (a non-browser client) is allowed', async () => {
      expect((await rpc(t, tenant.key, PING)).status).toBe(200);
    });

    it.each([
      'https://evil.example',
      'http://localhost.evil.example',
      'null',
      'http://reblog.example.com',
      'https://reblog.example.com:8443',
      'https://app.example.com.evil.example',
      'https://localhost:1234',
    ])('the origin %s is 403 with a JSON-RPC error carrying the id', async (origin) => {
      const res = await rpc(t, tenant.key, PING, { Origin: origin });
      expect(expectRpcError(res, 403, -32000, 7).message).toContain(origin);
    });

    it.each(['localhost:1', '127.0.0.1', '127.0.0.1:80', '[::1]:3000', 'LOCALHOST:5', 'reblog.example.com'])('the Host %s is allowed', async (host) => {
      const res = await rpc(t, tenant.key, PING, { Host: host });
      expect(res.status).toBe(200);
    });

    it.each(['evil.example', 'evil.example:80', '127.0.0.1.evil.example', 'reblog.example.com.evil.example'])('the Host %s is 403', async (host) => {
      const res = await rpc(t, tenant.key, PING, { Host: host });
      expectRpcError(res, 403, -32000, 7);
    });

    it('DELETE is guarded by Origin too', async () => {
      const { sessionId } = await initSession(t, tenant.key);
      const res = await t.http.delete('/mcp').set(auth()).set('Mcp-Session-Id', sessionId).set('Origin', 'https://evil.example');
      expect(res.status).toBe(403);
      expect((await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': sessionId })).status).toBe(200);
    });
  });

  describe('Origin and Host when not on loopback', () => {
    let open: TestApp;
    beforeAll(async () => {
      // Listening address as configured: not loopback, so localhost origins are nothing special; ALLOWED_HOSTS turns the Host check on.
      open = await startTestApp({ HOST: '0.0.0.0', PUBLIC_URL, ALLOWED_HOSTS: 'api.example.com' });
    });
    afterAll(async () => {
      await open?.close();
    });

    it('a localhost origin is 403 unless configured; PUBLIC_URL origin is allowed', async () => {
      const local = await rpc(open, tenant.key, PING, { Origin: 'http://localhost:1234', Host: 'api.example.com' });
      expect(local.status).toBe(403);
      const pub = await rpc(open, tenant.key, PING, { Origin: PUBLIC_URL, Host: 'api.example.com' });
      expect(pub.status).toBe(200);
    });

    it('with ALLOWED_HOSTS, only those hosts and the PUBLIC_URL host pass', async () => {
      expect((await rpc(open, tenant.key, PING, { Host: 'api.example.com' })).status).toBe(200);
      expect((await rpc(open, tenant.key, PING, { Host: 'reblog.example.com' })).status).toBe(200);
      expect((await rpc(open, tenant.key, PING, { Host: 'evil.example' })).status).toBe(403);
    });
  });

  describe('authentication', () => {
    it('no credential is 401 with the exact WWW-Authenticate challenge and a JSON-RPC error with the id', async () => {
      const res = await rpc(t, null, PING);
      expect(res.headers['www-authenticate']).toBe(CHALLENGE);
      expectRpcError(res, 401, -32000, 7);
    });

    it.each([
      ['an unknown API key', 'Bearer rbk_' + 'A'.repeat(40), INVALID_TOKEN],
      ['an unknown grant token', 'Bearer rbg_' + 'B'.repeat(40), INVALID_TOKEN],
      ['a malformed token', 'Bearer hello', INVALID_TOKEN],
      ['an empty bearer', 'Bearer ', CHALLENGE],
      ['another scheme', 'Basic dXNlcjpwYXNz', CHALLENGE],
      ['the admin token', 'ADMIN', INVALID_TOKEN],
    ])('%s is 401 with the challenge', async (_name, header, challenge) => {
      const value = header === 'ADMIN' ? `Bearer ${t.adminToken}` : header;
      const res = await rpc(t, null, JSON.stringify(PING), { Authorization: value });
      expect(res.headers['www-authenticate']).toBe(challenge);
      expectRpcError(res, 401, -32000, 7);
    });

    it('the token is compared as sent: with a no-break space before or after it, it is 401', async () => {
      for (const value of [`Bearer ${tenant.key}\u00a0`, `Bearer \u00a0${tenant.key}`, `Bearer  ${tenant.key}`]) {
        const res = await rpc(t, null, JSON.stringify(PING), { Authorization: value });
        expect(res.headers['www-authenticate']).toBe(INVALID_TOKEN);
        expectRpcError(res, 401, -32000, 7);
      }
    });

    it('the auth scheme is case-insensitive (RFC 7235)', async () => {
      const res = await rpc(t, null, JSON.stringify(PING), { Authorization: `bearer ${tenant.key}` });
      expect(res.status).toBe(200);
    });

    it('a revoked API key is 401 on the next request', async () => {
      const { key, id } = await newKey(t, tenant.accountId, [{ project_id: tenant.projectIds[0], role: 'viewer' }]);
      expect((await rpc(t, key, PING)).status).toBe(200);
      await admin(t, 'delete', `/admin/v1/api-keys/${id}`, undefined, 204);
      const res = await rpc(t, key, PING);
      expect(res.headers['www-authenticate']).toBe(INVALID_TOKEN);
      expectRpcError(res, 401, -32000, 7);
    });

    it('a grant token is a credential like an API key; revoked or expired it is 401', async () => {
      const grant = await newGrant(t, tenant.accountId, [{ project_id: tenant.projectIds[0], role: 'editor' }], ['read']);
      expect(grant.token).toMatch(/^rbg_/);
      const client = await connectClient(t, grant.token);
      const list = await client.callTool({ name: 'list_projects', arguments: {} });
      expect((list.structuredContent as any).items).toEqual([expect.objectContaining({ id: tenant.projectIds[0], role: 'editor' })]);
      await client.close();
      await admin(t, 'delete', `/admin/v1/grants/${grant.id}`, undefined, 204);
      expect((await rpc(t, grant.token, PING)).status).toBe(401);

      const expiring = await newGrant(t, tenant.accountId, [{ project_id: tenant.projectIds[0], role: 'viewer' }], ['read']);
      await t.app.get(DataSource).query(`UPDATE credentials SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.id]);
      const expired = await rpc(t, expiring.token, PING);
      expect(expired.headers['www-authenticate']).toBe(INVALID_TOKEN);
      expectRpcError(expired, 401, -32000, 7);
    });

    it('a token in the query string is ignored (still 401)', async () => {
      for (const param of ['access_token', 'token', 'api_key', 'key']) {
        const res = await t.http
          .post(`/mcp?${param}=${encodeURIComponent(tenant.key)}`)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(PING));
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toBe(CHALLENGE);
      }
    });

    it('the protected-resource metadata (RFC 9728) is served at both well-known paths without a credential', async () => {
      for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
        const res = await t.http.get(path);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body.resource).toBe(`${PUBLIC_URL}/mcp`);
        expect(res.body.bearer_methods_supported).toEqual(['header']);
        expect(res.body.scopes_supported).toEqual(['read', 'write', 'generate', 'delete']);
      }
    });
  });

  describe('limits', () => {
    /** A ping whose body is exactly `size` bytes. */
    function pingOfSize(size: number): string {
      const head = '{"jsonrpc":"2.0","id":31,"method":"ping","params":{"pad":"';
      const tail = '"}}';
      return head + 'x'.repeat(size - head.length - tail.length) + tail;
    }

    it('a body of exactly 1 MiB is read', async () => {
      const res = await rpc(t, null, pingOfSize(1024 * 1024), auth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: 31, result: {} });
    });

    it('a body over 1 MiB is 413 with a JSON body whose id is null', async () => {
      const res = await rpc(t, null, pingOfSize(1024 * 1024 + 1), auth());
      expectRpcError(res, 413, -32600, null);
    });

    it('a chunked body over 1 MiB (no Content-Length) is 413 too', async () => {
      const url = new URL(t.baseUrl);
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          { host: url.hostname, port: url.port, path: '/mcp', method: 'POST', headers: { 'Content-Type': 'application/json', ...auth() } },
          (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        const chunk = 'x'.repeat(64 * 1024);
        req.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
        let sent = 0;
        const pump = () => {
          while (sent < 18) {
            sent++;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end('"}}');
        };
        pump();
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } });
    });

    /** A ping whose params hold arrays nested so that the whole message is `levels` deep. */
    const nested = (levels: number) => `{"jsonrpc":"2.0","id":41,"method":"ping","params":{"x":${'['.repeat(levels - 2)}${']'.repeat(levels - 2)}}}`;

    it('JSON nested 64 levels deep is read; 65 is 400 with the id', async () => {
      const ok = await rpc(t, null, nested(64), auth());
      expect(ok.status).toBe(200);
      const deep = await rpc(t, null, nested(65), auth());
      expect(expectRpcError(deep, 400, -32600, 41).message).toContain('64');
      const veryDeep = await rpc(t, null, nested(5000), auth());
      expectRpcError(veryDeep, 400, -32600, 41);
    });
  });

  describe('order of checks: size → Origin/Host → credential → session → protocol version → JSON-RPC', () => {
    it('an oversized body with a bad Origin and no credential is 413', async () => {
      const res = await rpc(t, null, 'x'.repeat(1024 * 1024 + 10), { Origin: 'https://evil.example' });
      expect(res.status).toBe(413);
    });

    it('a bad Origin with no credential is 403; a bad Host with no credential is 403', async () => {
      expect((await rpc(t, null, PING, { Origin: 'https://evil.example' })).status).toBe(403);
      expect((await rpc(t, null, PING, { Host: 'evil.example' })).status).toBe(403);
    });

    it('a bad credential with an unknown session is 401; with malformed JSON it is 401', async () => {
      const a = await rpc(t, 'rbk_' + 'C'.repeat(40), PING, { 'Mcp-Session-Id': 'nope' });
      expect(a.status).toBe(401);
      const b = await rpc(t, null, '{oops', { Authorization: 'Bearer rbk_' + 'C'.repeat(40) });
      expect(b.status).toBe(401);
    });

    it('an unknown session with an unsupported version is 404; with malformed JSON it is 404', async () => {
      const a = await rpc(t, tenant.key, PING, { 'Mcp-Session-Id': 'nope', 'MCP-Protocol-Version': '1999-01-01' });
      expectRpcError(a, 404, -32001, 7);
      const b = await rpc(t, null, '{oops', { ...auth(), 'Mcp-Session-Id': 'nope' });
      expectRpcError(b, 404, -32001, null);
    });

    it('an unsupported version comes before the JSON-RPC checks (unknown method, malformed body)', async () => {
      const a = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 51, method: 'nope/nope' }, { 'MCP-Protocol-Version': '1999-01-01' });
      expect(expectRpcError(a, 400, -32600, 51).message).toContain('1999-01-01');
      const b = await rpc(t, null, '{oops', { ...auth(), 'MCP-Protocol-Version': '1999-01-01' });
      expect(expectRpcError(b, 400, -32600, null).message).toContain('1999-01-01');
    });
  });
});
