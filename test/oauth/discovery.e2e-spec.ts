import { Controller, Get, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createTenant, newGrant, type Tenant } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/oauth.md#discovery, and the loopback Host rule (docs/protocol.md#origin-and-host) on /oauth/* and /.well-known/*.
const PUBLIC_URL = 'https://reblog.example.com';
const PING = { jsonrpc: '2.0', id: 7, method: 'ping' };
const CHALLENGE = `Bearer resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource", scope="read write generate delete"`;

const RESOURCE = {
  resource: `${PUBLIC_URL}/mcp`,
  authorization_servers: [PUBLIC_URL],
  scopes_supported: ['read', 'write', 'generate', 'delete'],
  bearer_methods_supported: ['header'],
};
const SERVER = {
  issuer: PUBLIC_URL,
  authorization_endpoint: `${PUBLIC_URL}/oauth/authorize`,
  token_endpoint: `${PUBLIC_URL}/oauth/token`,
  registration_endpoint: `${PUBLIC_URL}/oauth/register`,
  revocation_endpoint: `${PUBLIC_URL}/oauth/revoke`,
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer'],
  authorization_grant_profiles_supported: ['urn:ietf:params:oauth:grant-profile:id-jag'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
  scopes_supported: ['read', 'write', 'generate', 'delete'],
  client_id_metadata_document_supported: true,
  authorization_response_iss_parameter_supported: true,
};

/** A page of another module under /oauth, declared after the OAuth module (as the sign-in pages are). */
@Controller('oauth')
class OtherOAuthPages {
  @Get('fixture-page')
  page() {
    return 'served by another module';
  }
}
@Module({ controllers: [OtherOAuthPages] })
class OtherOAuthPagesModule {}

const METADATA_PATHS = [
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
];
const POST_ENDPOINTS = ['/oauth/token', '/oauth/register', '/oauth/revoke'];

describe('OAuth discovery', () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_URL }, [OtherOAuthPagesModule]);
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('metadata documents', () => {
    it.each(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'])(
      '%s is the protected-resource metadata, exactly',
      async (path) => {
        const res = await t.http.get(path);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual(RESOURCE);
      },
    );

    it.each(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])(
      '%s is the authorization-server metadata, every field',
      async (path) => {
        const res = await t.http.get(path);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(SERVER);
      },
    );

    it('every URL comes from PUBLIC_URL, never from Host or X-Forwarded-*', async () => {
      for (const path of METADATA_PATHS) {
        const res = await t.http
          .get(path)
          .set('Host', 'localhost:9')
          .set('X-Forwarded-Host', 'evil.example')
          .set('X-Forwarded-Proto', 'http')
          .set('Forwarded', 'host=evil.example;proto=http');
        expect(res.status).toBe(200);
        expect(JSON.stringify(res.body)).not.toMatch(/evil|localhost|http:/);
      }
    });
  });

  describe('the /mcp 401 challenge', () => {
    it('without a token: resource_metadata and scope, no error', async () => {
      const res = await rpc(t, null, PING);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(CHALLENGE);
    });

    it('with a token that names nothing: error="invalid_token" too', async () => {
      const res = await rpc(t, 'rbg_' + 'x'.repeat(43), PING);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`${CHALLENGE}, error="invalid_token"`);
    });

    it('with a revoked or expired grant: error="invalid_token"', async () => {
      const grant = await newGrant(t, tenant.accountId, [{ project_id: tenant.projectIds[0], role: 'viewer' }], ['read']);
      await t.app.get(DataSource).query(`UPDATE credentials SET expires_at = now() - interval '1 second' WHERE id = $1`, [grant.id]);
      const res = await rpc(t, grant.token, PING);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`${CHALLENGE}, error="invalid_token"`);
    });

    it('the metadata URL of the challenge answers without a credential', async () => {
      const url = new URL(/resource_metadata="([^"]+)"/.exec(CHALLENGE)![1]);
      expect((await t.http.get(url.pathname)).body).toEqual(RESOURCE);
    });
  });

  describe('JSON everywhere under /oauth and /.well-known', () => {
    it.each(['/oauth/nothing', '/oauth/', '/oauth', '/.well-known/nothing', '/.well-known/oauth-authorization-server/extra', '/oauth/token/x'])(
      'GET %s is a JSON 404',
      async (path) => {
        const res = await t.http.get(path);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
      },
    );

    it.each([
      ['get', '/oauth/token', 'POST, OPTIONS'],
      ['put', '/oauth/register', 'POST, OPTIONS'],
      ['delete', '/oauth/revoke', 'POST, OPTIONS'],
      ['post', '/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS'],
      ['post', '/oauth/authorize', 'GET, HEAD'],
      ['get', '/oauth/consent', 'POST'],
    ] as const)('%s %s is a JSON 405 with Allow', async (method, path, allow) => {
      const res = await t.http[method](path);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.body).toEqual({ error: 'method_not_allowed', error_description: expect.any(String) });
    });

    it('a body that is not JSON is a JSON 400 in the OAuth shape', async () => {
      const res = await t.http.post('/oauth/register').set('Content-Type', 'application/json').send('{"redirect_uris": [');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('not valid JSON') });
    });

    it('a body over the server-wide 1 MiB is a JSON 413 in the OAuth shape', async () => {
      const res = await t.http
        .post('/oauth/token')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('x=' + 'a'.repeat(1024 * 1024 + 10));
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    });

    it('a page of another module under /oauth is still routed (the fallback comes after every route)', async () => {
      const res = await t.http.get('/oauth/fixture-page');
      expect(res.status).toBe(200);
      expect(res.text).toBe('served by another module');
    });

    it('token and registration answers carry Cache-Control: no-store, errors included', async () => {
      for (const path of POST_ENDPOINTS) {
        const res = await t.http.get(path);
        expect(res.headers['cache-control']).toBe('no-store');
      }
    });

    // The body parser refuses these before any route: its errors must still carry the endpoint's headers.
    it.each([
      ['malformed JSON', 'application/json', '{"redirect_uris": [', 400],
      ['JSON that is not an object or array', 'application/json', '"redirect_uris"', 400],
      ['a form that is not a form', 'application/x-www-form-urlencoded', '%', 400],
      ['a content type that is neither JSON nor a form', 'text/plain', 'redirect_uris=x', 400],
      ['a body over the server-wide 1 MiB', 'application/x-www-form-urlencoded', 'x=' + 'a'.repeat(1024 * 1024 + 10), 413],
      ['a JSON body over the server-wide 1 MiB', 'application/json', JSON.stringify({ x: 'a'.repeat(1024 * 1024 + 10) }), 413],
    ])('%s: the token, registration and revocation answers carry Cache-Control: no-store and CORS', async (_what, type, body, status) => {
      for (const path of POST_ENDPOINTS) {
        const res = await t.http.post(path).set('Content-Type', type).set('Origin', 'https://app.example.net').send(body);
        expect({ path, status: res.status < 500, cacheControl: res.headers['cache-control'], cors: res.headers['access-control-allow-origin'] }).toEqual({
          path,
          status: true,
          cacheControl: 'no-store',
          cors: '*',
        });
        expect(res.body).toEqual({ error: expect.any(String), error_description: expect.any(String) });
        if (status === 413 || type === 'application/json') expect(res.status).toBe(status);
      }
    });

    it.each(POST_ENDPOINTS)('POST %s refused for its Host still carries Cache-Control: no-store', async (path) => {
      const res = await t.http.post(path).set('Host', 'rebound.example:8080').type('form').send('grant_type=refresh_token');
      expect(res.status).toBe(403);
      expect(res.headers['cache-control']).toBe('no-store');
    });
  });

  describe('CORS', () => {
    it.each([...METADATA_PATHS])('GET %s answers any origin, without credentials', async (path) => {
      const res = await t.http.get(path).set('Origin', 'https://app.example.net');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it.each([...METADATA_PATHS.map((p) => [p, 'GET, HEAD, OPTIONS']), ...POST_ENDPOINTS.map((p) => [p, 'POST, OPTIONS'])])(
      'OPTIONS %s is a 204 preflight',
      async (path, methods) => {
        const res = await t.http
          .options(path)
          .set('Origin', 'https://app.example.net')
          .set('Access-Control-Request-Method', 'POST')
          .set('Access-Control-Request-Headers', 'content-type, authorization');
        expect(res.status).toBe(204);
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.headers['access-control-allow-methods']).toBe(methods);
        expect(res.headers['access-control-allow-headers']).toBe('Content-Type, Authorization');
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
        expect(res.text).toBe('');
      },
    );

    it('POST endpoints answer CORS on their errors too', async () => {
      for (const path of POST_ENDPOINTS) {
        const res = await t.http.post(path).set('Origin', 'https://app.example.net').type('form').send('');
        expect(res.headers['access-control-allow-origin']).toBe('*');
      }
    });

    it('the pages (authorize, consent) answer no CORS header and no preflight', async () => {
      expect((await t.http.get('/oauth/authorize').set('Origin', 'https://app.example.net')).headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await t.http.options('/oauth/consent').set('Origin', 'https://app.example.net').set('Access-Control-Request-Method', 'POST');
      expect(preflight.status).toBe(405);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('the loopback Host rule', () => {
    it.each([...METADATA_PATHS, '/oauth/authorize', '/oauth/nothing'])('GET %s with a foreign Host is a JSON 403', async (path) => {
      const res = await t.http.get(path).set('Host', 'evil.example');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'access_denied', error_description: expect.stringContaining('evil.example') });
    });

    it.each(POST_ENDPOINTS)('POST %s with a foreign Host is a JSON 403 (a DNS-rebound page cannot reach it)', async (path) => {
      const res = await t.http.post(path).set('Host', 'rebound.example:8080').type('form').send('grant_type=refresh_token');
      expect(res.status).toBe(403);
    });

    it.each(['localhost:4321', '127.0.0.1', '[::1]:80', 'reblog.example.com', 'REBLOG.example.com:443'])('Host %s is allowed on loopback', async (host) => {
      const res = await t.http.get('/.well-known/oauth-authorization-server').set('Host', host);
      expect(res.status).toBe(200);
    });
  });
});

describe('OAuth discovery with ALLOWED_HOSTS on a public PUBLIC_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_URL, ALLOWED_HOSTS: 'api.example.org' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a listed host is served, another is 403', async () => {
    expect((await t.http.get('/.well-known/oauth-protected-resource').set('Host', 'api.example.org')).status).toBe(200);
    expect((await t.http.get('/.well-known/oauth-protected-resource').set('Host', 'other.example.org')).status).toBe(403);
  });
});
