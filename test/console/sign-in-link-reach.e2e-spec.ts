import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { admin, newAccountWithProjects } from '../support/fixtures.js';
import { addAccountMember, newUser, signedIn, type TestUser } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { field, openSignIn, pathOf, postSignIn, signInWithLink, sqlOn } from '../sign-in/sign-in-helpers.js';

// A sign-in link signs in a *person*, everywhere they belong, so an owner may make one in the console
// only for a person whose every account they own (README.md#the-owners-console). The takeover it
// closes: Alice owns A, Bob owns B; Alice adds Bob to A, makes "his" link, opens it and is Bob in B.

const REFUSAL = 'belongs to other accounts: they sign in themselves, or ask your operator.';

describe('console sign-in links never reach further than their maker', () => {
  let t: TestApp;
  let accountA: string;
  let accountB: string;
  let alice: TestUser;
  let bob: TestUser;
  let aliceSession: ConsoleSession;

  const { post } = consoleHttp(() => t);
  const pageA = (rest: string) => `/console/accounts/${accountA}/${rest}`;
  const linkCount = async (userId: string) => Number((await sqlOn(t, 'SELECT count(*) AS n FROM login_links WHERE user_id = $1', [userId])).rows[0].n);
  const linkUrl = (text: string) => /id="sign-in-link"[^>]*>([^<]+)</.exec(text)?.[1].replace(/&amp;/g, '&');

  beforeAll(async () => {
    t = await startTestApp();
    ({ accountId: accountA } = await newAccountWithProjects(t, [{ name: 'Alice blog' }]));
    ({ accountId: accountB } = await newAccountWithProjects(t, [{ name: 'Bob blog' }]));
    await sqlOn(t, `UPDATE accounts SET name = 'Account A' WHERE id = $1`, [accountA]);
    alice = await newUser(t, `alice-${Date.now()}@a.test`);
    bob = await newUser(t, `bob-${Date.now()}@b.test`);
    await addAccountMember(t, accountA, alice.id, 'owner');
    await addAccountMember(t, accountB, bob.id, 'owner');
    aliceSession = await signedIn(t, alice.id);
  }, 60_000);

  afterAll(() => t?.close());

  it('the chain stops at step 2: Alice adds Bob to A on the Members page; his page offers no link but says why, and the post sent anyway is 422 with the sentence, and no link exists', async () => {
    const added = await post(pageA('members'), aliceSession, { csrf: aliceSession.csrf, email: bob.email, role: 'member' });
    expect(added.status).toBe(303);

    const member = await t.http.get(pageA(`members/${bob.id}`)).set('Cookie', aliceSession.cookie);
    expect(member.status).toBe(200);
    // No button to press: the sentence the post would answer, in its place.
    expect(member.text).not.toContain('sign-in-link"');
    expect(member.text).not.toContain('Make a sign-in link');
    expect(member.text).toContain(`<p>${bob.email} ${REFUSAL}</p>`);
    // The same post sent directly.
    const form = pageA(`members/${bob.id}/sign-in-link`);
    for (let i = 0; i < 2; i++) {
      const refused = await post(form, aliceSession, { csrf: field(member.text, 'csrf') ?? aliceSession.csrf });
      expect(refused.status).toBe(422);
      expect(refused.text).toContain(`${bob.email} ${REFUSAL}`);
      expect(refused.text).not.toMatch(/rbl_[A-Za-z0-9_-]{43}/);
      expect(refused.text).not.toContain('id="sign-in-link"');
    }
    expect(await linkCount(bob.id)).toBe(0);
    // Bob's B is untouched by anything Alice did, and the operator still makes Bob a link.
    const operator = await admin(t, 'post', `/admin/v1/users/${bob.id}/login-links`, {}, 201);
    expect(operator.url).toContain('token=rbl_');
    await admin(t, 'delete', `/admin/v1/accounts/${accountA}/members/${bob.id}`, undefined, 204);
  });

  it('a person who belongs only to A gets a link; its page says whose sign-in it is, who made it and where', async () => {
    const carol = await newUser(t, `carol-${Date.now()}@a.test`);
    await addAccountMember(t, accountA, carol.id, 'member');
    const page = await t.http.get(pageA(`members/${carol.id}`)).set('Cookie', aliceSession.cookie);
    expect(page.text).toContain('Make a sign-in link');
    expect(page.text).not.toContain(REFUSAL);
    const made = await post(pageA(`members/${carol.id}/sign-in-link`), aliceSession, { csrf: aliceSession.csrf });
    expect(made.status).toBe(201);
    const url = linkUrl(made.text)!;
    expect(url).toContain('token=rbl_');
    const rows = (await sqlOn(t, 'SELECT account_id, created_by FROM login_links WHERE user_id = $1', [carol.id])).rows;
    expect(rows).toEqual([{ account_id: accountA, created_by: alice.id }]);

    const opened = await openSignIn(t, pathOf(url));
    expect(opened.res.text).toContain(`This link signs in <strong>${carol.email}</strong>. It was made by ${alice.email} in the account “Account A”.`);
    expect(opened.res.text).toContain(`<button type="submit">Sign in as ${carol.email}</button>`);
    const signed = await signInWithLink(t, url);
    expect(signed.res.status).toBe(303);
    expect(signed.session).toBeDefined();
  });

  it('a link made while its person was only in A stops working once they belong to B too (nothing consumed)', async () => {
    const dave = await newUser(t, `dave-${Date.now()}@a.test`);
    await addAccountMember(t, accountA, dave.id, 'member');
    const made = await post(pageA(`members/${dave.id}/sign-in-link`), aliceSession, { csrf: aliceSession.csrf });
    expect(made.status).toBe(201);
    const url = linkUrl(made.text)!;
    await addAccountMember(t, accountB, dave.id, 'member');

    const opened = await openSignIn(t, pathOf(url));
    // The page no longer names the person, and the post is refused with its sentence.
    expect(opened.res.text).not.toContain(dave.email);
    const res = await postSignIn(t, opened, { token: new URL(url).searchParams.get('token')! });
    expect(res.status).toBe(400);
    expect(res.text).toContain('its person now belongs to an account that the owner who made it does not own');
    expect(res.headers['set-cookie']?.toString() ?? '').not.toContain('rb_session=');
    expect((await sqlOn(t, 'SELECT used_at FROM login_links WHERE user_id = $1', [dave.id])).rows[0].used_at).toBeNull();
  });

  it('an owner of both accounts may make a link for a person of both; a link made by the operator signs in anyone', async () => {
    const erin = await newUser(t, `erin-${Date.now()}@a.test`);
    await addAccountMember(t, accountA, erin.id, 'member');
    await addAccountMember(t, accountB, erin.id, 'member');
    expect((await post(pageA(`members/${erin.id}/sign-in-link`), aliceSession, { csrf: aliceSession.csrf })).status).toBe(422);
    await addAccountMember(t, accountB, alice.id, 'owner');
    try {
      expect((await post(pageA(`members/${erin.id}/sign-in-link`), aliceSession, { csrf: aliceSession.csrf })).status).toBe(201);
    } finally {
      await admin(t, 'delete', `/admin/v1/accounts/${accountB}/members/${alice.id}`, undefined, 204);
    }
    const operator = await admin(t, 'post', `/admin/v1/users/${bob.id}/login-links`, {}, 201);
    const opened = await openSignIn(t, pathOf(operator.url));
    expect(opened.res.text).toContain(`This link signs in <strong>${bob.email}</strong>. If you are not`);
    expect((await signInWithLink(t, operator.url)).session).toBeDefined();
  });

  it('API keys record their creator: the console owner, or "operator" for the admin token, in the keys list and the admin API', async () => {
    const projectIds = [(await admin(t, 'get', `/admin/v1/accounts/${accountA}/projects`)).items[0].id as string];
    const made = await post(pageA('keys'), aliceSession, {
      csrf: aliceSession.csrf,
      name: 'alice laptop',
      scope: 'read',
      project: projectIds[0],
      [`role_${projectIds[0]}`]: 'viewer',
    });
    expect(made.status).toBe(201);
    await admin(
      t,
      'post',
      `/admin/v1/accounts/${accountA}/api-keys`,
      { name: 'ops key', scopes: ['read'], projects: [{ project_id: projectIds[0], role: 'viewer' }] },
      201,
    );
    const keys = (await admin(t, 'get', `/admin/v1/accounts/${accountA}/api-keys`)).items as { name: string; created_by: string }[];
    expect(keys.find((k) => k.name === 'alice laptop')?.created_by).toBe(alice.id);
    expect(keys.find((k) => k.name === 'ops key')?.created_by).toBe('operator');
    const listed = await t.http.get(pageA('keys')).set('Cookie', aliceSession.cookie);
    expect(listed.text).toMatch(new RegExp(`alice laptop[\\s\\S]*?<td>${alice.email.replace(/[.]/g, '\\.')}</td>`));
    expect(listed.text).toMatch(/ops key[\s\S]*?<span class="muted">the operator<\/span>/);
  });
});
