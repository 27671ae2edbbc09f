import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { admin, newAccountWithProjects, newKey } from '../support/fixtures.js';
import { rpc } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, signedIn, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/console.md#who-sees-what and docs/console.md#rules over HTTP: a session is required, posts carry the
// session's csrf and come from this site, every id is checked against the person (another account's
// ids answer the same 404 page as ids that do not exist), a member sees only their own apps and no keys.

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };
const MISSING = '00000000-0000-7000-8000-000000000000';

describe('console access rules', () => {
  let t: TestApp;
  let accountId: string;
  let projectIds: string[];
  let owner: TestUser;
  let member: TestUser;
  let ownerSession: ConsoleSession;
  let memberSession: ConsoleSession;
  // Another account, with its own owner, grant and key: every id of it must be 404 to the people above.
  let other: { accountId: string; projectId: string; grantId: string; keyId: string; session: ConsoleSession };
  let ownerGrant: { token: string; id: string };
  let memberGrant: { token: string; id: string };
  let key: { key: string; id: string };

  const { get, post } = consoleHttp(() => t);
  const page = (rest = '') => `/console/accounts/${accountId}${rest ? `/${rest}` : ''}`;

  beforeAll(async () => {
    t = await startTestApp();
    ({ accountId, projectIds } = await newAccountWithProjects(t, [{ name: 'Cooking' }, { name: 'Travel' }]));
    owner = await newUser(t);
    member = await newUser(t);
    await addAccountMember(t, accountId, owner.id, 'owner');
    await addAccountMember(t, accountId, member.id, 'member');
    await addProjectMember(t, accountId, projectIds[0], member.id, 'editor');
    ownerSession = await signedIn(t, owner.id);
    memberSession = await signedIn(t, member.id);
    const client = await newClient(t, { client_name: 'Cursor', redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback'] });
    ownerGrant = await oauthGrant(t, {
      accountId,
      userId: owner.id,
      clientId: client.client_id,
      clientName: 'Cursor',
      projects: [{ project_id: projectIds[1], role: 'owner' }],
    });
    memberGrant = await oauthGrant(t, {
      accountId,
      userId: member.id,
      clientId: client.client_id,
      clientName: 'Cursor',
      projects: [{ project_id: projectIds[0], role: 'editor' }],
    });
    key = await newKey(t, accountId, [{ project_id: projectIds[0], role: 'viewer' }], ['read'], 'ci key');

    const foreign = await newAccountWithProjects(t, [{ name: 'Elsewhere' }]);
    const otherOwner = await newUser(t);
    await addAccountMember(t, foreign.accountId, otherOwner.id, 'owner');
    const otherClient = await newClient(t, { client_name: 'Other app' });
    const otherGrant = await oauthGrant(t, {
      accountId: foreign.accountId,
      userId: otherOwner.id,
      clientId: otherClient.client_id,
      projects: [{ project_id: foreign.projectIds[0], role: 'owner' }],
    });
    const otherKey = await newKey(t, foreign.accountId, [{ project_id: foreign.projectIds[0], role: 'owner' }]);
    other = {
      accountId: foreign.accountId,
      projectId: foreign.projectIds[0],
      grantId: otherGrant.id,
      keyId: otherKey.id,
      session: await signedIn(t, otherOwner.id),
    };
  }, 60_000);

  afterAll(() => t?.close());

  it('sends a visitor with no session to the sign-in page, coming back to the page asked for', async () => {
    for (const path of ['/console/', '/console', page(), page('apps'), page('keys'), '/console/nowhere']) {
      const res = await get(path);
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/oauth/login?return_to=${encodeURIComponent(path)}`);
    }
    const res = await post(page('keys'), undefined, { name: 'x', csrf: 'x' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/oauth/login?return_to=%2Fconsole%2F');
  });

  it('goes straight into the only account; lists several; pages carry the console CSP and its script', async () => {
    const one = await get('/console/', ownerSession);
    expect(one.status).toBe(303);
    expect(one.headers.location).toBe(page());

    await addAccountMember(t, other.accountId, member.id, 'member');
    const several = await get('/console/', memberSession);
    expect(several.status).toBe(200);
    expect(several.text).toContain(`href="${page()}"`);
    expect(several.text).toContain(`href="/console/accounts/${other.accountId}"`);
    await admin(t, 'delete', `/admin/v1/accounts/${other.accountId}/members/${member.id}`, undefined, 204);

    const overview = await get(page(), ownerSession);
    expect(overview.status).toBe(200);
    expect(overview.headers['content-security-policy']).toBe(
      "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(overview.headers['x-frame-options']).toBe('DENY');
    expect(overview.headers['cache-control']).toBe('no-store');
    expect(overview.text).toContain('<script src="/assets/console.js" defer></script>');
    expect(overview.text).not.toMatch(/<script>|<style|style="/);
    const script = await get('/assets/console.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    // The OAuth pages keep their own policy.
    const login = await get('/oauth/login');
    expect(login.headers['content-security-policy']).toMatch(/^default-src 'none'/);
  });

  it('the overview shows the projects with the role, article counts, requests by outcome and jobs', async () => {
    const ok = await rpc(t, memberGrant.token, PING);
    expect(ok.status).toBe(200);
    const owned = await get(page(), ownerSession);
    expect(owned.text).toContain('Cooking');
    expect(owned.text).toContain('Travel');
    expect(owned.text).toMatch(/<dt>OK<\/dt><dd>[1-9]/);
    const mine = await get(page(), memberSession);
    expect(mine.status).toBe(200);
    expect(mine.text).toContain('Cooking');
    expect(mine.text).not.toContain('Travel');
    expect(mine.text).toMatch(/<td>Cooking<\/td><td>editor<\/td>/);
  });

  it('an owner sees every connected app of the account; a member only their own; nobody sees the keys page but owners', async () => {
    const all = await get(page('apps'), ownerSession);
    expect(all.status).toBe(200);
    expect(all.text).toContain(`apps/${ownerGrant.id}/disconnect`);
    expect(all.text).toContain(`apps/${memberGrant.id}/disconnect`);
    expect(all.text).toContain('anysphere.cursor-mcp');
    const own = await get(page('apps'), memberSession);
    expect(own.text).toContain(`apps/${memberGrant.id}/disconnect`);
    expect(own.text).not.toContain(ownerGrant.id);
    expect(own.text).not.toContain('API keys');

    const keys = await get(page('keys'), ownerSession);
    expect(keys.status).toBe(200);
    expect(keys.text).toContain('ci key');
    const refused = await get(page('keys'), memberSession);
    expect(refused.status).toBe(404);
  });

  it("another account's ids, and ids that do not exist, answer the same 404 page on every page and form", async () => {
    const notFound = (await get(`/console/accounts/${MISSING}`, ownerSession)).text;
    const s = ownerSession;
    const pages = [
      `/console/accounts/${other.accountId}`,
      `/console/accounts/${other.accountId}/apps`,
      `/console/accounts/${other.accountId}/keys`,
      `/console/accounts/not-an-id`,
      `/console/accounts/${MISSING}/apps`,
    ];
    for (const path of pages) {
      const res = await get(path, s);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    const forms: [string, Record<string, string | string[]>][] = [
      [`/console/accounts/${other.accountId}/apps/${other.grantId}/disconnect`, {}],
      [page(`apps/${other.grantId}/disconnect`), {}],
      [page(`apps/${MISSING}/disconnect`), {}],
      [page(`apps/not-an-id/disconnect`), {}],
      [page(`apps/${key.id}/disconnect`), {}],
      [`/console/accounts/${other.accountId}/keys`, { name: 'k', scope: 'read', project: other.projectId, [`role_${other.projectId}`]: 'viewer' }],
      [page('keys'), { name: 'k', scope: 'read', project: other.projectId, [`role_${other.projectId}`]: 'viewer' }],
      [page('keys'), { name: 'k', scope: 'read', project: 'not-an-id' }],
      [page(`keys/${other.keyId}/revoke`), {}],
      [`/console/accounts/${other.accountId}/keys/${other.keyId}/revoke`, {}],
      [page(`keys/${MISSING}/revoke`), {}],
      [page(`keys/${ownerGrant.id}/revoke`), {}],
    ];
    for (const [path, fields] of forms) {
      const res = await post(path, s, { ...fields, csrf: s.csrf });
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    // A member: another person's grant and every key are ids they may not see.
    for (const path of [page(`apps/${ownerGrant.id}/disconnect`), page(`keys/${key.id}/revoke`)]) {
      const res = await post(path, memberSession, { csrf: memberSession.csrf });
      expect([path, res.status]).toEqual([path, 404]);
    }
    const memberKey = await post(page('keys'), memberSession, {
      csrf: memberSession.csrf,
      name: 'mine',
      scope: 'read',
      project: projectIds[0],
      [`role_${projectIds[0]}`]: 'viewer',
    });
    expect(memberKey.status).toBe(404);
    // Nothing was revoked by any of it.
    expect((await rpc(t, ownerGrant.token, PING)).status).toBe(200);
    expect((await rpc(t, key.key, PING)).status).toBe(200);
    const grants = await admin(t, 'get', `/admin/v1/accounts/${other.accountId}/grants`);
    expect(grants.items.every((g: { revoked_at: string | null }) => g.revoked_at === null)).toBe(true);
  });

  it('refuses (403, nothing done) a post without the csrf, with a wrong one, cross-site, or from a foreign Origin; accepts Origin null', async () => {
    const s = ownerSession;
    const path = page(`keys/${key.id}/revoke`);
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{}, {}],
      [{ csrf: 'wrong' }, {}],
      [{ csrf: memberSession.csrf }, {}],
      [{ csrf: s.csrf }, { 'Sec-Fetch-Site': 'cross-site' }],
      [{ csrf: s.csrf }, { Origin: 'https://evil.example' }],
    ];
    for (const [fields, headers] of attempts) {
      const res = await post(path, s, fields, headers);
      expect([fields, headers, res.status]).toEqual([fields, headers, 403]);
      expect(res.text).toContain('Nothing was changed');
    }
    for (const [fields, headers] of attempts) {
      const res = await post(page(`apps/${memberGrant.id}/disconnect`), s, fields, headers);
      expect(res.status).toBe(403);
      const made = await post(page('keys'), s, { ...fields, name: 'forged', scope: 'read', project: projectIds[0] }, headers);
      expect(made.status).toBe(403);
    }
    expect((await rpc(t, key.key, PING)).status).toBe(200);
    expect((await rpc(t, memberGrant.token, PING)).status).toBe(200);
    expect((await get(page('keys'), s)).text).not.toContain('forged');

    const ok = await post(path, s, { csrf: s.csrf }, { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe(`${page('keys')}?done=revoked`);
    expect((await rpc(t, key.key, PING)).status).toBe(401);
    const keys = await admin(t, 'get', `/admin/v1/accounts/${accountId}/api-keys`);
    expect(keys.items.find((k: { id: string }) => k.id === key.id).revoked_at).not.toBeNull();
  });

  it('a member disconnects their own app: revoked_reason "user", its token 401 on the next request', async () => {
    const res = await post(
      page(`apps/${memberGrant.id}/disconnect`),
      memberSession,
      { csrf: memberSession.csrf },
      { Origin: new URL(t.config.publicUrl).origin },
    );
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${page('apps')}?done=disconnected`);
    expect((await rpc(t, memberGrant.token, PING)).status).toBe(401);
    expect((await rpc(t, ownerGrant.token, PING)).status).toBe(200);
    const grants = await admin(t, 'get', `/admin/v1/accounts/${accountId}/grants`);
    expect(grants.items.find((g: { id: string }) => g.id === memberGrant.id)).toMatchObject({ revoked_reason: 'user' });
    const after = await get(`${page('apps')}?done=disconnected`, memberSession);
    expect(after.text).toContain('The app is disconnected');
  });

  it('an owner makes a key with roles up to their own; a bad form comes back with a sentence and makes nothing', async () => {
    const s = ownerSession;
    const bad = await post(page('keys'), s, { csrf: s.csrf, name: '', scope: 'read', project: projectIds[0] });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Give the key a name');
    const noScope = await post(page('keys'), s, { csrf: s.csrf, name: 'n', project: projectIds[0] });
    expect(noScope.status).toBe(400);
    const badRole = await post(page('keys'), s, { csrf: s.csrf, name: 'n', scope: 'read', project: projectIds[0], [`role_${projectIds[0]}`]: 'admin' });
    expect(badRole.status).toBe(400);

    const made = await post(page('keys'), s, {
      csrf: s.csrf,
      name: 'laptop',
      scope: ['read', 'write'],
      project: [projectIds[0], projectIds[1]],
      [`role_${projectIds[0]}`]: 'editor',
      [`role_${projectIds[1]}`]: 'viewer',
    });
    expect(made.status).toBe(201);
    expect(made.headers['cache-control']).toBe('no-store');
    const secret = /id="new-secret"[^>]*>(rbk_[^<]+)</.exec(made.text)?.[1];
    expect(secret).toBeDefined();
    expect(made.text).toContain(`claude mcp add --transport http reblog ${t.config.publicUrl}/mcp --header &quot;Authorization: Bearer ${secret}&quot;`);
    expect((await rpc(t, secret!, PING)).status).toBe(200);
    const listed = await get(page('keys'), s);
    expect(listed.text).toContain('laptop');
    expect(listed.text).not.toContain(secret!);
    const keys = await admin(t, 'get', `/admin/v1/accounts/${accountId}/api-keys`);
    expect(keys.items.find((k: { name: string }) => k.name === 'laptop')).toMatchObject({
      scopes: ['read', 'write'],
      projects: expect.arrayContaining([
        { project_id: projectIds[0], role: 'editor' },
        { project_id: projectIds[1], role: 'viewer' },
      ]),
    });
  });
});
