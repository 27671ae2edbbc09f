import { admin, MISSING_ID, newAccount, newProject } from '../support/fixtures.js';
import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { addAccountMember, newUser, signedIn } from '../support/people.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

describe('console: the Audit page (owners only)', () => {
  let t: TestApp;
  const { get, post } = consoleHttp(() => t);
  let accountId: string;
  let projectId: string;
  let owner: { user_id: string; email: string };
  let ownerSession: ConsoleSession;
  let memberSession: ConsoleSession;
  let otherAccountId: string;
  const page = (rest = '') => `/console/accounts/${accountId}/audit${rest}`;

  beforeAll(async () => {
    t = await startTestApp();
    accountId = (await newAccount(t)).id;
    projectId = (await newProject(t, accountId, 'Blog')).id;
    owner = (await admin(t, 'get', `/admin/v1/accounts/${accountId}/members`)).items[0];
    ownerSession = await signedIn(t, owner.user_id);
    const member = await newUser(t);
    await addAccountMember(t, accountId, member.id, 'member');
    memberSession = await signedIn(t, member.id);
    // The owner makes a key in the console: an act of theirs, beside the operator's.
    const made = await post(page('').replace('/audit', '/keys'), ownerSession, {
      csrf: ownerSession.csrf,
      name: 'Mine',
      scope: 'read',
      project: projectId,
      [`role_${projectId}`]: 'viewer',
    });
    expect(made.status).toBe(201);
    otherAccountId = (await newAccount(t)).id;
    await newProject(t, otherAccountId, 'Elsewhere');
  });
  afterAll(async () => {
    await t.close();
  });

  const actions = (text: string) => [...text.matchAll(/<td data-label="Action"><code>([a-z_]+\.[a-z_]+)<\/code><\/td>/g)].map((m) => m[1]);

  it("shows the account's events newest first, with who did them; the nav links it for owners", async () => {
    const res = await get(page(), ownerSession);
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1>Audit</h1>');
    expect(res.text).toContain(`href="/console/accounts/${accountId}/audit" aria-current="page">Audit</a>`);
    expect(actions(res.text)).toEqual(['api_key.created', 'account_member.put', 'project.created', 'account.created']);
    expect(res.text).toContain(owner.email);
    expect(res.text).toContain('<span class="badge">operator</span>');
    // A target and a change read as key: value lines, not JSON.
    expect(res.text).toContain(`<td data-label="Target"><ul class="pairs"><li><span class="key">project_id:</span> <code>${projectId}</code></li></ul></td>`);
    expect(res.text).not.toMatch(/<td[^>]*>(<code>)?\{"/);
    // A change reads before, then after (the member's role none → member).
    expect(res.text).toMatch(/<td data-label="Change"><ul class="pairs"><li><span class="key">before:<\/span> .*?<li><span class="key">after:<\/span> /);
    // Another account's events never show.
    expect(res.text).not.toContain('Elsewhere');
    expect(res.text).not.toContain(otherAccountId);
  });

  it('filters by actor, action and time; a refused filter says why with a 400', async () => {
    expect(actions((await get(page(`?actor=${encodeURIComponent(owner.email)}`), ownerSession)).text)).toEqual(['api_key.created']);
    expect(actions((await get(page('?actor=operator'), ownerSession)).text)).toEqual(['account_member.put', 'project.created', 'account.created']);
    expect(actions((await get(page('?action=project.created'), ownerSession)).text)).toEqual(['project.created']);
    expect(actions((await get(page('?from=2999-01-01T00:00'), ownerSession)).text)).toEqual([]);
    const bad = await get(page('?action=nope'), ownerSession);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Choose an action from the list.');
  });

  it('exports the filtered events as CSV', async () => {
    const res = await get(page('/export?actor=operator'), ownerSession)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (text += c));
        r.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="reblog-audit-\d{8}-\d{4}\.csv"$/);
    const lines = (res.body as string).trim().split('\n');
    expect(lines[0]).toBe('at,actor_type,actor_id,actor_email,action,target,change,ip,user_agent,request_id,id');
    expect(lines.slice(1).map((l) => l.split(',')[4])).toEqual(['account_member.put', 'project.created', 'account.created']);
    expect((await get(page('?actor=operator'), ownerSession)).text).toContain(`href="${page('/export')}?actor=operator" download>Export CSV</a>`);
  });

  it('a member sees nothing of it: the same 404 as an account that does not exist, and no nav link', async () => {
    const notFound = (await get(`/console/accounts/${MISSING_ID}`, memberSession)).text;
    for (const path of [page(), page('/export')]) {
      const res = await get(path, memberSession);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    expect((await get(`/console/accounts/${accountId}`, memberSession)).text).not.toContain('>Audit</a>');
    // Nor an owner of another account.
    expect((await get(`/console/accounts/${otherAccountId}/audit`, ownerSession)).status).toBe(404);
  });
});
