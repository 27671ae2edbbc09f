import { startTestApp, type TestApp } from '../support/test-app.js';
import { MISSING_ID, newAccount } from '../support/fixtures.js';
import { call, expectError } from './admin-helpers.js';

/** Every admin endpoint of docs/admin-api.md, with ids filled in by `ids`. */
const ENDPOINTS: { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; path: string; openapi: string }[] = [
  { method: 'post', path: '/admin/v1/accounts', openapi: '/admin/v1/accounts' },
  { method: 'get', path: '/admin/v1/accounts/:account', openapi: '/admin/v1/accounts/{account_id}' },
  { method: 'post', path: '/admin/v1/accounts/:account/projects', openapi: '/admin/v1/accounts/{account_id}/projects' },
  { method: 'get', path: '/admin/v1/accounts/:account/projects', openapi: '/admin/v1/accounts/{account_id}/projects' },
  { method: 'patch', path: '/admin/v1/projects/:id', openapi: '/admin/v1/projects/{project_id}' },
  { method: 'post', path: '/admin/v1/accounts/:account/api-keys', openapi: '/admin/v1/accounts/{account_id}/api-keys' },
  { method: 'get', path: '/admin/v1/accounts/:account/api-keys', openapi: '/admin/v1/accounts/{account_id}/api-keys' },
  { method: 'delete', path: '/admin/v1/api-keys/:id', openapi: '/admin/v1/api-keys/{id}' },
  { method: 'post', path: '/admin/v1/accounts/:account/grants', openapi: '/admin/v1/accounts/{account_id}/grants' },
  { method: 'get', path: '/admin/v1/accounts/:account/grants', openapi: '/admin/v1/accounts/{account_id}/grants' },
  { method: 'delete', path: '/admin/v1/grants/:id', openapi: '/admin/v1/grants/{id}' },
  { method: 'get', path: '/admin/v1/accounts/:account/activity', openapi: '/admin/v1/accounts/{account_id}/activity' },
  { method: 'get', path: '/admin/v1/accounts/:account/audit', openapi: '/admin/v1/accounts/{account_id}/audit' },
  { method: 'get', path: '/admin/v1/audit', openapi: '/admin/v1/audit' },
  { method: 'get', path: '/admin/v1/accounts/:account/jobs', openapi: '/admin/v1/accounts/{account_id}/jobs' },
  { method: 'get', path: '/admin/v1/projects/:id/trash', openapi: '/admin/v1/projects/{project_id}/trash' },
  { method: 'post', path: '/admin/v1/articles/:id/restore', openapi: '/admin/v1/articles/{article_id}/restore' },
  // People (docs/admin-api.md#people-and-memberships).
  { method: 'post', path: '/admin/v1/users', openapi: '/admin/v1/users' },
  { method: 'get', path: '/admin/v1/users', openapi: '/admin/v1/users' },
  { method: 'get', path: '/admin/v1/users/:id', openapi: '/admin/v1/users/{user_id}' },
  { method: 'patch', path: '/admin/v1/users/:id', openapi: '/admin/v1/users/{user_id}' },
  { method: 'put', path: '/admin/v1/accounts/:account/members/:id', openapi: '/admin/v1/accounts/{account_id}/members/{user_id}' },
  { method: 'get', path: '/admin/v1/accounts/:account/members', openapi: '/admin/v1/accounts/{account_id}/members' },
  { method: 'delete', path: '/admin/v1/accounts/:account/members/:id', openapi: '/admin/v1/accounts/{account_id}/members/{user_id}' },
  { method: 'put', path: `/admin/v1/projects/:id/members/${MISSING_ID}`, openapi: '/admin/v1/projects/{project_id}/members/{user_id}' },
  { method: 'get', path: '/admin/v1/projects/:id/members', openapi: '/admin/v1/projects/{project_id}/members' },
  { method: 'delete', path: `/admin/v1/projects/:id/members/${MISSING_ID}`, openapi: '/admin/v1/projects/{project_id}/members/{user_id}' },
  { method: 'post', path: '/admin/v1/users/:id/login-links', openapi: '/admin/v1/users/{user_id}/login-links' },
  { method: 'get', path: '/admin/v1/oauth-clients', openapi: '/admin/v1/oauth-clients' },
  { method: 'delete', path: '/admin/v1/oauth-clients/:id', openapi: '/admin/v1/oauth-clients/{client_id}' },
  // Identity providers (docs/admin-api.md#identity-providers).
  { method: 'get', path: '/admin/v1/accounts/:account/identity-providers', openapi: '/admin/v1/accounts/{account_id}/identity-providers' },
  { method: 'post', path: '/admin/v1/accounts/:account/identity-providers', openapi: '/admin/v1/accounts/{account_id}/identity-providers' },
  { method: 'get', path: '/admin/v1/accounts/:account/identity-providers/:id', openapi: '/admin/v1/accounts/{account_id}/identity-providers/{idp_id}' },
  { method: 'patch', path: '/admin/v1/accounts/:account/identity-providers/:id', openapi: '/admin/v1/accounts/{account_id}/identity-providers/{idp_id}' },
  { method: 'delete', path: '/admin/v1/accounts/:account/identity-providers/:id', openapi: '/admin/v1/accounts/{account_id}/identity-providers/{idp_id}' },
];

describe('admin API: authentication, documents and HTTP edges', () => {
  let t: TestApp;
  let accountId: string;
  const fill = (path: string, id = MISSING_ID) => path.replace(':account', accountId).replace(':id', id);

  beforeAll(async () => {
    t = await startTestApp();
    accountId = (await newAccount(t)).id;
  });
  afterAll(async () => {
    await t.close();
  });

  describe('401 without the admin token', () => {
    it.each(ENDPOINTS)('$method $path refuses a request with no Authorization header', async ({ method, path }) => {
      const res = await call(t, method, fill(path), method === 'get' || method === 'delete' ? undefined : { name: 'x' }, null);
      const error = expectError(res, 401, 'unauthorized');
      expect(error.message).toMatch(/Bearer/);
    });

    it.each(ENDPOINTS)('$method $path refuses a wrong token', async ({ method, path }) => {
      const res = await call(t, method, fill(path), method === 'get' || method === 'delete' ? undefined : { name: 'x' }, 'not-the-admin-token-at-all');
      expectError(res, 401, 'unauthorized');
    });

    it('refuses the right token in another scheme, a token with a suffix, and an empty bearer', async () => {
      expectError(await t.http.get(`/admin/v1/accounts/${accountId}`).set('Authorization', `Basic ${t.adminToken}`), 401, 'unauthorized');
      expectError(await t.http.get(`/admin/v1/accounts/${accountId}`).set('Authorization', `Bearer ${t.adminToken}x`), 401, 'unauthorized');
      expectError(await t.http.get(`/admin/v1/accounts/${accountId}`).set('Authorization', 'Bearer '), 401, 'unauthorized');
      expectError(await t.http.get(`/admin/v1/accounts/${accountId}`).set('Authorization', t.adminToken), 401, 'unauthorized');
    });

    it('takes the bearer as sent: white space around it (Unicode too) is not stripped, and a lone NBSP is no token', async () => {
      // (Space and tab at the very end of a header are not part of its value in HTTP: the parser drops them.)
      for (const bearer of [` ${t.adminToken}`, `${t.adminToken}\u00a0`, `\u00a0${t.adminToken}`, `\u00a0`, `\u00a0 \u00a0`, '\u00a0x']) {
        const res = await t.http.get(`/admin/v1/accounts/${accountId}`).set('Authorization', `Bearer ${bearer}`);
        expectError(res, 401, 'unauthorized');
      }
    });

    it('checks the token before the input: a malformed id or body without a token is still 401', async () => {
      expectError(await call(t, 'get', '/admin/v1/accounts/not-a-uuid', undefined, null), 401, 'unauthorized');
      expectError(await call(t, 'post', '/admin/v1/accounts', { bogus: true }, null), 401, 'unauthorized');
    });

    it('accepts the token with a lower-case scheme', async () => {
      const res = await t.http.get(`/admin/v1/accounts/${accountId}`).set('Authorization', `bearer ${t.adminToken}`);
      expect(res.status).toBe(200);
    });
  });

  describe('OpenAPI and docs (no token needed)', () => {
    it('serves the OpenAPI document listing every admin path and method', async () => {
      const res = await t.http.get('/admin/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.openapi).toMatch(/^3\./);
      expect(res.body.info.title).toBe('Reblog MCP admin API');
      const paths = res.body.paths as Record<string, Record<string, unknown>>;
      for (const { method, openapi } of ENDPOINTS) {
        expect(paths).toHaveProperty([openapi, method]);
      }
      const adminPaths = Object.keys(paths).filter((p) => p.startsWith('/admin/v1/'));
      expect(adminPaths.sort()).toEqual([...new Set(ENDPOINTS.map((e) => e.openapi))].sort());
      // The bearer scheme is declared so the UI can send the token.
      expect(res.body.components.securitySchemes).toHaveProperty('bearer');
    });

    it('serves a browsable UI at /admin/v1/docs', async () => {
      const res = await t.http.get('/admin/v1/docs').redirects(2);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/swagger-ui/i);
    });
  });

  describe('request bodies', () => {
    it('answers 413 with a JSON error for a body over 1 MiB', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), owner_email: 'a@example.com' });
      const res = await t.http.post('/admin/v1/accounts').set('Authorization', `Bearer ${t.adminToken}`).set('Content-Type', 'application/json').send(big);
      expect(res.text).not.toMatch(/<html|<!DOCTYPE/i);
      const error = expectError(res, 413, 'payload_too_large');
      expect(error.message).toMatch(/1 MiB/);
    });

    it('accepts a body just under 1 MiB as far as the size goes (then validates it)', async () => {
      const body = JSON.stringify({ name: 'x'.repeat(1000 * 1000), owner_email: 'a@example.com' });
      const res = await t.http.post('/admin/v1/accounts').set('Authorization', `Bearer ${t.adminToken}`).set('Content-Type', 'application/json').send(body);
      const error = expectError(res, 400, 'validation_failed');
      expect(JSON.stringify(error.details)).toMatch(/name/);
    });

    it('answers 400 with a JSON error for malformed JSON', async () => {
      const res = await t.http
        .post('/admin/v1/accounts')
        .set('Authorization', `Bearer ${t.adminToken}`)
        .set('Content-Type', 'application/json')
        .send('{"name": "Acme",');
      expect(res.text).not.toMatch(/<html|<!DOCTYPE/i);
      const error = expectError(res, 400, 'invalid_json');
      expect(error.message).toMatch(/^The request body is not valid JSON/);
    });

    it('answers 400 for a JSON body that is not an object', async () => {
      const cases: [string, string][] = [
        // The parser is strict: only objects and arrays are JSON bodies.
        ['"just a string"', 'invalid_json'],
        ['42', 'invalid_json'],
        ['null', 'invalid_json'],
        ['[]', 'validation_failed'],
        ['[{"name":"a","owner_email":"a@example.com"}]', 'validation_failed'],
      ];
      for (const [body, code] of cases) {
        const res = await t.http.post('/admin/v1/accounts').set('Authorization', `Bearer ${t.adminToken}`).set('Content-Type', 'application/json').send(body);
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code });
      }
    });

    it('answers 400 for a body that is not JSON at all', async () => {
      const res = await t.http.post('/admin/v1/accounts').set('Authorization', `Bearer ${t.adminToken}`).set('Content-Type', 'text/plain').send('name=Acme');
      expectError(res, 400, 'validation_failed');
    });
  });

  describe('unknown routes', () => {
    it('answers 404 in the error envelope', async () => {
      expectError(await call(t, 'get', '/admin/v1/nothing-here'), 404, 'not_found');
      expectError(await call(t, 'get', '/admin/v1/accounts'), 404, 'not_found');
    });
  });
});
