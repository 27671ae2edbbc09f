import { OAuth2Server } from 'oauth2-mock-server';
import { freePort } from '../../src/common/net.js';
import { startInstances } from '../support/database.js';
import { newUser, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { PAGE_CSP, sessionsOf, setCookies, sqlOn } from './sign-in-helpers.js';

/**
 * `oidc` sign-in against oauth2-mock-server on loopback: the app discovers it, sends the browser
 * there with PKCE, state and nonce, and the mock answers the callback at once (it signs in
 * "johndoe" unless a test changes the claims of the tokens it signs).
 */
describe('oidc sign-in (oauth2-mock-server)', () => {
  let idp: OAuth2Server;
  let t: TestApp;
  let person: TestUser;
  /** Claims added to the tokens the mock signs next (the ID token included). */
  let claims: Record<string, unknown> = {};
  /** The userinfo endpoint's answer, when a test sets one. */
  let userinfo: Record<string, unknown> | undefined;

  beforeAll(async () => {
    idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    idp.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims));
    idp.service.on('beforeUserinfo', (response: { body: Record<string, unknown> }) => {
      if (userinfo) response.body = userinfo;
    });
    t = await startTestApp({
      LOGIN_METHODS: 'link,oidc',
      OIDC_ISSUER: idp.issuer.url!,
      OIDC_CLIENT_ID: 'reblog-test',
      OIDC_CLIENT_SECRET: 'reblog-test-secret',
      OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000',
    });
    person = await newUser(t);
  });
  beforeEach(() => {
    claims = { email: person.email, email_verified: true };
    userinfo = undefined;
  });
  afterAll(async () => {
    await t?.close();
    await idp?.stop();
  });

  /** GET /oauth/login/oidc: the 303 to the provider and the state cookie. */
  async function start(returnTo?: string) {
    const res = await t.http.get(`/oauth/login/oidc${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`);
    expect(res.status).toBe(303);
    const authorize = new URL(res.headers.location);
    const state = setCookies(res).rb_oidc_state;
    return { authorize, state, cookie: `rb_oidc_state=${state.value}` };
  }

  /** The provider's answer: the URL it redirects the browser to (our callback with code and state). */
  async function atProvider(authorize: URL): Promise<URL> {
    const res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  /** Start, provider, callback with the browser's cookie: the callback's answer. */
  async function signIn(returnTo?: string) {
    const started = await start(returnTo);
    const callback = await atProvider(started.authorize);
    return t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
  }

  async function binding(userId: string) {
    const { rows } = await sqlOn(t, `SELECT oidc_issuer, oidc_subject FROM users WHERE id = $1`, [userId]);
    return rows[0];
  }

  it('the sign-in page offers the identity provider next to the link field', async () => {
    const res = await t.http.get('/oauth/login?return_to=%2Fconsole%2Fx');
    expect(res.status).toBe(200);
    expect(res.text).toContain('href="/oauth/login/oidc?return_to=%2Fconsole%2Fx"');
    expect(res.text).toMatch(/name="token"/);
  });

  it('starts with discovery, authorization code, PKCE S256, state and nonce; the state in an HttpOnly cookie scoped to the callback', async () => {
    const { authorize, state } = await start();
    expect(authorize.origin + authorize.pathname).toBe(`${idp.issuer.url}/authorize`);
    const q = authorize.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe('reblog-test');
    expect(q.get('redirect_uri')).toBe(`${t.config.publicUrl}/oauth/callback/oidc`);
    expect(q.get('scope')).toBe('openid email profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get('state')).toBe(state.value);
    expect(state.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/oauth/callback/oidc']));
    // The verifier and nonce wait on the server, under the hash of the state (any instance can finish).
    const { rows } = await sqlOn(t, `SELECT code_verifier, nonce FROM oidc_sign_ins WHERE state_hash = sha256(convert_to($1, 'UTF8'))`, [state.value]);
    expect(rows).toEqual([{ code_verifier: expect.stringMatching(/^[A-Za-z0-9_-]{43,}$/), nonce: q.get('nonce') }]);
  });

  it('happy path: the verified email signs its person in, 303 to return_to, and binds issuer and sub on the first sign-in', async () => {
    const fresh = await newUser(t);
    claims = { email: fresh.email.toUpperCase(), email_verified: true, sub: 'sub-fresh' };
    expect(await binding(fresh.id)).toEqual({ oidc_issuer: null, oidc_subject: null });
    const res = await signIn('/oauth/authorize?client_id=abc');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/oauth/authorize?client_id=abc');
    const session = setCookies(res).rb_session;
    expect(session.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/']));
    expect(setCookies(res).rb_oidc_state.value).toBe(''); // cleared
    expect(await sessionsOf(t, fresh.id)).toBe(1);
    expect(await binding(fresh.id)).toEqual({ oidc_issuer: idp.issuer.url, oidc_subject: 'sub-fresh' });
    const page = await t.http.get('/oauth/login').set('Cookie', `rb_session=${session.value}`);
    expect(page.text).toContain(`You are signed in as <strong>${fresh.email}</strong>`);

    // Again, same subject: signs in.
    const again = await signIn();
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe('/console/');
    expect(await sessionsOf(t, fresh.id)).toBe(2);
  });

  it('a later sign-in where the same email arrives with another sub of that issuer is refused (403, no session)', async () => {
    const bound = await newUser(t);
    claims = { email: bound.email, email_verified: true, sub: 'sub-original' };
    expect((await signIn()).status).toBe(303);
    claims = { email: bound.email, email_verified: true, sub: 'sub-impostor' };
    const res = await signIn();
    expect(res.status).toBe(403);
    expect(res.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(res.text).toMatch(/another account of your identity provider/);
    expect(setCookies(res).rb_session).toBeUndefined();
    expect(await sessionsOf(t, bound.id)).toBe(1);
    expect(await binding(bound.id)).toEqual({ oidc_issuer: idp.issuer.url, oidc_subject: 'sub-original' });
  });

  it('a sub already bound to another person (the email changed at the provider) is refused', async () => {
    const first = await newUser(t);
    const second = await newUser(t);
    claims = { email: first.email, email_verified: true, sub: 'sub-shared' };
    expect((await signIn()).status).toBe(303);
    claims = { email: second.email, email_verified: true, sub: 'sub-shared' };
    const res = await signIn();
    expect(res.status).toBe(403);
    expect(await sessionsOf(t, second.id)).toBe(0);
  });

  it('email_verified false: 403, no session', async () => {
    const someone = await newUser(t);
    claims = { email: someone.email, email_verified: false, sub: 'sub-unverified' };
    const res = await signIn();
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/has not verified the email address/);
    expect(setCookies(res).rb_session).toBeUndefined();
    expect(await sessionsOf(t, someone.id)).toBe(0);
    expect(await binding(someone.id)).toEqual({ oidc_issuer: null, oidc_subject: null });
  });

  it('email_verified "true" as a string is not true', async () => {
    const someone = await newUser(t);
    claims = { email: someone.email, email_verified: 'true', sub: 'sub-string' };
    expect((await signIn()).status).toBe(403);
    expect(await sessionsOf(t, someone.id)).toBe(0);
  });

  it('no email in the ID token: read from the userinfo endpoint, verified there or refused', async () => {
    const someone = await newUser(t);
    claims = { sub: 'sub-userinfo' };
    userinfo = { sub: 'sub-userinfo', email: someone.email, email_verified: false };
    expect((await signIn()).status).toBe(403);
    userinfo = { sub: 'sub-userinfo', email: someone.email, email_verified: true };
    const res = await signIn();
    expect(res.status).toBe(303);
    expect(await sessionsOf(t, someone.id)).toBe(1);
  });

  it('an email with no user: 403 "ask your operator to add you", no session', async () => {
    claims = { email: 'stranger@example.com', email_verified: true, sub: 'sub-stranger' };
    const res = await signIn();
    expect(res.status).toBe(403);
    expect(res.text).toContain('ask your operator to add you');
    expect(res.text).toContain('stranger@example.com');
    expect(setCookies(res).rb_session).toBeUndefined();
  });

  it('a disabled person: 403, no session', async () => {
    const disabled = await newUser(t);
    await sqlOn(t, `UPDATE users SET disabled_at = now() WHERE id = $1`, [disabled.id]);
    claims = { email: disabled.email, email_verified: true, sub: 'sub-disabled' };
    const res = await signIn();
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/disabled/);
    expect(await sessionsOf(t, disabled.id)).toBe(0);
  });

  describe('the state', () => {
    it('a callback whose state is not the cookie’s is refused, and signs nobody in', async () => {
      const started = await start();
      const callback = await atProvider(started.authorize);
      const other = await start(); // another sign-in, in another browser
      const res = await t.http.get(callback.pathname + callback.search).set('Cookie', other.cookie);
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/did not start in this browser/);
      expect(setCookies(res).rb_session).toBeUndefined();
      expect(await sessionsOf(t, person.id)).toBe(0);
    });

    it('a callback without the cookie, or with a state changed on the way, is refused', async () => {
      const started = await start();
      const callback = await atProvider(started.authorize);
      expect((await t.http.get(callback.pathname + callback.search)).status).toBe(400);
      const forged = new URL(callback);
      forged.searchParams.set('state', 'x'.repeat(43));
      expect((await t.http.get(forged.pathname + forged.search).set('Cookie', `rb_oidc_state=${'x'.repeat(43)}`)).status).toBe(400);
      expect(await sessionsOf(t, person.id)).toBe(0);
    });

    it('a callback used twice: the second is refused', async () => {
      const started = await start();
      const callback = await atProvider(started.authorize);
      expect((await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie)).status).toBe(303);
      const replay = await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
      expect(replay.status).toBe(400);
      expect(replay.text).toMatch(/used already/);
    });

    it('an expired pending sign-in is refused', async () => {
      const started = await start();
      const callback = await atProvider(started.authorize);
      await sqlOn(t, `UPDATE oidc_sign_ins SET expires_at = now() - interval '1 second' WHERE state_hash = sha256(convert_to($1, 'UTF8'))`, [
        started.state.value,
      ]);
      expect((await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie)).status).toBe(400);
    });
  });

  it('an ID token with another nonce is refused', async () => {
    claims = { email: person.email, email_verified: true, nonce: 'not-the-nonce-we-sent' };
    const res = await signIn();
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/could not be verified/);
    expect(setCookies(res).rb_session).toBeUndefined();
  });

  it('the provider answering an error: 400 page with its (escaped) description', async () => {
    const started = await start();
    const state = started.authorize.searchParams.get('state')!;
    const res = await t.http
      .get(`/oauth/callback/oidc?error=access_denied&error_description=${encodeURIComponent('<script>no</script>')}&state=${state}`)
      .set('Cookie', started.cookie);
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/<script/i);
    expect(res.text).toContain('&lt;script&gt;no&lt;/script&gt;');
  });

  it('an unsafe return_to goes to /console/', async () => {
    const res = await signIn('https://evil.test/');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/');
  });
});

describe('oidc sign-in across instances', () => {
  it('a sign-in started on one instance finishes on another (same PUBLIC_URL, one database)', async () => {
    const idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    const port = await freePort();
    const env = { LOGIN_METHODS: 'oidc', OIDC_ISSUER: idp.issuer.url!, OIDC_CLIENT_ID: 'reblog-test', PUBLIC_URL: `http://127.0.0.1:${port}` };
    const { db, apps } = await startInstances({ ...env, PORT: String(port) }, env);
    try {
      const [a, b] = apps;
      const person = await newUser(a);
      idp.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) =>
        Object.assign(token.payload, { email: person.email, email_verified: true }),
      );
      const started = await a.http.get('/oauth/login/oidc');
      const cookie = `rb_oidc_state=${setCookies(started).rb_oidc_state.value}`;
      const atProvider = await fetch(started.headers.location, { redirect: 'manual' });
      const callback = new URL(atProvider.headers.get('location')!);
      const res = await b.http.get(callback.pathname + callback.search).set('Cookie', cookie);
      expect(res.status).toBe(303);
      expect(setCookies(res).rb_session).toBeDefined();
      expect(await sessionsOf(b, person.id)).toBe(1);
    } finally {
      await db.drop();
      await idp.stop();
    }
  });
});

describe('oidc sign-in with the identity provider down', () => {
  it('GET /oauth/login/oidc answers a 503 page, and works once the provider is up', async () => {
    const port = await freePort();
    const idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    idp.issuer.url = `http://127.0.0.1:${port}`;
    const t = await startTestApp({ LOGIN_METHODS: 'oidc', OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: 'reblog-test' });
    try {
      const down = await t.http.get('/oauth/login/oidc');
      expect(down.status).toBe(503);
      expect(down.headers['content-type']).toMatch(/^text\/html/);
      expect(down.text).toMatch(/cannot be reached/);
      await idp.start(port, '127.0.0.1');
      const up = await t.http.get('/oauth/login/oidc');
      expect(up.status).toBe(303);
      // With oidc alone, the sign-in page has no link field.
      const page = await t.http.get('/oauth/login');
      expect(page.text).not.toMatch(/name="token"/);
      expect(page.text).toContain('href="/oauth/login/oidc"');
    } finally {
      await t.close();
      if (idp.listening) await idp.stop();
    }
  });

  it('without oidc in LOGIN_METHODS, /oauth/login/oidc is a 404 page', async () => {
    const t = await startTestApp();
    try {
      const res = await t.http.get('/oauth/login/oidc');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    } finally {
      await t.close();
    }
  });
});
