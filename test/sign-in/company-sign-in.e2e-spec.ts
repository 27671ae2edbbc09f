import { createServer, type AddressInfo } from 'node:net';
import { OAuth2Server } from 'oauth2-mock-server';
import { IdentityProvidersService } from '../../src/identity-providers/identity-providers.service.js';
import { NO_COMPANY_SIGN_IN } from '../../src/sign-in/company/company-sign-in.service.js';
import { startInstances, type TestDatabase } from '../support/database.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { addAccountMember, newUser, type TestUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';
import { field, openSignIn, sessionsOf, setCookies, sqlOn, type OpenedPage } from './sign-in-helpers.js';

/**
 * Sign-in through the account's own identity provider (docs/oauth.md#sign-in-with-your-company),
 * against two oauth2-mock-server instances on loopback standing for two companies' providers: the
 * work email typed on the sign-in page leads to the provider of the person's account, and the answer
 * names the person by that provider's rule (`email` at `acme`, `sub` at `globex`). The app has a
 * database of its own, so whether the page offers the field depends on these tests only.
 */
describe('sign-in through the account’s identity provider', () => {
  let db: TestDatabase;
  let t: TestApp;
  let acmeIdp: OAuth2Server;
  let globexIdp: OAuth2Server;
  /** Claims added to the tokens each mock signs next. */
  const claims = new Map<OAuth2Server, Record<string, unknown>>();
  let acme: { accountId: string; providerId: string };
  let globex: { accountId: string; providerId: string };
  let alice: TestUser; // member of acme
  let both: TestUser; // member of acme and globex

  async function mockIdp(): Promise<OAuth2Server> {
    const idp = new OAuth2Server();
    await idp.issuer.keys.generate('RS256');
    await idp.start(0, '127.0.0.1');
    idp.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims.get(idp) ?? {}));
    return idp;
  }

  beforeAll(async () => {
    acmeIdp = await mockIdp();
    globexIdp = await mockIdp();
    ({
      db,
      apps: [t],
    } = await startInstances({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' }));
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
    await acmeIdp?.stop();
    await globexIdp?.stop();
  });

  /** POST /oauth/login/company from an opened sign-in page. */
  function postCompany(page: OpenedPage, form: Record<string, string>) {
    return t.http
      .post('/oauth/login/company')
      .type('form')
      .set('Cookie', page.cookie)
      .send({ csrf: page.csrf, ...form });
  }

  /** Types `email` on the sign-in page: the 303 to the provider (asserted) and the state cookie. */
  async function start(email: string, extra: Record<string, string> = {}) {
    const page = await openSignIn(t, '/oauth/login');
    const res = await postCompany(page, { email, ...extra });
    expect([res.status, res.text.slice(0, 300)]).toEqual([303, expect.anything()]);
    const state = setCookies(res).rb_oidc_state;
    return { authorize: new URL(res.headers.location), cookie: `rb_oidc_state=${state.value}` };
  }

  /** The provider signs the person in at once: the URL it sends the browser back to. */
  async function atProvider(authorize: URL): Promise<URL> {
    const res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  /** Types the email, passes the provider, comes back: the callback's answer. */
  async function signIn(email: string, extra: Record<string, string> = {}) {
    const started = await start(email, extra);
    const callback = await atProvider(started.authorize);
    return t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
  }

  /** The alert sentence of a page. */
  const alert = (page: string) => page.match(/<p class="error" role="alert">([^<]*)<\/p>/)?.[1];

  it('offers no work-email field while no account has sign-in through its provider set up', async () => {
    const page = await t.http.get('/oauth/login');
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('/oauth/login/company');
  });

  it('set-up: two accounts, each with its provider (acme names people by email, globex by sub)', async () => {
    const registry = t.app.get(IdentityProvidersService);
    const a = await newAccountWithProjects(t, [{ name: 'Acme blog' }]);
    const g = await newAccountWithProjects(t, [{ name: 'Globex blog' }]);
    const acmeProvider = await registry.create(a.accountId, {
      issuer: acmeIdp.issuer.url!,
      person_claim: 'email',
      unknown_people: 'refuse',
      oidc_client_id: 'reblog-acme',
      oidc_client_secret: 'acme-secret',
    });
    const globexProvider = await registry.create(g.accountId, {
      issuer: globexIdp.issuer.url!,
      person_claim: 'sub',
      unknown_people: 'refuse',
      oidc_client_id: 'reblog-globex',
    });
    acme = { accountId: a.accountId, providerId: acmeProvider.id };
    globex = { accountId: g.accountId, providerId: globexProvider.id };
    alice = await newUser(t);
    both = await newUser(t);
    await addAccountMember(t, acme.accountId, alice.id, 'member');
    await addAccountMember(t, acme.accountId, both.id, 'member');
    await addAccountMember(t, globex.accountId, both.id, 'member');

    const page = await t.http.get('/oauth/login?return_to=%2Fconsole%2Fx');
    expect(page.text).toContain('action="/oauth/login/company"');
    expect(page.text).toMatch(/<label for="company-email">Work email<\/label>/);
    expect(field(page.text, 'return_to')).toBe('/console/x');
  });

  it('with proxy the only method, the 401 gateway page offers the work-email field too', async () => {
    const gatewayOnly = await db.app({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: '10.0.0.0/8', OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' });
    const page = await gatewayOnly.http.get('/oauth/login');
    expect(page.status).toBe(401);
    expect(page.text).toMatch(/Sign in through your company's gateway/);
    expect(page.text).toContain('action="/oauth/login/company"');
    expect(field(page.text, 'csrf')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('happy path (email rule): the work email leads to the account’s provider with PKCE, state and nonce; the verified email signs the person in', async () => {
    const started = await start(alice.email.toUpperCase(), { return_to: '/console/accounts/x' });
    expect(started.authorize.origin + started.authorize.pathname).toBe(`${acmeIdp.issuer.url}/authorize`);
    const q = started.authorize.searchParams;
    expect(q.get('client_id')).toBe('reblog-acme');
    expect(q.get('redirect_uri')).toBe(`${t.config.publicUrl}/oauth/callback/oidc`);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    claims.set(acmeIdp, { email: alice.email, email_verified: true, sub: 'alice-at-acme' });
    const callback = await atProvider(started.authorize);
    const res = await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/accounts/x');
    expect(setCookies(res).rb_session.attributes).toEqual(expect.arrayContaining(['httponly', 'samesite=lax', 'path=/']));
    expect(await sessionsOf(t, alice.id)).toBe(1);
    // The session is the usual one: the console knows the person.
    const console = await t.http
      .get('/console/')
      .set('Cookie', `rb_session=${setCookies(res).rb_session.value}`)
      .redirects(0);
    expect(console.status).toBe(303); // one account: straight into it
    expect(console.headers.location).toBe(`/console/accounts/${acme.accountId}`);
  });

  it('a wrong state (another browser’s cookie) is refused, and signs nobody in', async () => {
    claims.set(acmeIdp, { email: alice.email, email_verified: true });
    const before = await sessionsOf(t, alice.id);
    const mine = await start(alice.email);
    const theirs = await start(alice.email);
    const callback = await atProvider(mine.authorize);
    const res = await t.http.get(callback.pathname + callback.search).set('Cookie', theirs.cookie);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/did not start in this browser/);
    expect(setCookies(res).rb_session).toBeUndefined();
    expect(await sessionsOf(t, alice.id)).toBe(before);
  });

  it('an ID token with another nonce is refused', async () => {
    claims.set(acmeIdp, { email: alice.email, email_verified: true, nonce: 'not-the-nonce-we-sent' });
    const before = await sessionsOf(t, alice.id);
    const res = await signIn(alice.email);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/could not be verified/);
    expect(await sessionsOf(t, alice.id)).toBe(before);
  });

  it('the provider signing in another email than the one typed: 403, no session', async () => {
    claims.set(acmeIdp, { email: both.email, email_verified: true });
    const res = await signIn(alice.email);
    expect(res.status).toBe(403);
    expect(alert(res.text)).toContain('not as');
    expect(setCookies(res).rb_session).toBeUndefined();
    expect(await sessionsOf(t, both.id)).toBe(0);
  });

  it('an email the provider has not verified: 403, no session', async () => {
    const fresh = await newUser(t);
    await addAccountMember(t, acme.accountId, fresh.id, 'member');
    claims.set(acmeIdp, { email: fresh.email, email_verified: false });
    const res = await signIn(fresh.email);
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/has not verified the email address/);
    expect(await sessionsOf(t, fresh.id)).toBe(0);
  });

  it('Microsoft Entra ID’s xms_edov: true stands for email_verified (Entra ID sends none)', async () => {
    const entra = await newUser(t);
    await addAccountMember(t, acme.accountId, entra.id, 'member');
    claims.set(acmeIdp, { email: entra.email, xms_edov: true });
    expect((await signIn(entra.email)).status).toBe(303);
    claims.set(acmeIdp, { email: entra.email, xms_edov: 'true' });
    expect((await signIn(entra.email)).status).toBe(403);
    expect(await sessionsOf(t, entra.id)).toBe(1);
  });

  it('a person disabled (after typing their email): 403, no session', async () => {
    const someone = await newUser(t);
    await addAccountMember(t, acme.accountId, someone.id, 'member');
    claims.set(acmeIdp, { email: someone.email, email_verified: true });
    const started = await start(someone.email);
    await admin(t, 'patch', `/admin/v1/users/${someone.id}`, { disabled: true }, 200);
    const callback = await atProvider(started.authorize);
    const res = await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
    expect(res.status).toBe(403);
    expect(res.text).toMatch(/disabled/);
    expect(await sessionsOf(t, someone.id)).toBe(0);
  });

  it('a person removed from the account meanwhile: 403 under the refuse rule', async () => {
    const leaving = await newUser(t);
    await addAccountMember(t, acme.accountId, leaving.id, 'member');
    claims.set(acmeIdp, { email: leaving.email, email_verified: true });
    const started = await start(leaving.email);
    await admin(t, 'delete', `/admin/v1/accounts/${acme.accountId}/members/${leaving.id}`, undefined, 204);
    const callback = await atProvider(started.authorize);
    const res = await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
    expect(res.status).toBe(403);
    expect(res.text).toContain('is not a member of the account');
    expect(await sessionsOf(t, leaving.id)).toBe(0);
  });

  it('an unknown email and a person whose accounts have no provider get the same sentence and status', async () => {
    const noIdp = await newUser(t);
    const elsewhere = await newAccountWithProjects(t, [{ name: 'No IdP' }]);
    await addAccountMember(t, elsewhere.accountId, noIdp.id, 'owner');
    const page = await openSignIn(t, '/oauth/login');
    const unknown = await postCompany(page, { email: 'nobody-at-all@example.com' });
    const known = await postCompany(page, { email: noIdp.email });
    expect(unknown.status).toBe(400);
    expect(known.status).toBe(unknown.status);
    expect(alert(unknown.text)).toBe(NO_COMPANY_SIGN_IN);
    expect(alert(known.text)).toBe(NO_COMPANY_SIGN_IN);
    // The pages differ only by the email shown back in the field (and the form token).
    const strip = (html: string, email: string) => html.replaceAll(email, 'EMAIL').replace(/value="[A-Za-z0-9_-]{32}"/g, '');
    expect(strip(known.text, noIdp.email)).toBe(strip(unknown.text, 'nobody-at-all@example.com'));
    expect(setCookies(unknown).rb_oidc_state).toBeUndefined();
  });

  it('a form without its CSRF token, or from another site, is refused (403) and goes nowhere', async () => {
    const page = await openSignIn(t, '/oauth/login');
    const noToken = await t.http.post('/oauth/login/company').type('form').set('Cookie', page.cookie).send({ email: alice.email });
    expect(noToken.status).toBe(403);
    expect(noToken.headers.location).toBeUndefined();
    const crossSite = await postCompany(page, { email: alice.email }).set('Sec-Fetch-Site', 'cross-site');
    expect(crossSite.status).toBe(403);
  });

  it('the work-email form counts in the per-IP sign-in limit (429 with Retry-After past it)', async () => {
    const limited = await db.app({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true', OAUTH_IP_RATE_LIMIT_PER_MINUTE: '3' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await limited.http.post('/oauth/login/company').type('form').send({ email: alice.email });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses).toEqual([403, 403, 403, 429, 429]);
  });

  it('a person of several accounts with providers chooses one; a provider that is not theirs is the neutral sentence', async () => {
    const page = await openSignIn(t, '/oauth/login');
    const choice = await postCompany(page, { email: both.email });
    expect(choice.status).toBe(200);
    expect(choice.text).toContain('Choose your account');
    const offered = [...choice.text.matchAll(/name="provider" value="([^"]+)"/g)].map((m) => m[1]);
    expect(offered.sort()).toEqual([acme.providerId, globex.providerId].sort());
    const picked = await postCompany(page, { email: both.email, provider: globex.providerId });
    expect(picked.status).toBe(303);
    expect(picked.headers.location).toMatch(new RegExp(`^${globexIdp.issuer.url}/authorize\\?`));
    // alice is not a member of globex: its provider is no choice of hers.
    const forged = await postCompany(page, { email: alice.email, provider: globex.providerId });
    expect(forged.status).toBe(400);
    expect(alert(forged.text)).toBe(NO_COMPANY_SIGN_IN);
  });

  describe('sub rule (globex)', () => {
    it('the first sign-in binds the subject to the person whose verified email was typed; later the subject alone names them', async () => {
      claims.set(globexIdp, { email: both.email, email_verified: true, sub: 'both-at-globex' });
      expect((await signIn(both.email, { provider: globex.providerId })).status).toBe(303);
      const { rows } = await sqlOn(t, `SELECT oidc_issuer, oidc_subject FROM users WHERE id = $1`, [both.id]);
      expect(rows[0]).toEqual({ oidc_issuer: globexIdp.issuer.url, oidc_subject: 'both-at-globex' });
      // The provider now tells another email (renamed there): the subject still names the same person.
      claims.set(globexIdp, { email: 'renamed@globex.example', email_verified: false, sub: 'both-at-globex' });
      const later = await signIn(both.email, { provider: globex.providerId });
      expect(later.status).toBe(303);
      expect(await sessionsOf(t, both.id)).toBe(2);
    });

    it('a subject bound to a person of another account is refused under refuse, and added as a member (no project role) under add', async () => {
      const outsider = await newUser(t);
      const theirs = await newAccountWithProjects(t, [{ name: 'Initech' }]);
      await addAccountMember(t, theirs.accountId, outsider.id, 'owner');
      await sqlOn(t, `UPDATE users SET oidc_issuer = $1, oidc_subject = 'outsider-sub' WHERE id = $2`, [globexIdp.issuer.url, outsider.id]);
      claims.set(globexIdp, { sub: 'outsider-sub' });

      const refused = await signIn(both.email, { provider: globex.providerId });
      expect(refused.status).toBe(403);
      expect(refused.text).toContain(`${outsider.email} is not a member of the account “`);
      expect(await sessionsOf(t, outsider.id)).toBe(0);

      await t.app.get(IdentityProvidersService).update(globex.accountId, globex.providerId, { unknown_people: 'add' });
      const added = await signIn(both.email, { provider: globex.providerId });
      expect(added.status).toBe(303);
      expect(await sessionsOf(t, outsider.id)).toBe(1);
      const members = await admin(t, 'get', `/admin/v1/accounts/${globex.accountId}/members`);
      expect(members.items).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: outsider.id, role: 'member' })]));
      const { rows } = await sqlOn(
        t,
        `SELECT count(*)::int AS n FROM project_members pm JOIN projects p ON p.id = pm.project_id WHERE p.account_id = $1 AND pm.user_id = $2`,
        [globex.accountId, outsider.id],
      );
      expect(rows[0].n).toBe(0);
      // The audit trail names the person as who added them.
      const audit = await sqlOn(
        t,
        `SELECT actor_type, actor_id FROM audit_events WHERE account_id = $1 AND action = 'account_member.put' AND target->>'user_id' = $2`,
        [globex.accountId, outsider.id],
      );
      expect(audit.rows).toEqual([{ actor_type: 'user', actor_id: outsider.id }]);
    });
  });

  it('a provider removed between the start and the callback: its pending sign-in is gone (400)', async () => {
    const registry = t.app.get(IdentityProvidersService);
    const g = await newAccountWithProjects(t, [{ name: 'Short-lived' }]);
    const person = await newUser(t);
    await addAccountMember(t, g.accountId, person.id, 'member');
    const provider = await registry.create(g.accountId, { issuer: acmeIdp.issuer.url!, oidc_client_id: 'reblog-short' });
    claims.set(acmeIdp, { email: person.email, email_verified: true });
    const started = await start(person.email);
    await registry.remove(g.accountId, provider.id);
    const callback = await atProvider(started.authorize);
    const res = await t.http.get(callback.pathname + callback.search).set('Cookie', started.cookie);
    expect(res.status).toBe(400);
    expect(await sessionsOf(t, person.id)).toBe(0);
  });
});

describe('sign-in with your company: the provider’s endpoints follow the address rules', () => {
  it('a token endpoint on a private address is never dialled (private networks not allowed): the sign-in fails with 400', async () => {
    let connections = 0;
    const listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((ready) => listener.listen(0, '127.0.0.1', ready));
    const port = (listener.address() as AddressInfo).port;
    const {
      db,
      apps: [t],
    } = await startInstances({ OAUTH_IP_RATE_LIMIT_PER_MINUTE: '100000' });
    try {
      const { accountId } = await newAccountWithProjects(t, [{ name: 'Private endpoints' }]);
      const person = await newUser(t);
      await addAccountMember(t, accountId, person.id, 'member');
      // As the registry would keep it had the issuer's public discovery document named a private token endpoint.
      const issuer = 'https://idp.example.com';
      const metadata = { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `https://127.0.0.1:${port}/token`, jwks_uri: `${issuer}/jwks` };
      await sqlOn(
        t,
        `INSERT INTO identity_providers (id, account_id, issuer, oidc_client_id, metadata, jwks, jwks_fetched_at)
         VALUES (gen_random_uuid(), $1, $2, 'reblog', $3::jsonb, '{"keys": []}'::jsonb, now())`,
        [accountId, issuer, JSON.stringify(metadata)],
      );
      const page = await openSignIn(t, '/oauth/login');
      const started = await t.http.post('/oauth/login/company').type('form').set('Cookie', page.cookie).send({ csrf: page.csrf, email: person.email });
      expect(started.status).toBe(303);
      const authorize = new URL(started.headers.location);
      expect(authorize.origin).toBe(issuer);
      const state = authorize.searchParams.get('state')!;
      const res = await t.http
        .get(`/oauth/callback/oidc?code=some-code&state=${state}`)
        .set('Cookie', `rb_oidc_state=${setCookies(started).rb_oidc_state.value}`);
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/could not be verified/);
      expect(connections).toBe(0);
      expect(await sessionsOf(t, person.id)).toBe(0);
    } finally {
      await db.drop();
      await new Promise((done) => listener.close(done));
    }
  });
});
