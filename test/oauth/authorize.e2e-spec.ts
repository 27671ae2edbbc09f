import { DataSource } from 'typeorm';
import { hashSecret } from '../../src/auth/secrets.js';
import { OPEN_REQUESTS_PER_SESSION } from '../../src/oauth/authorize/authorizations.repository.js';
import { newAccountWithProjects } from '../support/fixtures.js';
import { approval, authorizeParams, authorizeQuery, newClient, openConsent, pkcePair, postConsent, redirectParams } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// GET /oauth/authorize (docs/oauth.md#authorize), its checks in order, each with the request that must fail.

describe('GET /oauth/authorize', () => {
  let t: TestApp;
  let issuer: string;
  let client: Awaited<ReturnType<typeof newClient>>;
  let session: { cookie: string; csrf: string };
  let person: { id: string; email: string };
  let acme: { accountId: string; projectIds: string[] };
  let second: { accountId: string; projectIds: string[] };
  const pkce = pkcePair();

  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    issuer = t.config.publicUrl;
    acme = await newAccountWithProjects(t, [{ name: 'Acme blog' }, { name: 'Acme docs' }, { name: 'Acme secret' }]);
    second = await newAccountWithProjects(t, [{ name: 'Side project' }]);
    person = await newUser(t);
    await addAccountMember(t, acme.accountId, person.id, 'member');
    await addProjectMember(t, acme.accountId, acme.projectIds[0], person.id, 'editor');
    await addProjectMember(t, acme.accountId, acme.projectIds[1], person.id, 'viewer');
    await addAccountMember(t, second.accountId, person.id, 'owner');
    session = await signedIn(t, person.id);
    client = await newClient(t, {
      client_name: 'Acme Agent',
      redirect_uris: [
        'https://app.example.com/cb?tenant=1',
        'http://127.0.0.1:9999/callback',
        'cursor://anysphere.cursor-mcp/oauth/callback',
        'http://localhost/cb',
      ],
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const params = (extra: Record<string, string | undefined> = {}) => authorizeParams(client, pkce, extra);
  const get = (query: Record<string, string | undefined>, cookie = session.cookie) =>
    t.http
      .get(`/oauth/authorize?${authorizeQuery(query)}`)
      .set('Cookie', cookie)
      .redirects(0);
  const requestCount = async () =>
    Number((await t.app.get(DataSource).query(`SELECT count(*) AS n FROM oauth_requests WHERE client_id = $1`, [client.client_id]))[0].n);

  /** An HTML error page, 400, that sends nothing to the client. */
  function expectErrorPage(res: { status: number; headers: Record<string, string>; text: string }, mention: RegExp) {
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.text).toMatch(mention);
  }

  describe('1. unknown client or unregistered redirect_uri: a 400 page, never a redirect', () => {
    it('an unknown client_id', async () => expectErrorPage(await get(params({ client_id: 'no-such-client' })), /no-such-client/));
    it('no client_id', async () => expectErrorPage(await get(params({ client_id: undefined })), /client_id is missing/));
    it('client_id twice', async () => {
      const res = await t.http
        .get(`/oauth/authorize?${authorizeQuery(params())}&client_id=${client.client_id}`)
        .set('Cookie', session.cookie)
        .redirects(0);
      expectErrorPage(res, /more than once/);
    });
    it('a redirect_uri not registered', async () =>
      expectErrorPage(await get(params({ redirect_uri: 'https://evil.example/cb' })), /not one that Acme Agent registered/));
    it('no redirect_uri', async () => expectErrorPage(await get(params({ redirect_uri: undefined })), /no redirect_uri/));
    it('a registered URI with another query', async () =>
      expectErrorPage(await get(params({ redirect_uri: 'https://app.example.com/cb?tenant=2' })), /not one/));
    it('a registered https URI on another port', async () =>
      expectErrorPage(await get(params({ redirect_uri: 'https://app.example.com:444/cb?tenant=1' })), /not one/));
    it('localhost is not 127.0.0.1 (loopback on any port, but the host as registered)', async () => {
      expectErrorPage(await get(params({ redirect_uri: 'http://localhost:9999/callback' })), /not one/);
      expectErrorPage(await get(params({ redirect_uri: 'http://127.0.0.1:5000/cb' })), /not one/);
    });
    it('a bad redirect_uri is checked before anything else is (no redirect even with response_type=token)', async () => {
      expectErrorPage(await get(params({ redirect_uri: 'https://evil.example/cb', response_type: 'token', code_challenge: undefined })), /not one/);
    });
    it('stores nothing', async () => {
      const before = await requestCount();
      await get(params({ redirect_uri: 'https://evil.example/cb' }));
      expect(await requestCount()).toBe(before);
    });

    it.each([
      ['127.0.0.1 on another port', 'http://127.0.0.1:51234/callback'],
      ['127.0.0.1 with no port', 'http://127.0.0.1/callback'],
      ['localhost on a port', 'http://localhost:8123/cb'],
    ])('a loopback URI matches on any port: %s', async (_what, uri) => {
      const res = await get(params({ redirect_uri: uri }));
      expect(res.status).toBe(200);
    });
  });

  describe('2. other errors redirect with error, error_description, state and iss', () => {
    /** A redirect to the registered URI carrying `error`. */
    function expectRedirectError(
      res: { status: number; headers: Record<string, string> },
      error: string,
      state: string | undefined,
      uri = client.redirect_uris[0],
    ) {
      expect(res.status).toBe(302);
      const location = res.headers.location;
      expect(location.startsWith(uri + (uri.includes('?') ? '&' : '?'))).toBe(true);
      const p = redirectParams(location);
      expect(p).toEqual({
        ...(uri.includes('tenant=1') ? { tenant: '1' } : {}),
        error,
        error_description: expect.any(String),
        iss: issuer,
        ...(state !== undefined ? { state } : {}),
      });
      expect(p.code).toBeUndefined();
    }

    it.each([
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['no response_type', { response_type: undefined }, 'unsupported_response_type'],
      ['no code_challenge', { code_challenge: undefined }, 'invalid_request'],
      ['a code_challenge of 42 characters', { code_challenge: 'a'.repeat(42) }, 'invalid_request'],
      ['a code_challenge of 129 characters', { code_challenge: 'a'.repeat(129) }, 'invalid_request'],
      ['a code_challenge with characters outside base64url', { code_challenge: 'a'.repeat(42) + '=' }, 'invalid_request'],
      ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['no code_challenge_method (counts as not S256)', { code_challenge_method: undefined }, 'invalid_request'],
      ['code_challenge_method=s256 (case matters)', { code_challenge_method: 's256' }, 'invalid_request'],
      ['a resource of another server', { resource: 'https://other.example/mcp' }, 'invalid_target'],
      ['a resource on another path of this server', { resource: 'PUBLIC/admin' }, 'invalid_target'],
      ['a resource with a query', { resource: 'PUBLIC/mcp?x=1' }, 'invalid_target'],
      ['a resource on http when PUBLIC_URL is http on another port', { resource: 'http://127.0.0.1:1/mcp' }, 'invalid_target'],
      ['only unknown scopes', { scope: 'admin offline_access' }, 'invalid_scope'],
    ])('%s', async (_what, extra, error) => {
      const fixed = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v?.replace('PUBLIC', issuer)]));
      const query = params(fixed);
      expectRedirectError(await get(query), error, query.state);
    });

    it('a parameter sent twice is invalid_request', async () => {
      const query = params();
      const res = await t.http
        .get(`/oauth/authorize?${authorizeQuery(query)}&scope=read&scope=write`)
        .set('Cookie', session.cookie)
        .redirects(0);
      expectRedirectError(res, 'invalid_request', query.state);
    });

    it('a state over 1 KiB (1025 bytes) is invalid_request, and nothing is stored', async () => {
      const before = await requestCount();
      for (const state of ['s'.repeat(1025), '\u00e9'.repeat(513)]) {
        expect(Buffer.byteLength(state)).toBeGreaterThan(1024);
        const res = await get(params({ state }));
        expectRedirectError(res, 'invalid_request', state);
        expect(redirectParams(res.headers.location).error_description).toMatch(/state.*1024 bytes/);
      }
      expect(await requestCount()).toBe(before);
    });

    it('a state of exactly 1 KiB is accepted, and kept as sent', async () => {
      const state = 'x'.repeat(1022) + '\u00e9';
      expect(Buffer.byteLength(state)).toBe(1024);
      const page = await openConsent(t, session, params({ state }));
      expect(page.status).toBe(200);
      const [stored] = await t.app.get(DataSource).query(`SELECT state FROM oauth_requests WHERE id_hash = $1`, [hashSecret(page.requestId)]);
      expect(stored.state).toBe(state);
    });

    it('without state, the redirect carries none', async () => {
      expectRedirectError(await get(params({ state: undefined, response_type: 'token' })), 'unsupported_response_type', undefined);
    });

    it('the errors are checked in the documented order: response_type first, then PKCE, resource, scopes', async () => {
      const all = { response_type: 'token', code_challenge: undefined, resource: 'https://x.example', scope: 'admin' };
      const q = params(all);
      expect(redirectParams((await get(q)).headers.location).error).toBe('unsupported_response_type');
      expect(redirectParams((await get({ ...q, response_type: 'code' })).headers.location).error).toBe('invalid_request');
      expect(redirectParams((await get({ ...q, response_type: 'code', code_challenge: pkce.challenge })).headers.location).error).toBe('invalid_target');
      expect(redirectParams((await get({ ...q, response_type: 'code', code_challenge: pkce.challenge, resource: undefined })).headers.location).error).toBe(
        'invalid_scope',
      );
    });

    it('errors reach an app by its private-use scheme, and a loopback URI on the port asked', async () => {
      const toApp = params({ redirect_uri: 'cursor://anysphere.cursor-mcp/oauth/callback', response_type: 'token' });
      expectRedirectError(await get(toApp), 'unsupported_response_type', toApp.state, 'cursor://anysphere.cursor-mcp/oauth/callback');
      const toLoopback = params({ redirect_uri: 'http://127.0.0.1:40001/callback', code_challenge_method: 'plain' });
      expectRedirectError(await get(toLoopback), 'invalid_request', toLoopback.state, 'http://127.0.0.1:40001/callback');
    });

    it('errors redirect even when nobody is signed in', async () => {
      const q = params({ response_type: 'token' });
      expectRedirectError(await get(q, ''), 'unsupported_response_type', q.state);
    });

    it.each([
      ['43 characters', { code_challenge: 'A'.repeat(43) }],
      ['128 characters', { code_challenge: '-._~'.repeat(32) }],
      ['resource PUBLIC_URL/mcp', { resource: 'PUBLIC/mcp' }],
      ['resource PUBLIC_URL/mcp/ (trailing / ignored)', { resource: 'PUBLIC/mcp/' }],
      ['resource PUBLIC_URL', { resource: 'PUBLIC' }],
      ['resource PUBLIC_URL/', { resource: 'PUBLIC/' }],
      ['known and unknown scopes (unknown ones dropped)', { scope: 'read offline_access' }],
      ['an empty scope (all four)', { scope: '' }],
    ])('accepted: %s', async (_what, extra) => {
      const fixed = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v.replace('PUBLIC', issuer)]));
      const res = await get(params(fixed));
      expect(res.status).toBe(200);
    });

    it('the resource scheme is matched in any case (the host too: see authorize-params.spec.ts)', async () => {
      expect((await get(params({ resource: `${issuer.replace('http://', 'HTTP://')}/mcp` }))).status).toBe(200);
    });
  });

  describe('3. not signed in: to the sign-in page, then back here', () => {
    it.each([
      ['no cookie', ''],
      ['an unknown session', 'rb_session=' + 'x'.repeat(43)],
    ])('%s: 302 to /oauth/login with return_to = this authorize URL', async (_what, cookie) => {
      const before = await requestCount();
      const query = authorizeQuery(params({ scope: 'read write' }));
      const res = await t.http.get(`/oauth/authorize?${query}`).set('Cookie', cookie).redirects(0);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.location, 'http://x');
      expect(location.pathname).toBe('/oauth/login');
      expect(location.searchParams.get('return_to')).toBe(`/oauth/authorize?${query}`);
      expect(await requestCount()).toBe(before);
    });

    it('an expired session, or one of a disabled person, signs in again', async () => {
      const other = await newUser(t);
      const expired = await signedIn(t, other.id);
      const db = t.app.get(DataSource);
      await db.query(`UPDATE browser_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [other.id]);
      expect((await get(params(), expired.cookie)).headers.location).toMatch(/^\/oauth\/login\?return_to=/);
      const disabled = await newUser(t);
      const disabledSession = await signedIn(t, disabled.id);
      await db.query(`UPDATE users SET disabled_at = now() WHERE id = $1`, [disabled.id]);
      expect((await get(params(), disabledSession.cookie)).headers.location).toMatch(/^\/oauth\/login\?return_to=/);
    });
  });

  describe('4. the consent page', () => {
    it('names the client (unverified), the redirect host in bold, who is signed in; stores the request for 10 minutes', async () => {
      const page = await openConsent(t, session, params());
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<strong>Acme Agent</strong> <span class="badge">unverified</span>');
      expect(page.text).toContain('<strong>app.example.com</strong>');
      expect(page.text).not.toContain('a program on this computer');
      expect(page.text).toContain(`signed in as <strong>${person.email}</strong>`);
      expect(page.requestId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(page.csrf).toBe(session.csrf);
      const [stored] = await t.app
        .get(DataSource)
        .query(`SELECT *, extract(epoch FROM expires_at - created_at) AS ttl FROM oauth_requests WHERE id_hash = $1`, [hashSecret(page.requestId)]);
      expect(stored).toMatchObject({
        client_id: client.client_id,
        redirect_uri: client.redirect_uris[0],
        code_challenge: pkce.challenge,
        scopes: ['read', 'write', 'generate', 'delete'],
        used_at: null,
      });
      expect(Number(stored.ttl)).toBe(600);
      const [own] = await t.app.get(DataSource).query(`SELECT id_hash FROM browser_sessions WHERE user_id = $1`, [person.id]);
      expect(stored.browser_session_hash).toEqual(own.id_hash);
    });

    it('sends the documented CSP with form-action for the redirect origin, X-Frame-Options and no-referrer', async () => {
      const page = await openConsent(t, session, params());
      expect(page.headers['content-security-policy']).toBe(
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' https://app.example.com; frame-ancestors 'none'",
      );
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.text).not.toMatch(/<script/i);
    });

    it('an app scheme: form-action names the scheme; a loopback redirect: form-action its origin, and a warning', async () => {
      const app = await openConsent(t, session, params({ redirect_uri: 'cursor://anysphere.cursor-mcp/oauth/callback' }));
      expect(app.headers['content-security-policy']).toContain("form-action 'self' cursor:;");
      expect(app.text).toContain('<strong>cursor://anysphere.cursor-mcp</strong>');
      expect(app.text).toContain('an app installed on this computer');
      const loopback = await openConsent(t, session, params({ redirect_uri: 'http://127.0.0.1:43210/callback' }));
      expect(loopback.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:43210;");
      expect(loopback.text).toContain('<strong>127.0.0.1:43210</strong>');
      expect(loopback.text).toContain('a program on this computer');
    });

    it('the scopes asked, in plain words, delete unchecked', async () => {
      const page = await openConsent(t, session, params());
      const boxes = [...page.text.matchAll(/<input type="checkbox" name="scope" value="(\w+)"( checked)?>/g)].map((m) => [m[1], Boolean(m[2])]);
      expect(boxes).toEqual([
        ['read', true],
        ['write', true],
        ['generate', true],
        ['delete', false],
      ]);
      expect(page.text).toContain('Delete articles');
      const fewer = await openConsent(t, session, params({ scope: 'read delete unknown' }));
      expect([...fewer.text.matchAll(/name="scope" value="(\w+)"/g)].map((m) => m[1])).toEqual(['read', 'delete']);
    });

    it("the first account's projects where the person has a role, each with a role select capped at it", async () => {
      const page = await openConsent(t, session, params());
      expect(page.accountId).toBe(acme.accountId);
      const projects = [...page.text.matchAll(/name="project" value="([^"]+)"/g)].map((m) => m[1]);
      expect(projects).toEqual([acme.projectIds[0], acme.projectIds[1]]);
      expect(page.text).not.toContain('Acme secret');
      const options = (id: string) =>
        [...new RegExp(`<select name="role_${id}"[^>]*>(.*?)</select>`).exec(page.text)![1].matchAll(/value="(\w+)"/g)].map((m) => m[1]);
      expect(options(acme.projectIds[0])).toEqual(['viewer', 'editor']);
      expect(options(acme.projectIds[1])).toEqual(['viewer']);
      expect(page.text).toMatch(new RegExp(`<option value="editor" selected>`));
    });

    it('an account picker: links that reload the page with &account_id=, and the chosen account shows its projects', async () => {
      const page = await openConsent(t, session, params());
      const links = [...page.text.matchAll(/<a href="(\/oauth\/authorize\?[^"]+)">([^<]+)<\/a>/g)].map((m) => ({
        href: m[1].replace(/&amp;/g, '&'),
        name: m[2],
      }));
      expect(links).toHaveLength(1);
      expect(links[0].href).toMatch(new RegExp(`&account_id=${second.accountId}$`));
      const other = await t.http.get(links[0].href).set('Cookie', session.cookie);
      expect(other.status).toBe(200);
      expect(other.text).toContain(`name="account_id" value="${second.accountId}"`);
      // An owner of the account: every project, up to owner.
      expect([...other.text.matchAll(/name="project" value="([^"]+)"/g)].map((m) => m[1])).toEqual(second.projectIds);
      expect(other.text).toContain('<option value="owner" selected>');
      // The only project is ticked.
      expect(other.text).toContain(`name="project" value="${second.projectIds[0]}" checked`);
    });

    it('an account_id the person does not belong to shows their first account', async () => {
      const stranger = await newAccountWithProjects(t, [{ name: 'Not yours' }]);
      const page = await openConsent(t, session, params({ account_id: stranger.accountId }));
      expect(page.accountId).toBe(acme.accountId);
      expect(page.text).not.toContain('Not yours');
    });

    it('one account: no picker', async () => {
      const solo = await newUser(t);
      await addAccountMember(t, second.accountId, solo.id, 'owner');
      const page = await openConsent(t, await signedIn(t, solo.id), params());
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('aria-label="Accounts"');
    });

    it('a person in no account: a 403 page, with a way back to the app', async () => {
      const nobody = await newUser(t);
      const page = await openConsent(t, await signedIn(t, nobody.id), params());
      expect(page.status).toBe(403);
      expect(page.text).toContain('not a member of any account');
      expect(page.text).not.toContain('name="request_id"');
    });

    describe(`at most ${OPEN_REQUESTS_PER_SESSION} open requests per browser session`, () => {
      const openOf = async (cookie: string) => {
        const hash = hashSecret(cookie.slice(cookie.indexOf('=') + 1));
        return (await t.app.get(DataSource).query(`SELECT id_hash FROM oauth_requests WHERE browser_session_hash = $1 AND used_at IS NULL`, [hash])).map(
          (r: { id_hash: Buffer }) => r.id_hash.toString('hex'),
        ) as string[];
      };

      it(`${OPEN_REQUESTS_PER_SESSION + 5} pages leave the newest ${OPEN_REQUESTS_PER_SESSION}: the oldest are gone, and their consent is a clean 403`, async () => {
        expect(OPEN_REQUESTS_PER_SESSION).toBe(20);
        const own = await signedIn(t, person.id);
        const pages = [];
        for (let i = 0; i < OPEN_REQUESTS_PER_SESSION + 5; i++) {
          const page = await openConsent(t, own, params());
          expect(page.status).toBe(200);
          pages.push(page);
        }
        const open = await openOf(own.cookie);
        expect(open.sort()).toEqual(
          pages
            .slice(5)
            .map((p) => hashSecret(p.requestId).toString('hex'))
            .sort(),
        );
        // Another session's requests are not counted against this one.
        expect((await openConsent(t, session, params())).status).toBe(200);
        expect(await openOf(own.cookie)).toHaveLength(OPEN_REQUESTS_PER_SESSION);

        const oldest = await postConsent(t, own, approval(pages[0], own, [{ project_id: acme.projectIds[0], role: 'editor' }], ['read']));
        expect(oldest.status).toBe(403);
        expect(oldest.headers.location).toBeUndefined();
        expect(oldest.text).toMatch(/unknown, or newer ones/);
        const kept = await postConsent(t, own, approval(pages[5], own, [{ project_id: acme.projectIds[0], role: 'editor' }], ['read']));
        expect(kept.status).toBe(302);
        expect(redirectParams(kept.headers.location).code).toEqual(expect.any(String));
      });

      it('many pages opened at once still leave at most the cap', async () => {
        const own = await signedIn(t, person.id);
        const pages = await Promise.all(Array.from({ length: OPEN_REQUESTS_PER_SESSION + 10 }, () => openConsent(t, own, params())));
        expect(pages.map((p) => p.status)).toEqual(pages.map(() => 200));
        expect(await openOf(own.cookie)).toHaveLength(OPEN_REQUESTS_PER_SESSION);
      });
    });

    it('escapes every value from the client and the request', async () => {
      const evil = await newClient(t, { client_name: '<img src=x onerror=alert(1)>"Evil"', redirect_uris: ['https://app.example.com/cb'] });
      const page = await openConsent(t, session, authorizeParams(evil, pkce, { state: '"><script>alert(1)</script>' }));
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('<img src=x');
      expect(page.text).not.toContain('<script>');
      expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;Evil&quot;');
    });
  });
});

describe('GET /oauth/authorize: the per-IP limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('over OAUTH_IP_RATE_LIMIT_PER_MINUTE from one address: a 429 page with Retry-After; another address, and the token endpoint, count apart', async () => {
    const authorize = (ip: string) =>
      t.http
        .get(`/oauth/authorize?${authorizeQuery({ response_type: 'code', client_id: 'nobody', redirect_uri: 'http://127.0.0.1/cb' })}`)
        .set('X-Forwarded-For', ip);
    for (let i = 0; i < 3; i++) expect((await authorize('203.0.113.7')).status).toBe(400);
    const refused = await authorize('203.0.113.7');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.text).toContain('Too many connection requests came from your address');
    expect((await authorize('203.0.113.8')).status).toBe(400);
    const token = await t.http
      .post('/oauth/token')
      .set('X-Forwarded-For', '203.0.113.7')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'y' });
    expect(token.status).toBe(401);
  });
});
