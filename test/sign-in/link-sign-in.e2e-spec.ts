import { randomUUID } from 'node:crypto';
import { newUser, signedIn, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import {
  expireLink,
  field,
  linkRow,
  newLink,
  openSignIn,
  PAGE_CSP,
  pathOf,
  postSignIn,
  sessionsOf,
  setCookies,
  signInWithLink,
  sqlOn,
} from './sign-in-helpers.js';

describe('sign-in with a login link (LOGIN_METHODS=link, the default)', () => {
  let t: TestApp;
  let person: TestUser;

  beforeAll(async () => {
    // Every request of this file comes from 127.0.0.1: the per-IP limit has its own test below.
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    person = await newUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /oauth/login?token=…', () => {
    it('shows one "Sign in as <email>" button posting token, return_to and csrf to /oauth/login; no script; the documented CSP', async () => {
      const link = await newLink(t, person.id, { return_to: '/console/projects?x=1' });
      const res = await t.http.get(pathOf(link.url));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).not.toMatch(/<script/i);
      expect(res.text.match(/<button/g)).toHaveLength(1);
      // Whose sign-in it is, so that a person sent someone else's link sees it before pressing.
      expect(res.text).toContain(`<button type="submit">Sign in as ${person.email}</button>`);
      expect(res.text).toContain(`This link signs in <strong>${person.email}</strong>.`);
      expect(res.text).toContain('<form method="post" action="/oauth/login"');
      expect(field(res.text, 'token')).toBe(link.token);
      expect(field(res.text, 'return_to')).toBe('/console/projects?x=1');
      const csrf = field(res.text, 'csrf')!;
      expect(csrf).toMatch(/^[A-Za-z0-9_-]{32}$/);
      // The double-submit cookie: the same value, HttpOnly, SameSite=Strict.
      const cookie = setCookies(res).rb_login_csrf;
      expect(cookie.value).toBe(csrf);
      expect(cookie.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
      expect(setCookies(res).rb_session).toBeUndefined();
    });

    it('never consumes the token: after GETs (a link previewer), the button still signs in', async () => {
      const link = await newLink(t, person.id);
      for (let i = 0; i < 3; i++) expect((await t.http.get(pathOf(link.url))).status).toBe(200);
      expect(await linkRow(t, link.token)).toMatchObject({ used_at: null });
      const { res, session } = await signInWithLink(t, link.url);
      expect(res.status).toBe(303);
      expect(session).toBeDefined();
      expect((await linkRow(t, link.token))?.used_at).toBeInstanceOf(Date);
    });

    it('without a token: a text field named token to paste the link into', async () => {
      const res = await t.http.get('/oauth/login');
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/<input type="text" id="token" name="token"/);
      expect(res.text).toMatch(/<label for="token">/);
      expect(res.text).not.toMatch(/<script/i);
    });
  });

  describe('POST /oauth/login', () => {
    it('a valid token signs in: 303 to return_to, rb_session HttpOnly, SameSite=Lax, Path=/, 12 h; a session row', async () => {
      const before = await sessionsOf(t, person.id);
      const link = await newLink(t, person.id, { return_to: '/oauth/authorize?client_id=c&state=s' });
      const { res, session } = await signInWithLink(t, link.url);
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/oauth/authorize?client_id=c&state=s');
      const cookie = setCookies(res).rb_session;
      expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(cookie.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/', 'max-age=43200']));
      expect(cookie.attributes).not.toContain('secure'); // PUBLIC_URL is http here
      expect(await sessionsOf(t, person.id)).toBe(before + 1);
      // The session works: the sign-in page now says who is signed in.
      const page = await t.http.get('/oauth/login').set('Cookie', session!);
      expect(page.text).toContain(`You are signed in as <strong>${person.email}</strong>`);
    });

    it('a used token: 400, the page again with a sentence saying "used"; no second session', async () => {
      const link = await newLink(t, person.id);
      const page = await openSignIn(t, pathOf(link.url));
      expect((await postSignIn(t, page, { token: link.token })).status).toBe(303);
      const sessions = await sessionsOf(t, person.id);
      const again = await postSignIn(t, page, { token: link.token });
      expect(again.status).toBe(400);
      expect(again.text).toMatch(/<p class="error" role="alert">[^<]*\bused\b/);
      expect(again.text).toMatch(/<input type="text" id="token" name="token"/);
      expect(again.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(setCookies(again).rb_session).toBeUndefined();
      expect(await sessionsOf(t, person.id)).toBe(sessions);
    });

    it('two posts of one token at once: exactly one signs in', async () => {
      const link = await newLink(t, person.id);
      const page = await openSignIn(t, pathOf(link.url));
      const answers = await Promise.all(Array.from({ length: 5 }, () => postSignIn(t, page, { token: link.token })));
      expect(answers.map((r) => r.status).sort()).toEqual([303, 400, 400, 400, 400]);
    });

    it('an expired token: 400 "expired"', async () => {
      const link = await newLink(t, person.id);
      await expireLink(t, link.token);
      const page = await openSignIn(t, pathOf(link.url));
      const res = await postSignIn(t, page, { token: link.token });
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/<p class="error" role="alert">[^<]*\bexpired\b/);
      expect(setCookies(res).rb_session).toBeUndefined();
    });

    it('an unknown token: 400 "unknown"', async () => {
      const page = await openSignIn(t, '/oauth/login');
      const res = await postSignIn(t, page, { token: 'rbl_' + 'A'.repeat(43) });
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/<p class="error" role="alert">[^<]*\bunknown\b/);
      const garbage = await postSignIn(t, page, { token: 'not a token at all' });
      expect(garbage.status).toBe(400);
      expect(garbage.text).toMatch(/\bunknown\b/);
    });

    it('a disabled person: 400 "disabled", and the link stays unused', async () => {
      const other = await newUser(t);
      const link = await newLink(t, other.id);
      await sqlOn(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, [other.id]);
      const page = await openSignIn(t, pathOf(link.url));
      const res = await postSignIn(t, page, { token: link.token });
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/<p class="error" role="alert">[^<]*\bdisabled\b/);
      expect(await sessionsOf(t, other.id)).toBe(0);
      expect(await linkRow(t, link.token)).toMatchObject({ used_at: null });
    });

    it('an empty field: 400 with the page again', async () => {
      const page = await openSignIn(t, '/oauth/login');
      const res = await postSignIn(t, page, { token: '' });
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/<p class="error" role="alert">/);
    });

    it('the pasted field takes the whole link or just the token', async () => {
      const whole = await newLink(t, person.id, { return_to: '/console/from-link' });
      const page = await openSignIn(t, '/oauth/login');
      const byLink = await postSignIn(t, page, { token: `  ${whole.url}  ` });
      expect(byLink.status).toBe(303);
      expect(byLink.headers.location).toBe('/console/from-link');
      const bare = await newLink(t, person.id);
      const byToken = await postSignIn(t, page, { token: bare.token });
      expect(byToken.status).toBe(303);
      expect(byToken.headers.location).toBe('/console/');
    });

    it.each(['/.//evil.example/phish', '/x/..//evil.example'])('a pasted link whose return_to normalises to //host (%j) → 303 /console/', async (returnTo) => {
      const link = await newLink(t, person.id);
      const page = await openSignIn(t, '/oauth/login');
      const pasted = `${link.url}&return_to=${encodeURIComponent(returnTo)}`;
      const res = await postSignIn(t, page, { token: pasted });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/console/');
    });

    it("the link's own return_to counts when the form has none", async () => {
      const link = await newLink(t, person.id, { return_to: '/console/stored' });
      const page = await openSignIn(t, '/oauth/login');
      const res = await postSignIn(t, page, { token: link.token });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/console/stored');
    });

    it.each([
      [
        'a path and query',
        '/oauth/authorize?client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb',
        '/oauth/authorize?client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb',
      ],
      ['an absolute URL', 'https://evil.test/steal', '/console/'],
      ['an absolute URL of this very server', 'PUBLIC_URL/console/x', '/console/'],
      ['//host', '//evil.test/steal', '/console/'],
      ['/\\host', '/\\evil.test/steal', '/console/'],
      ['/ tab /host', '/\t/evil.test', '/console/'],
      ['a relative path', 'console/x', '/console/'],
      ['javascript:', 'javascript:alert(1)', '/console/'],
      ['a fragment only', '#x', '/console/'],
      ['a dot segment before //host', '/.//evil.example/phish', '/console/'],
      ['a parent segment before //host', '/x/..//evil.example', '/console/'],
      ['an encoded dot segment before //host', '/%2e%2e//evil.example', '/console/'],
      ['dot segments that stay on this server', '/console/a/../b/./c', '/console/b/c'],
    ])('return_to %s (%j) → 303 %s', async (_case, returnTo, expected) => {
      const link = await newLink(t, person.id);
      const page = await openSignIn(t, '/oauth/login');
      const res = await postSignIn(t, page, { token: link.token, return_to: returnTo.replace('PUBLIC_URL', t.config.publicUrl) });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(expected);
    });

    it('signing in again replaces the session the browser had', async () => {
      const old = await signedIn(t, person.id);
      const link = await newLink(t, person.id);
      const page = await openSignIn(t, pathOf(link.url));
      const before = await sessionsOf(t, person.id);
      const res = await postSignIn(t, page, { token: link.token }).set('Cookie', `${page.cookie}; ${old.cookie}`);
      expect(res.status).toBe(303);
      expect(await sessionsOf(t, person.id)).toBe(before); // one ended, one started
      expect((await t.http.get('/oauth/login').set('Cookie', old.cookie)).text).not.toContain('You are signed in');
    });
  });

  describe('CSRF of the sign-in form (double-submit cookie): 403 and the token stays unused', () => {
    const refused: [string, (form: Record<string, string>, page: { cookie: string; csrf: string }) => [Record<string, string>, Record<string, string>]][] = [
      ['no csrf field', (form, page) => [{ ...form, csrf: '' }, { Cookie: page.cookie }]],
      ['a wrong csrf field', (form, page) => [{ ...form, csrf: 'x'.repeat(32) }, { Cookie: page.cookie }]],
      ['no pre-session cookie', (form) => [form, { Cookie: '' }]],
      ['another browser’s cookie', (form) => [form, { Cookie: `rb_login_csrf=${'y'.repeat(32)}` }]],
      ['Sec-Fetch-Site: cross-site', (form, page) => [form, { Cookie: page.cookie, 'Sec-Fetch-Site': 'cross-site' }]],
      ['a foreign Origin', (form, page) => [form, { Cookie: page.cookie, Origin: 'https://evil.test' }]],
      ['an Origin on another port of this host', (form, page) => [form, { Cookie: page.cookie, Origin: 'http://127.0.0.1:1' }]],
    ];

    it.each(refused)('%s', async (_case, forge) => {
      const link = await newLink(t, person.id);
      const page = await openSignIn(t, pathOf(link.url));
      const [form, headers] = forge({ token: link.token, csrf: page.csrf }, page);
      const res = await t.http.post('/oauth/login').type('form').set(headers).send(form);
      expect(res.status).toBe(403);
      expect(res.text).toMatch(/<p class="error" role="alert">/);
      expect(setCookies(res).rb_session).toBeUndefined();
      // Not consumed: the real form still signs in.
      expect((await postSignIn(t, page, { token: link.token })).status).toBe(303);
    });

    it('accepts Origin: null (Chromium sends it from a page with Referrer-Policy: no-referrer), its own Origin, and no such header', async () => {
      const cases: Record<string, string>[] = [
        { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' },
        { 'Sec-Fetch-Site': 'same-origin', Origin: new URL(t.config.publicUrl).origin },
        {},
      ];
      for (const headers of cases) {
        const link = await newLink(t, person.id);
        const page = await openSignIn(t, pathOf(link.url));
        expect((await postSignIn(t, page, { token: link.token }, headers)).status).toBe(303);
      }
    });
  });

  describe('signed in: GET /oauth/login and POST /oauth/logout', () => {
    it('a signed-in GET shows "You are signed in as …" with a Sign out form carrying the session’s csrf', async () => {
      const session = await signedIn(t, person.id);
      const res = await t.http.get('/oauth/login?return_to=%2Fconsole%2Fa').set('Cookie', session.cookie);
      expect(res.status).toBe(200);
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(res.text).toContain(`You are signed in as <strong>${person.email}</strong>`);
      expect(res.text).toContain('<form method="post" action="/oauth/logout">');
      expect(field(res.text, 'csrf')).toBe(session.csrf);
      expect(res.text).toContain('<a class="button" href="/console/a">Continue</a>');
      expect(res.text).not.toMatch(/<script/i);
    });

    it.each(['/.//evil.example/phish', '/x/..//evil.example', '/%2e//evil.example'])(
      'a return_to that normalises to //host (%j) gives no Continue link there',
      async (returnTo) => {
        const session = await signedIn(t, person.id);
        const res = await t.http.get(`/oauth/login?return_to=${encodeURIComponent(returnTo)}`).set('Cookie', session.cookie);
        expect(res.status).toBe(200);
        expect(res.text).toContain('You are signed in');
        expect(res.text).not.toContain('evil.example');
        expect(res.text).not.toMatch(/href="\/\//);
      },
    );

    it('POST /oauth/logout with the csrf ends the session (its row) and clears the cookie', async () => {
      const session = await signedIn(t, person.id);
      const before = await sessionsOf(t, person.id);
      const res = await t.http.post('/oauth/logout').type('form').set('Cookie', session.cookie).send({ csrf: session.csrf });
      expect(res.status).toBe(200);
      expect(res.text).toContain('You are signed out');
      expect(setCookies(res).rb_session.value).toBe('');
      expect(await sessionsOf(t, person.id)).toBe(before - 1);
      const after = await t.http.get('/oauth/login').set('Cookie', session.cookie);
      expect(after.text).not.toContain('You are signed in');
    });

    it.each([
      ['no csrf', {}, {}],
      ['a wrong csrf', { csrf: 'nope' }, {}],
      ['a cross-site post', null, { 'Sec-Fetch-Site': 'cross-site' }],
      ['a foreign Origin', null, { Origin: 'https://evil.test' }],
    ])('POST /oauth/logout with %s: 403, still signed in', async (_case, form, headers) => {
      const session = await signedIn(t, person.id);
      const res = await t.http
        .post('/oauth/logout')
        .type('form')
        .set({ Cookie: session.cookie, ...headers })
        .send(form ?? { csrf: session.csrf });
      expect(res.status).toBe(403);
      expect(setCookies(res).rb_session).toBeUndefined();
      expect((await t.http.get('/oauth/login').set('Cookie', session.cookie)).text).toContain('You are signed in');
    });
  });

  describe('escaping', () => {
    it('a name and an email with <script> render escaped on the signed-in page', async () => {
      // Stored as they are (the admin API would refuse such an email): the page must escape what it finds.
      const id = randomUUID();
      await sqlOn(t, `INSERT INTO users (id, email, name) VALUES ($1, $2, $3)`, [id, 'x<script>alert(1)</script>@example.com', `<script>alert("n")</script>`]);
      const session = await signedIn(t, id);
      const res = await t.http.get('/oauth/login').set('Cookie', session.cookie);
      expect(res.text).not.toMatch(/<script/i);
      expect(res.text).toContain('&lt;script&gt;alert(&quot;n&quot;)&lt;/script&gt; (x&lt;script&gt;alert(1)&lt;/script&gt;@example.com)');
    });

    it('a token and a return_to with markup are escaped in the form', async () => {
      const res = await t.http.get(
        `/oauth/login?token=${encodeURIComponent('"><script>alert(1)</script>')}&return_to=${encodeURIComponent('/x?"><script>y</script>')}`,
      );
      expect(res.status).toBe(200);
      expect(res.text).not.toMatch(/<script/i);
      expect(field(res.text, 'token')).toBe('"><script>alert(1)</script>');
      expect(field(res.text, 'return_to')).toBe('/x?%22%3E%3Cscript%3Ey%3C/script%3E');
    });
  });
});

describe('the per-IP limit of /oauth/login', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('over OAUTH_IP_RATE_LIMIT_PER_MINUTE: 429 page with Retry-After, for the page and the form; another address is not counted', async () => {
    const page = await openSignIn(t, '/oauth/login', undefined, { 'X-Forwarded-For': '203.0.113.7' });
    expect((await postSignIn(t, page, { token: 'rbl_x' }, { 'X-Forwarded-For': '203.0.113.7' })).status).toBe(400);
    expect((await t.http.get('/oauth/login').set('X-Forwarded-For', '203.0.113.7')).status).toBe(200);
    for (const res of [
      await t.http.get('/oauth/login').set('X-Forwarded-For', '203.0.113.7'),
      await postSignIn(t, page, { token: 'rbl_x' }, { 'X-Forwarded-For': '203.0.113.7' }),
    ]) {
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
      expect(res.text).toContain('Too many sign-in attempts');
    }
    expect((await t.http.get('/oauth/login').set('X-Forwarded-For', '203.0.113.8')).status).toBe(200);
  });
});
