import { freePort } from '../../src/common/net.js';
import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, MISSING_ID, newAccountWithProjects } from '../support/fixtures.js';
import { addAccountMember, newUser, signedIn } from '../support/people.js';
import { TestIdp } from '../support/test-idp.js';
import type { TestApp } from '../support/test-app.js';

// docs/console.md#identity-provider over HTTP: owners see the account's identity providers and the
// values to copy into theirs; register, change and remove one (each an audited act of the owner);
// the client secret is write-only; a discovery that fails is one sentence on the page, the form kept
// and nothing saved; members, other accounts and made-up ids get the 404 page; posts need the
// session's csrf from this site. The app has a database of its own.

describe('console Identity provider page', () => {
  let db: TestDatabase;
  let t: TestApp;
  let idp: TestIdp;
  let otherIdp: TestIdp;
  let accountId: string;
  let owner: { id: string; email: string };
  let ownerSession: ConsoleSession;
  let memberSession: ConsoleSession;
  let other: { accountId: string; session: ConsoleSession; providerId: string };

  const { get, post } = consoleHttp(() => t);
  const page = (account = accountId, rest = '') => `/console/accounts/${account}/identity-provider${rest ? `/${rest}` : ''}`;
  const providers = async (account = accountId) => (await admin(t, 'get', `/admin/v1/accounts/${account}/identity-providers`)).items;
  const audit = (action: string) =>
    withClient(t.config.databaseUrl!, (c) =>
      c.query(`SELECT actor_type, actor_id, change FROM audit_events WHERE account_id = $1 AND action = $2 ORDER BY at`, [accountId, action]),
    ).then((r) => r.rows);
  const alert = (html: string) => html.match(/<p class="error" role="alert">([^<]*)<\/p>/)?.[1];

  beforeAll(async () => {
    idp = await TestIdp.start();
    otherIdp = await TestIdp.start();
    ({
      db,
      apps: [t],
    } = await startInstances({ OAUTH_CIMD_ALLOW_PRIVATE_NETWORKS: 'true' }));
    ({ accountId } = await newAccountWithProjects(t, [{ name: 'Acme blog' }]));
    owner = await newUser(t);
    const member = await newUser(t);
    await addAccountMember(t, accountId, owner.id, 'owner');
    await addAccountMember(t, accountId, member.id, 'member');
    ownerSession = await signedIn(t, owner.id);
    memberSession = await signedIn(t, member.id);

    const foreign = await newAccountWithProjects(t, [{ name: 'Elsewhere' }]);
    const otherOwner = await newUser(t);
    await addAccountMember(t, foreign.accountId, otherOwner.id, 'owner');
    const theirs = await admin(
      t,
      'post',
      `/admin/v1/accounts/${foreign.accountId}/identity-providers`,
      { issuer: otherIdp.issuer, oidc_client_id: 'theirs' },
      201,
    );
    other = { accountId: foreign.accountId, session: await signedIn(t, otherOwner.id), providerId: theirs.id };
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
    await idp?.close();
    await otherIdp?.close();
  });

  it('shows an owner the register form and the values to copy, linked from the navigation; members get no link', async () => {
    const res = await get(page(), ownerSession);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1>Identity provider</h1>');
    expect(res.text).toContain('No identity provider is registered for this account yet.');
    expect(res.text).toContain(`>${t.config.publicUrl}/oauth/callback/oidc</code>`);
    expect(res.text).toContain(`id="copy-audience" aria-labelledby="copy-audience-label">${t.config.publicUrl}</code>`);
    expect(res.text).toContain(`>${t.config.publicUrl}/mcp</code>`);
    expect(res.text).toMatch(/<a href="\/console\/accounts\/[^"]+\/identity-provider" aria-current="page">Identity provider<\/a>/);
    const overview = await get(`/console/accounts/${accountId}`, memberSession);
    expect(overview.status).toBe(200);
    expect(overview.text).not.toContain('identity-provider');
  });

  it('registers a provider (an audited act of the owner); the secret is never put in the page', async () => {
    const res = await post(page(), ownerSession, {
      csrf: ownerSession.csrf,
      issuer: idp.issuer,
      person_claim: 'email',
      unknown_people: 'refuse',
      oidc_client_id: 'reblog-console',
      oidc_client_secret: 'top-secret-value',
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${page()}?done=created`);
    const [saved] = await providers();
    expect(saved).toMatchObject({
      issuer: idp.issuer,
      person_claim: 'email',
      unknown_people: 'refuse',
      oidc_client_id: 'reblog-console',
      oidc_client_secret_set: true,
    });
    const shown = await get(res.headers.location, ownerSession);
    expect(shown.text).toContain('The identity provider is registered.');
    expect(shown.text).toContain(`<h2 class="issuer" id="idp-${saved.id}">${idp.issuer}</h2>`);
    expect(shown.text).toContain('set up (client ID <code>reblog-console</code>, with a secret)');
    expect(shown.text).not.toContain('top-secret-value');
    expect(await audit('identity_provider.created')).toEqual([
      expect.objectContaining({ actor_type: 'user', actor_id: owner.id, change: expect.not.stringContaining('top-secret-value') }),
    ]);
    expect(JSON.stringify(await audit('identity_provider.created'))).not.toContain('top-secret-value');
  });

  it('changes it: an empty secret field keeps the secret, "remove the saved secret" clears it', async () => {
    const [saved] = await providers();
    const change = (fields: Record<string, string>) =>
      post(page(accountId, saved.id), ownerSession, { csrf: ownerSession.csrf, issuer: idp.issuer, oidc_client_id: 'reblog-console', ...fields });
    const kept = await change({ person_claim: 'sub', unknown_people: 'add', oidc_client_secret: '' });
    expect(kept.status).toBe(303);
    expect(kept.headers.location).toBe(`${page()}?done=updated`);
    expect((await providers())[0]).toMatchObject({ person_claim: 'sub', unknown_people: 'add', oidc_client_secret_set: true });
    expect((await change({ person_claim: 'sub', unknown_people: 'add', clear_secret: '1' })).status).toBe(303);
    expect((await providers())[0]).toMatchObject({ oidc_client_secret_set: false });
    const shown = await get(page(), ownerSession);
    expect(shown.text).toContain('set up (client ID <code>reblog-console</code>, no secret)');
    expect(shown.text).toContain('<option value="sub" selected>');
    expect((await audit('identity_provider.updated')).map((e) => e.actor_id)).toEqual([owner.id, owner.id]);
  });

  it('a discovery that fails: one sentence on the page, the form as sent, nothing saved', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const res = await post(page(), ownerSession, {
      csrf: ownerSession.csrf,
      issuer: closed,
      person_claim: 'sub',
      unknown_people: 'add',
      oidc_client_id: 'kept-client',
      oidc_client_secret: 'not-shown-again',
    });
    expect(res.status).toBe(422);
    expect(alert(res.text)).toMatch(new RegExp(`^The discovery document of ${closed} could not be fetched`));
    expect(res.text).toContain(`name="issuer" required maxlength="2000" spellcheck="false" value="${closed}"`);
    expect(res.text).toContain('value="kept-client"');
    expect(res.text).not.toContain('not-shown-again');
    expect((await providers()).map((p: { issuer: string }) => p.issuer)).toEqual([idp.issuer]);
    // Changing the registered one to it: the same, and the provider stays as it was.
    const [saved] = await providers();
    const changed = await post(page(accountId, saved.id), ownerSession, { csrf: ownerSession.csrf, issuer: closed, oidc_client_id: 'reblog-console' });
    expect(changed.status).toBe(422);
    expect(changed.text).toContain('<details class="change" open>');
    expect((await providers())[0]).toMatchObject({ issuer: idp.issuer, oidc_client_id: 'reblog-console' });
    // A form that is not filled in is refused before the registry is asked.
    const empty = await post(page(), ownerSession, { csrf: ownerSession.csrf, issuer: '' });
    expect(empty.status).toBe(400);
    expect(alert(empty.text)).toContain('Type the issuer');
  });

  it('registering the same issuer again is refused with a sentence (409)', async () => {
    const res = await post(page(), ownerSession, { csrf: ownerSession.csrf, issuer: idp.issuer });
    expect(res.status).toBe(409);
    expect(alert(res.text)).toContain('already trusts');
    expect(await providers()).toHaveLength(1);
  });

  it("a member, another account's provider and made-up ids get the 404 page, on the page and every form; the other account's provider is never shown", async () => {
    const [mine] = await providers();
    const notFound = async (who: ConsoleSession) => (await get(`/console/accounts/${MISSING_ID}`, who)).text;
    const places: [string, ConsoleSession][] = [
      [page(), memberSession],
      [page(MISSING_ID), ownerSession],
      [page('not-an-id'), ownerSession],
      [page(other.accountId), ownerSession],
      [page(accountId), other.session],
    ];
    for (const [path, who] of places) {
      const res = await get(path, who);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(await notFound(who));
      const created = await post(path, who, { csrf: who.csrf, issuer: otherIdp.issuer });
      expect([path, created.status]).toEqual([path, 404]);
    }
    for (const id of [other.providerId, MISSING_ID, 'not-an-id']) {
      for (const rest of [id, `${id}/remove`]) {
        const res = await post(page(accountId, rest), ownerSession, { csrf: ownerSession.csrf, issuer: idp.issuer });
        expect([rest, res.status]).toEqual([rest, 404]);
        expect(res.text).toBe(await notFound(ownerSession));
      }
    }
    // A member cannot change or remove this account's own provider either.
    expect((await post(page(accountId, `${mine.id}/remove`), memberSession, { csrf: memberSession.csrf })).status).toBe(404);
    const shown = await get(page(), ownerSession);
    expect(shown.text).not.toContain(otherIdp.issuer);
    expect(shown.text).not.toContain(other.providerId);
    expect(await providers(other.accountId)).toHaveLength(1);
    expect(await providers()).toHaveLength(1);
  });

  it('refuses (403, nothing done) a post without the csrf, with a wrong one, cross-site or from a foreign Origin', async () => {
    const [mine] = await providers();
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{}, {}],
      [{ csrf: 'wrong' }, {}],
      [{ csrf: memberSession.csrf }, {}],
      [{ csrf: ownerSession.csrf }, { 'Sec-Fetch-Site': 'cross-site' }],
      [{ csrf: ownerSession.csrf }, { Origin: 'https://evil.example' }],
    ];
    for (const [fields, headers] of attempts) {
      for (const path of [page(), page(accountId, mine.id), page(accountId, `${mine.id}/remove`)]) {
        const res = await post(path, ownerSession, { ...fields, issuer: otherIdp.issuer, oidc_client_id: 'hijacked' }, headers);
        expect([path, fields, headers, res.status]).toEqual([path, fields, headers, 403]);
        expect(res.text).toContain('Nothing was changed');
      }
    }
    expect(await providers()).toEqual([expect.objectContaining({ id: mine.id, issuer: idp.issuer, oidc_client_id: 'reblog-console' })]);
  });

  it('removes it (audited); the page offers to register one again', async () => {
    const [mine] = await providers();
    const res = await post(page(accountId, `${mine.id}/remove`), ownerSession, { csrf: ownerSession.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${page()}?done=removed`);
    expect(await providers()).toEqual([]);
    expect(await audit('identity_provider.removed')).toEqual([expect.objectContaining({ actor_type: 'user', actor_id: owner.id })]);
    const shown = await get(res.headers.location, ownerSession);
    expect(shown.text).toContain('The identity provider is removed');
    expect(shown.text).toContain('Register your identity provider');
  });
});
