import { MISSING_ID } from '../support/fixtures.js';
import { newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { PAGE_CSP, sessionsOf, setCookies, sqlOn } from './sign-in-helpers.js';

// The tests reach the app from 127.0.0.1: trusted with AUTH_PROXY_TRUSTED_CIDRS=127.0.0.1/32, not with 10.0.0.0/8.

describe('proxy sign-in from a trusted peer (AUTH_PROXY_TRUSTED_CIDRS=127.0.0.1/32)', () => {
  let t: TestApp;
  let person: TestUser;
  const HEADER = 'X-Forwarded-Email';

  beforeAll(async () => {
    t = await startTestApp({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: '127.0.0.1/32', OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    person = await newUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('the header signs the person in on /oauth/login: rb_session set, a session row, the signed-in page', async () => {
    const before = await sessionsOf(t, person.id);
    const res = await t.http.get('/oauth/login').set(HEADER, person.email.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(res.text).toContain(`You are signed in as <strong>${person.email}</strong>`);
    const cookie = setCookies(res).rb_session;
    expect(cookie.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/']));
    expect(await sessionsOf(t, person.id)).toBe(before + 1);

    // The same person again with the cookie: the session is kept, no new one.
    const again = await t.http.get('/oauth/login').set({ [HEADER]: person.email, Cookie: `rb_session=${cookie.value}` });
    expect(again.text).toContain('You are signed in as');
    expect(setCookies(again).rb_session).toBeUndefined();
    expect(await sessionsOf(t, person.id)).toBe(before + 1);
  });

  it('another person named by the header replaces the session the browser had', async () => {
    const first = await t.http.get('/oauth/login').set(HEADER, person.email);
    const other = await newUser(t);
    const firstCookie = `rb_session=${setCookies(first).rb_session.value}`;
    const before = await sessionsOf(t, person.id);
    const res = await t.http.get('/oauth/login').set({ [HEADER]: other.email, Cookie: firstCookie });
    expect(res.text).toContain(`You are signed in as <strong>${other.email}</strong>`);
    expect(await sessionsOf(t, person.id)).toBe(before - 1);
    expect(await sessionsOf(t, other.id)).toBe(1);
  });

  it.each(['/console/', '/console/projects/1', '/console', '/oauth/authorize?client_id=x'])('also on %s: the header sets rb_session there', async (path) => {
    const res = await t.http.get(path).set(HEADER, person.email);
    expect(setCookies(res).rb_session?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it.each(['/consoles', '/oauthx/login', '/healthz', '/assets/reblog.css'])('not on %s', async (path) => {
    const res = await t.http.get(path).set(HEADER, person.email);
    expect(setCookies(res).rb_session).toBeUndefined();
  });

  it('an email with no user: 403 page "ask your operator to add you", no session; escaped', async () => {
    const email = 'nobody-<script>alert(1)</script>@example.com';
    const res = await t.http.get('/oauth/login').set(HEADER, email);
    expect(res.status).toBe(403);
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(res.text).toContain('ask your operator to add you');
    expect(res.text).not.toMatch(/<script/i);
    expect(res.text).toContain('nobody-&lt;script&gt;alert(1)&lt;/script&gt;@example.com');
    expect(setCookies(res).rb_session).toBeUndefined();
    const { rows } = await sqlOn(t, `SELECT count(*)::int AS n FROM users WHERE email LIKE 'nobody-%'`);
    expect(rows[0].n).toBe(0);
  });

  it('a disabled person: 403 page saying disabled, no session', async () => {
    const disabled = await newUser(t);
    await sqlOn(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, [disabled.id]);
    const res = await t.http.get('/oauth/login').set(HEADER, disabled.email);
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/disabled/);
    expect(setCookies(res).rb_session).toBeUndefined();
    expect(await sessionsOf(t, disabled.id)).toBe(0);
  });

  it('never authenticates /mcp or /admin/v1, and is ignored on the client endpoints of /oauth', async () => {
    const mcp = await t.http
      .post('/mcp')
      .set({ [HEADER]: person.email, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(mcp.status).toBe(401);
    expect(setCookies(mcp).rb_session).toBeUndefined();
    const adminApi = await t.http.post(`/admin/v1/users/${person.id}/login-links`).set(HEADER, person.email).send({});
    expect(adminApi.status).toBe(401);
    const adminGet = await t.http.get(`/admin/v1/accounts/${MISSING_ID}`).set(HEADER, person.email);
    expect(adminGet.status).toBe(401);
    for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke']) {
      const res = await t.http.post(path).set(HEADER, 'nobody@example.com').type('form').send({});
      expect(res.status).not.toBe(403);
      expect(setCookies(res).rb_session).toBeUndefined();
    }
  });

  it('no header, proxy the only method: the 401 page saying to sign in through the gateway', async () => {
    const res = await t.http.get('/oauth/login');
    expect(res.status).toBe(401);
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(res.text).toMatch(/Sign in through your company's gateway/);
    expect(res.text).not.toMatch(/name="token"/);
    expect(setCookies(res).rb_session).toBeUndefined();
  });
});

describe('proxy sign-in with a custom AUTH_PROXY_USER_HEADER', () => {
  it('reads that header (any case) and ignores X-Forwarded-Email', async () => {
    const t = await startTestApp({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: '127.0.0.1', AUTH_PROXY_USER_HEADER: 'X-Auth-Request-Email' });
    try {
      const person = await newUser(t);
      const ignored = await t.http.get('/oauth/login').set('X-Forwarded-Email', person.email);
      expect(ignored.status).toBe(401);
      const res = await t.http.get('/oauth/login').set('x-auth-request-email', person.email);
      expect(res.status).toBe(200);
      expect(setCookies(res).rb_session).toBeDefined();
    } finally {
      await t.close();
    }
  });
});

describe('proxy sign-in from an untrusted peer (AUTH_PROXY_TRUSTED_CIDRS=10.0.0.0/8)', () => {
  let person: TestUser;

  it('with link also enabled: the header is ignored (even with X-Forwarded-For in the range); the link sign-in page', async () => {
    const t = await startTestApp({ LOGIN_METHODS: 'proxy,link', AUTH_PROXY_TRUSTED_CIDRS: '10.0.0.0/8' });
    try {
      person = await newUser(t);
      for (const headers of [{ 'X-Forwarded-Email': person.email }, { 'X-Forwarded-Email': person.email, 'X-Forwarded-For': '10.1.2.3' }]) {
        const res = await t.http.get('/oauth/login').set(headers);
        expect(res.status).toBe(200);
        expect(res.text).toMatch(/<input type="text" id="token" name="token"/);
        expect(res.text).not.toContain('You are signed in');
        expect(setCookies(res).rb_session).toBeUndefined();
      }
      const unknown = await t.http.get('/oauth/login').set('X-Forwarded-Email', 'nobody@example.com');
      expect(unknown.status).toBe(200);
      expect(await sessionsOf(t, person.id)).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('with proxy alone: the 401 gateway page, header or not', async () => {
    const t = await startTestApp({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: '10.0.0.0/8' });
    try {
      const someone = await newUser(t);
      const res = await t.http.get('/oauth/login').set('X-Forwarded-Email', someone.email);
      expect(res.status).toBe(401);
      expect(res.text).toMatch(/gateway/);
      expect(setCookies(res).rb_session).toBeUndefined();
      expect(await sessionsOf(t, someone.id)).toBe(0);
    } finally {
      await t.close();
    }
  });
});
