import { signInWithLink } from '../sign-in/sign-in-helpers.js';
import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { callTool } from '../support/mcp-client.js';
import { newClient, oauthGrant } from '../support/oauth.js';
import { addAccountMember, addProjectMember, newUser, signedIn, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// docs/console.md#members over HTTP, on two instances sharing a database: the console runs
// on A, OAuth grants call /mcp on B (which caches principals), so a role changed in the console must
// reach B's next request (well under the principal cache's 3 s). A member gets the 404 page; another
// account's ids the same 404 on every page and form; forged posts 403 with nothing done.

const MISSING = '00000000-0000-7000-8000-000000000000';
const SOON = 1_000;

describe('console members', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let accountId: string;
  let projectIds: string[];
  let owner: TestUser;
  let member: TestUser;
  let ownerSession: ConsoleSession;
  let memberSession: ConsoleSession;
  let memberGrant: { token: string; id: string };
  let other: { accountId: string; projectId: string; owner: TestUser; member: TestUser };

  const { get, post } = consoleHttp(() => a);
  const page = (rest = '') => `/console/accounts/${accountId}${rest ? `/${rest}` : ''}`;
  /** `list_projects` of a token on B: `{project id: role}`. */
  const projectsOnB = async (token: string): Promise<Record<string, string>> => {
    const out = await callTool(b, token, 'list_projects');
    if (out.status !== 200 || out.isError || out.rpcError) throw new Error(`list_projects failed: ${JSON.stringify(out)}`);
    return Object.fromEntries((out.json.items as { id: string; role: string }[]).map((p) => [p.id, p.role]));
  };
  const members = async (id = accountId) =>
    (await admin(a, 'get', `/admin/v1/accounts/${id}/members?limit=200`)).items as { user_id: string; email: string; role: string }[];
  const projectRole = async (projectId: string, userId: string) =>
    ((await admin(a, 'get', `/admin/v1/projects/${projectId}/members?limit=200`)).items as { user_id: string; role: string }[]).find(
      (m) => m.user_id === userId,
    )?.role;

  beforeAll(async () => {
    ({
      db,
      apps: [a, b],
    } = await startInstances({}, { ROLE: 'api' }));
    ({ accountId, projectIds } = await newAccountWithProjects(a, [{ name: 'Cooking' }, { name: 'Travel' }]));
    owner = await newUser(a);
    member = await newUser(a);
    await addAccountMember(a, accountId, owner.id, 'owner');
    await addAccountMember(a, accountId, member.id, 'member');
    await addProjectMember(a, accountId, projectIds[0], member.id, 'editor');
    await addProjectMember(a, accountId, projectIds[1], member.id, 'viewer');
    // The account's creation made its owner_email an owner: gone, so `owner` is the last owner.
    for (const m of await members())
      if (m.user_id !== owner.id && m.user_id !== member.id) await admin(a, 'delete', `/admin/v1/accounts/${accountId}/members/${m.user_id}`, undefined, 204);
    ownerSession = await signedIn(a, owner.id);
    memberSession = await signedIn(a, member.id);
    const client = await newClient(a, { client_name: 'Cursor' });
    memberGrant = await oauthGrant(a, {
      accountId,
      userId: member.id,
      clientId: client.client_id,
      projects: [
        { project_id: projectIds[0], role: 'editor' },
        { project_id: projectIds[1], role: 'editor' },
      ],
    });

    const foreign = await newAccountWithProjects(a, [{ name: 'Elsewhere' }]);
    const otherOwner = await newUser(a);
    const otherMember = await newUser(a);
    await addAccountMember(a, foreign.accountId, otherOwner.id, 'owner');
    await addAccountMember(a, foreign.accountId, otherMember.id, 'member');
    other = { accountId: foreign.accountId, projectId: foreign.projectIds[0], owner: otherOwner, member: otherMember };
  }, 60_000);

  afterAll(() => db?.drop());

  it('an owner sees the people with their account role and project roles; the nav links Members', async () => {
    const res = await get(page('members'), ownerSession);
    expect(res.status).toBe(200);
    expect(res.text).toContain(owner.email);
    expect(res.text).toContain(member.email);
    expect(res.text).toMatch(/Cooking <span class="badge">editor<\/span>/);
    expect(res.text).toMatch(/Travel <span class="badge">viewer<\/span>/);
    expect(res.text).toContain('owner of every project');
    expect(res.text).toContain(`href="${page('members')}" aria-current="page"`);
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    const one = await get(page(`members/${member.id}`), ownerSession);
    expect(one.status).toBe(200);
    expect(one.text).toContain('Make a sign-in link');
    expect(one.text).toMatch(
      new RegExp(
        `name="project_role_${projectIds[0]}"><option value="">no role</option><option value="viewer">viewer</option><option value="editor" selected>`,
      ),
    );
  });

  it('a member gets the 404 page on every Members page and form, and no Members link', async () => {
    const notFound = (await get(`/console/accounts/${MISSING}`, memberSession)).text;
    const s = memberSession;
    expect((await get(page(), s)).text).not.toContain(page('members'));
    for (const path of [page('members'), page(`members/${owner.id}`), page(`members/${member.id}`)]) {
      const res = await get(path, s);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    const forms: [string, Record<string, string>][] = [
      [page('members'), { email: 'sneaky@example.com', role: 'owner' }],
      [page(`members/${member.id}`), { role: 'owner' }],
      [page(`members/${owner.id}/remove`), {}],
      [page(`members/${owner.id}/sign-in-link`), {}],
    ];
    for (const [path, fields] of forms) {
      const res = await post(path, s, { ...fields, csrf: s.csrf });
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    expect((await members()).find((m) => m.user_id === member.id)?.role).toBe('member');
    expect((await members()).some((m) => m.email === 'sneaky@example.com')).toBe(false);
  });

  it("another account's ids, and ids that do not exist, answer the same 404 page on every Members page and form", async () => {
    const notFound = (await get(`/console/accounts/${MISSING}`, ownerSession)).text;
    const s = ownerSession;
    const before = await members(other.accountId);
    const theirs = `/console/accounts/${other.accountId}`;
    const pages = [
      `${theirs}/members`,
      `${theirs}/members/${other.member.id}`,
      page(`members/${other.member.id}`),
      page(`members/${MISSING}`),
      page('members/not-an-id'),
      `/console/accounts/${MISSING}/members`,
      `${page('members')}?cursor=forged`,
    ];
    for (const path of pages) {
      const res = await get(path, s);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    const forms: [string, Record<string, string>][] = [
      [`${theirs}/members`, { email: 'x@example.com', role: 'member' }],
      [page('members'), { email: 'x@example.com', role: 'member', [`project_role_${other.projectId}`]: 'owner' }],
      [page('members'), { email: 'x@example.com', role: 'member', 'project_role_not-an-id': 'owner' }],
      [`${theirs}/members/${other.member.id}`, { role: 'owner' }],
      [page(`members/${other.member.id}`), { role: 'owner' }],
      [page(`members/${member.id}`), { role: 'member', [`project_role_${other.projectId}`]: 'owner' }],
      [page(`members/${MISSING}`), { role: 'owner' }],
      [page(`members/${other.owner.id}/remove`), {}],
      [`${theirs}/members/${other.member.id}/remove`, {}],
      [page(`members/not-an-id/remove`), {}],
      [page(`members/${other.member.id}/sign-in-link`), {}],
      [`${theirs}/members/${other.member.id}/sign-in-link`, {}],
      [page(`members/${MISSING}/sign-in-link`), {}],
    ];
    for (const [path, fields] of forms) {
      const res = await post(path, s, { ...fields, csrf: s.csrf });
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    // Nothing changed in either account.
    expect(await members(other.accountId)).toEqual(before);
    expect((await members()).length).toBe(2);
    expect(await projectRole(other.projectId, member.id)).toBeUndefined();
  });

  it('refuses (403, nothing done) a post without the csrf, with a wrong one, cross-site, or from a foreign Origin', async () => {
    const s = ownerSession;
    const forms: [string, Record<string, string>][] = [
      [page('members'), { email: 'forged@example.com', role: 'owner' }],
      [page(`members/${member.id}`), { role: 'owner' }],
      [page(`members/${member.id}/remove`), {}],
      [page(`members/${member.id}/sign-in-link`), {}],
    ];
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{}, {}],
      [{ csrf: 'wrong' }, {}],
      [{ csrf: memberSession.csrf }, {}],
      [{ csrf: s.csrf }, { 'Sec-Fetch-Site': 'cross-site' }],
      [{ csrf: s.csrf }, { Origin: 'https://evil.example' }],
    ];
    for (const [path, fields] of forms) {
      for (const [extra, headers] of attempts) {
        const res = await post(path, s, { ...fields, ...extra }, headers);
        expect([path, extra, headers, res.status]).toEqual([path, extra, headers, 403]);
        expect(res.text).toContain('Nothing was changed');
        expect(res.text).not.toContain('rbl_');
      }
    }
    expect((await members()).find((m) => m.user_id === member.id)?.role).toBe('member');
    expect((await members()).some((m) => m.email === 'forged@example.com')).toBe(false);
    const { rows } = await withClient(db.url, (c) => c.query(`SELECT count(*)::int AS n FROM login_links WHERE user_id = $1`, [member.id]));
    expect(rows[0].n).toBe(0);
  });

  it("a project role lowered and removed in the console reaches the person's OAuth grant on B at its next request", async () => {
    expect(await projectsOnB(memberGrant.token)).toEqual({ [projectIds[0]]: 'editor', [projectIds[1]]: 'viewer' });
    const res = await post(page(`members/${member.id}`), ownerSession, {
      csrf: ownerSession.csrf,
      role: 'member',
      [`project_role_${projectIds[0]}`]: 'viewer',
      [`project_role_${projectIds[1]}`]: '',
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${page('members')}?done=changed`);
    // B had the principal cached: its next request already has Travel gone and Cooking lowered.
    const after = await eventually(
      () => projectsOnB(memberGrant.token),
      (p) => !(projectIds[1] in p),
      SOON,
      20,
    );
    expect(after).toEqual({ [projectIds[0]]: 'viewer' });
    expect(await projectRole(projectIds[0], member.id)).toBe('viewer');
    expect(await projectRole(projectIds[1], member.id)).toBeUndefined();
    const listed = await get(`${page('members')}?done=changed`, ownerSession);
    expect(listed.text).toContain('The roles are changed');

    // Made owner: the grant reaches both again, up to what it was consented (editor).
    const promoted = await post(page(`members/${member.id}`), ownerSession, { csrf: ownerSession.csrf, role: 'owner' });
    expect(promoted.status).toBe(303);
    expect(
      await eventually(
        () => projectsOnB(memberGrant.token),
        (p) => Object.keys(p).length === 2,
        SOON,
        20,
      ),
    ).toEqual({ [projectIds[0]]: 'editor', [projectIds[1]]: 'editor' });
    // And back to a member with Cooking only (the project roles of a former owner are set as the form says).
    const demoted = await post(page(`members/${member.id}`), ownerSession, {
      csrf: ownerSession.csrf,
      role: 'member',
      [`project_role_${projectIds[0]}`]: 'editor',
    });
    expect(demoted.status).toBe(303);
    expect(
      await eventually(
        () => projectsOnB(memberGrant.token),
        (p) => Object.keys(p).length === 1,
        SOON,
        20,
      ),
    ).toEqual({ [projectIds[0]]: 'editor' });
    expect((await members()).find((m) => m.user_id === member.id)?.role).toBe('member');
  });

  it('refuses a bad role with a sentence and changes nothing', async () => {
    const res = await post(page(`members/${member.id}`), ownerSession, { csrf: ownerSession.csrf, role: 'admin' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Choose the account role');
    const badProject = await post(page(`members/${member.id}`), ownerSession, {
      csrf: ownerSession.csrf,
      role: 'member',
      [`project_role_${projectIds[0]}`]: 'boss',
    });
    expect(badProject.status).toBe(400);
    expect(await projectRole(projectIds[0], member.id)).toBe('editor');
  });

  it('adds a person by email: a new user is made with the roles; an existing one is reused (any case); twice is refused', async () => {
    const s = ownerSession;
    const email = `new-${Date.now()}@example.com`;
    const bad = await post(page('members'), s, { csrf: s.csrf, email: 'not an email', role: 'member' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('is not an email address');
    expect(bad.text).toContain('value="not an email"');

    const res = await post(page('members'), s, {
      csrf: s.csrf,
      email: email.toUpperCase(),
      role: 'member',
      [`project_role_${projectIds[1]}`]: 'editor',
      [`project_role_${projectIds[0]}`]: '',
    });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${page('members')}?done=added`);
    const made = (await admin(a, 'get', `/admin/v1/users?email=${encodeURIComponent(email)}`)).items;
    expect(made).toHaveLength(1);
    expect(made[0].email).toBe(email);
    expect((await members()).find((m) => m.user_id === made[0].id)?.role).toBe('member');
    expect(await projectRole(projectIds[1], made[0].id)).toBe('editor');
    expect(await projectRole(projectIds[0], made[0].id)).toBeUndefined();

    const again = await post(page('members'), s, { csrf: s.csrf, email, role: 'owner' });
    expect(again.status).toBe(409);
    expect(again.text).toContain(`${email} is a member of this account already`);
    expect((await members()).find((m) => m.user_id === made[0].id)?.role).toBe('member');

    // A person of another account, added here as an owner: the same user, now in both.
    const res2 = await post(page('members'), s, { csrf: s.csrf, email: other.member.email.toUpperCase(), role: 'owner' });
    expect(res2.status).toBe(303);
    expect((await members()).find((m) => m.user_id === other.member.id)?.role).toBe('owner');
    expect((await members(other.accountId)).find((m) => m.user_id === other.member.id)?.role).toBe('member');
    await admin(a, 'delete', `/admin/v1/accounts/${accountId}/members/${other.member.id}`, undefined, 204);
  });

  it("makes a sign-in link shown once in the post's answer (never in a URL) that signs the person in; remove refuses the last owner with the 409's sentence", async () => {
    const s = ownerSession;
    const res = await post(page(`members/${member.id}/sign-in-link`), s, { csrf: s.csrf });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const url = /id="sign-in-link"[^>]*>([^<]+)</.exec(res.text)?.[1].replace(/&amp;/g, '&');
    expect(url).toMatch(new RegExp(`^${a.config.publicUrl}/oauth/login\\?token=rbl_`));
    const token = new URL(url!).searchParams.get('token')!;
    // Not on any page after (the member's page, the list).
    expect((await get(page(`members/${member.id}`), s)).text).not.toContain(token);
    expect((await get(page('members'), s)).text).not.toContain(token);
    const signed = await signInWithLink(a, url!);
    expect(signed.res.status).toBe(303);
    expect(signed.res.headers.location).toBe(page());
    expect(signed.session).toBeDefined();

    // The last owner cannot be removed: the service's sentence, on the page, and nothing done.
    const last = await post(page(`members/${owner.id}/remove`), s, { csrf: s.csrf });
    expect(last.status).toBe(409);
    expect(last.text).toContain(`User ${owner.id} is the last owner of account ${accountId}; make another member an owner before you remove them.`);
    const demote = await post(page(`members/${owner.id}`), s, { csrf: s.csrf, role: 'member' });
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('is the last owner of account');
    expect((await members()).find((m) => m.user_id === owner.id)?.role).toBe('owner');
  });

  it('removes a member: their grant reaches nothing of the account on B at its next request', async () => {
    expect(Object.keys(await projectsOnB(memberGrant.token))).toHaveLength(1);
    const res = await post(page(`members/${member.id}/remove`), ownerSession, { csrf: ownerSession.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${page('members')}?done=removed`);
    expect(
      await eventually(
        () => projectsOnB(memberGrant.token),
        (p) => Object.keys(p).length === 0,
        SOON,
        20,
      ),
    ).toEqual({});
    expect((await members()).some((m) => m.user_id === member.id)).toBe(false);
    // Their console is gone too: the same 404 page.
    expect((await get(page(), memberSession)).status).toBe(404);
  });

  it('an owner who demotes themselves lands on the overview; one who removes themselves on /console/', async () => {
    const second = await newUser(a);
    await addAccountMember(a, accountId, second.id, 'owner');
    const mine = await signedIn(a, second.id);
    const demoted = await post(page(`members/${second.id}`), mine, { csrf: mine.csrf, role: 'member' });
    expect(demoted.status).toBe(303);
    expect(demoted.headers.location).toBe(page());
    expect((await get(page('members'), mine)).status).toBe(404);
    await addAccountMember(a, accountId, second.id, 'owner');
    const removed = await post(page(`members/${second.id}/remove`), mine, { csrf: mine.csrf });
    expect(removed.status).toBe(303);
    expect(removed.headers.location).toBe('/console/');
  });
});

describe('console members without link sign-in', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('offers no sign-in link and refuses its form with the 404 page', async () => {
    t = await startTestApp({ LOGIN_METHODS: 'proxy', AUTH_PROXY_TRUSTED_CIDRS: '10.0.0.0/8' });
    const { accountId } = await newAccountWithProjects(t, [{ name: 'Only' }]);
    const owner = await newUser(t);
    const member = await newUser(t);
    await addAccountMember(t, accountId, owner.id, 'owner');
    await addAccountMember(t, accountId, member.id, 'member');
    const s = await signedIn(t, owner.id);
    const pagePath = `/console/accounts/${accountId}/members/${member.id}`;
    const res = await t.http.get(pagePath).set('Cookie', s.cookie);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('sign-in link');
    const made = await t.http.post(`${pagePath}/sign-in-link`).set('Cookie', s.cookie).type('form').send({ csrf: s.csrf });
    expect(made.status).toBe(404);
  });
});
