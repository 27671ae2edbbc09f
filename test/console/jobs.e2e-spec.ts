import { consoleHttp, type ConsoleSession } from '../support/console.js';
import { createDatabase, eventually, jobRow, type TestDatabase } from '../support/database.js';
import { configuredTenant, type Tenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import { addAccountMember, addProjectMember, newUser, signedIn, type TestUser } from '../support/people.js';
import type { TestApp } from '../support/test-app.js';

// docs/console.md#jobs over HTTP. The console and /mcp run on an instance without a worker
// (ROLE=api); a quick worker makes the finished jobs first and stops, then a slow one (60 s a job, one
// at a time per account) keeps one job running while the others stay queued: every state is exact.
// An owner sees every job, a member those of the projects where they have a role, and cancels where
// their role allows cancel_job (editor); other ids are the same 404 page; forged posts 403.

const MISSING = '00000000-0000-7000-8000-000000000000';

describe('console jobs', () => {
  let db: TestDatabase;
  let api: TestApp;
  let tenant: Tenant;
  let owner: TestUser;
  let member: TestUser;
  let ownerSession: ConsoleSession;
  let memberSession: ConsoleSession;
  let [p1, p2, p3] = ['', '', ''];
  let written: { job_id: string; article_id: string; title: string };
  let image: { job_id: string; media_id: string };
  let running: string;
  let queuedP1: string;
  let queuedP2: string;
  let queuedP3: string;
  let other: { accountId: string; session: ConsoleSession; jobId: string };

  const { get, post } = consoleHttp(() => api);
  const page = (rest = '') => `/console/accounts/${tenant.accountId}${rest ? `/${rest}` : ''}`;
  const status = async (id: string) => (await jobRow(db.url, id)).status as string;

  beforeAll(async () => {
    db = await createDatabase();
    api = await db.app({ ROLE: 'api', SYNC_BUDGET_MS: '0', JOBS_MAX_QUEUED_PER_ACCOUNT: '100' });
    tenant = await configuredTenant(api, { projects: 3 });
    [p1, p2, p3] = tenant.projectIds;
    owner = await newUser(api);
    member = await newUser(api);
    await addAccountMember(api, tenant.accountId, owner.id, 'owner');
    await addAccountMember(api, tenant.accountId, member.id, 'member');
    await addProjectMember(api, tenant.accountId, p1, member.id, 'editor');
    await addProjectMember(api, tenant.accountId, p2, member.id, 'viewer');
    ownerSession = await signedIn(api, owner.id);
    memberSession = await signedIn(api, member.id);

    // Finished jobs, by a quick worker: an article, then an image featured on it.
    const quick = await db.app({ ROLE: 'worker', LOCAL_PROVIDER_DELAY_MS: '0' });
    const wrote = await callOk(api, tenant.key, 'write_article', { brief: 'Sourdough', title: 'Sourdough <basics>', project_id: p1 });
    const done = await eventually(
      () => callOk(api, tenant.key, 'get_job', { job_id: wrote.job_id }),
      (j) => j.status === 'succeeded',
    );
    written = { job_id: wrote.job_id, article_id: done.result.article.id, title: done.result.article.title };
    const drew = await callOk(api, tenant.key, 'generate_image', { prompt: 'a crust', article_id: written.article_id, aspect_ratio: '4:3', project_id: p1 });
    const drawn = await eventually(
      () => callOk(api, tenant.key, 'get_job', { job_id: drew.job_id }),
      (j) => j.status === 'succeeded',
    );
    image = { job_id: drew.job_id, media_id: drawn.result.media.id };
    await quick.close();

    // One running (a slow worker, one job at a time for the account), the rest queued.
    running = (await callOk(api, tenant.key, 'write_article', { brief: 'Long one', project_id: p1 })).job_id;
    await db.app({ ROLE: 'worker', LOCAL_PROVIDER_DELAY_MS: '60000', JOBS_MAX_RUNNING_PER_ACCOUNT: '1', SHUTDOWN_GRACE_MS: '0' });
    await eventually(
      () => status(running),
      (s) => s === 'running',
    );
    queuedP1 = (await callOk(api, tenant.key, 'write_article', { brief: 'Waiting', project_id: p1 })).job_id;
    queuedP2 = (await callOk(api, tenant.key, 'generate_image', { prompt: 'waiting', project_id: p2 })).job_id;
    queuedP3 = (await callOk(api, tenant.key, 'write_article', { brief: 'Hidden', project_id: p3 })).job_id;

    const foreign = await configuredTenant(api);
    const otherOwner = await newUser(api);
    await addAccountMember(api, foreign.accountId, otherOwner.id, 'owner');
    const otherJob = (await callOk(api, foreign.key, 'write_article', { brief: 'Theirs' })).job_id;
    other = { accountId: foreign.accountId, session: await signedIn(api, otherOwner.id), jobId: otherJob };
  }, 120_000);

  afterAll(() => db?.drop());

  it('an owner sees every job: status, progress, created, finished, the article or image made, Cancel on the unfinished', async () => {
    const res = await get(page('jobs'), ownerSession);
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    expect(res.text).toContain(`href="${page('jobs')}" aria-current="page"`);
    for (const id of [written.job_id, image.job_id, running, queuedP1, queuedP2, queuedP3]) expect(res.text).toContain(id);
    // Newest first.
    expect(res.text.indexOf(queuedP3)).toBeLessThan(res.text.indexOf(written.job_id));
    // The article made, its title escaped; the image as a thumbnail served under the session.
    expect(res.text).toContain('Article “Sourdough &lt;basics&gt;”');
    expect(res.text).toContain(written.article_id);
    expect(res.text).toContain(`src="${page(`jobs/images/${image.media_id}`)}"`);
    expect(res.text).toMatch(/<progress value="1" max="1"[^>]*>100%<\/progress>/);
    expect(res.text).toMatch(/<span class="badge">running<\/span>/);
    for (const id of [running, queuedP1, queuedP2, queuedP3]) expect(res.text).toContain(`action="${page(`jobs/${id}/cancel`)}"`);
    for (const id of [written.job_id, image.job_id]) expect(res.text).not.toContain(`jobs/${id}/cancel`);
    expect((res.text.match(/<time datetime=/g) ?? []).length).toBeGreaterThanOrEqual(6 + 2);

    const img = await get(page(`jobs/images/${image.media_id}`), ownerSession);
    expect(img.status).toBe(200);
    expect(img.headers['content-type']).toMatch(/^image\//);
    expect(img.headers['x-content-type-options']).toBe('nosniff');
    expect(img.body.length).toBeGreaterThan(0);
  });

  it('a member sees the jobs of their projects only, and Cancel only where they are editor', async () => {
    const res = await get(page('jobs'), memberSession);
    expect(res.status).toBe(200);
    for (const id of [written.job_id, image.job_id, running, queuedP1, queuedP2]) expect(res.text).toContain(id);
    expect(res.text).not.toContain(queuedP3);
    expect(res.text).toContain(`jobs/${queuedP1}/cancel`);
    expect(res.text).not.toContain(`jobs/${queuedP2}/cancel`);
    // The image of a project they see; nothing of a project they do not.
    expect((await get(page(`jobs/images/${image.media_id}`), memberSession)).status).toBe(200);
  });

  it("another account's ids, ids that do not exist, and jobs a member may not cancel answer the same 404 page", async () => {
    const notFound = (await get(`/console/accounts/${MISSING}`, ownerSession)).text;
    const theirs = `/console/accounts/${other.accountId}`;
    for (const path of [
      `${theirs}/jobs`,
      `/console/accounts/${MISSING}/jobs`,
      `${page('jobs')}?cursor=forged`,
      page(`jobs/images/${MISSING}`),
      page('jobs/images/not-an-id'),
      `${theirs}/jobs/images/${image.media_id}`,
    ]) {
      const res = await get(path, ownerSession);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.text).toBe(notFound);
    }
    // Another account's owner: our account, our image under their account.
    for (const path of [page('jobs'), page(`jobs/images/${image.media_id}`), `${theirs}/jobs/images/${image.media_id}`]) {
      const res = await get(path, other.session);
      expect([path, res.status]).toEqual([path, 404]);
    }
    const forms: [string, ConsoleSession][] = [
      [page(`jobs/${other.jobId}/cancel`), ownerSession],
      [`${theirs}/jobs/${other.jobId}/cancel`, ownerSession],
      [page(`jobs/${MISSING}/cancel`), ownerSession],
      [page('jobs/not-an-id/cancel'), ownerSession],
      [page(`jobs/${queuedP1}/cancel`), other.session],
      [page(`jobs/${queuedP2}/cancel`), memberSession],
      [page(`jobs/${queuedP3}/cancel`), memberSession],
    ];
    for (const [path, s] of forms) {
      const res = await post(path, s, { csrf: s.csrf });
      expect([path, res.status]).toEqual([path, 404]);
      // The page says who is signed in: the same page as an unknown account's for that person.
      expect(res.text).toBe((await get(`/console/accounts/${MISSING}`, s)).text);
    }
    // (The slow worker may have started the other account's job: one at a time per account.)
    for (const id of [other.jobId, queuedP1, queuedP2, queuedP3]) expect(await status(id)).not.toBe('cancelled');
  });

  it('refuses (403, nothing done) a cancel without the csrf, with a wrong one, cross-site, or from a foreign Origin', async () => {
    const s = ownerSession;
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{}, {}],
      [{ csrf: 'wrong' }, {}],
      [{ csrf: memberSession.csrf }, {}],
      [{ csrf: s.csrf }, { 'Sec-Fetch-Site': 'cross-site' }],
      [{ csrf: s.csrf }, { Origin: 'https://evil.example' }],
    ];
    for (const [fields, headers] of attempts) {
      const res = await post(page(`jobs/${queuedP1}/cancel`), s, fields, headers);
      expect([fields, headers, res.status]).toEqual([fields, headers, 403]);
      expect(res.text).toContain('Nothing was changed');
    }
    expect(await status(queuedP1)).toBe('queued');
  });

  it('cancels a queued job (a member editor) and a running one (the owner), as cancel_job does; a finished one gets the sentence', async () => {
    const queued = await post(page(`jobs/${queuedP1}/cancel`), memberSession, { csrf: memberSession.csrf });
    expect(queued.status).toBe(303);
    expect(queued.headers.location).toBe(`${page('jobs')}?done=cancelled`);
    expect(await jobRow(db.url, queuedP1)).toMatchObject({ status: 'cancelled', cancel_requested: true });

    const res = await post(page(`jobs/${running}/cancel`), ownerSession, { csrf: ownerSession.csrf });
    expect(res.status).toBe(303);
    // The tools see it so, and the slow worker lets go of it (it runs the next job).
    expect(await callOk(api, tenant.key, 'get_job', { job_id: running })).toMatchObject({ status: 'cancelled' });
    await eventually(
      () => status(queuedP2),
      (s) => s === 'running',
    );
    const after = await get(`${page('jobs')}?done=cancelled`, ownerSession);
    expect(after.text).toContain('The job is cancelled');
    expect(after.text).not.toContain(`jobs/${running}/cancel`);

    const again = await post(page(`jobs/${written.job_id}/cancel`), ownerSession, { csrf: ownerSession.csrf });
    expect(again.status).toBe(409);
    expect(again.text).toContain(`Job &quot;${written.job_id}&quot; already succeeded; a finished job cannot be cancelled.`);
    expect(await status(written.job_id)).toBe('succeeded');
    const twice = await post(page(`jobs/${queuedP1}/cancel`), ownerSession, { csrf: ownerSession.csrf });
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('already cancelled');

    // No jobs to show: a person with no project sees none.
    const nobody = await newUser(api);
    await addAccountMember(api, tenant.accountId, nobody.id, 'member');
    const empty = await get(page('jobs'), await signedIn(api, nobody.id));
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No job yet.');
  });

  it('pages the jobs by cursor, newest first, 50 a page', async () => {
    const many = await configuredTenant(api);
    const boss = await newUser(api);
    await addAccountMember(api, many.accountId, boss.id, 'owner');
    const s = await signedIn(api, boss.id);
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push((await callOk(api, many.key, 'write_article', { brief: `Job ${i}` })).job_id);
    const shown = (text: string) => ids.filter((id) => text.includes(`jobs/${id}/cancel`));
    const first = await get(`/console/accounts/${many.accountId}/jobs`, s);
    expect(shown(first.text)).toHaveLength(50);
    expect(shown(first.text)).toContain(ids[52]);
    const next = /href="([^"]+\?cursor=[^"]+)">Older jobs</.exec(first.text)?.[1];
    expect(next).toBeDefined();
    const second = await get(next!.replace(/&amp;/g, '&'), s);
    expect(second.status).toBe(200);
    expect(shown(second.text).sort()).toEqual(ids.slice(0, 3).sort());
    expect(second.text).not.toContain('Older jobs');
  });
});
