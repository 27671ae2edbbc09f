import { loadConfig, ConfigError } from '../../src/config/config.js';
import { JobsService } from '../../src/jobs/jobs.service.js';
import type { TestApp } from '../support/test-app.js';
import { createDatabase, eventually, startInstances, withClient, type TestDatabase } from '../support/database.js';
import { configuredTenant } from '../support/fixtures.js';
import { callOk, callTool } from '../support/mcp-client.js';

const queuedOf = (url: string, accountId: string) =>
  withClient(url, async (c) => Number((await c.query(`SELECT count(*) AS n FROM jobs WHERE account_id = $1 AND status = 'queued'`, [accountId])).rows[0].n));

describe('jobs: per-account caps on queued jobs (JOBS_MAX_QUEUED_PER_ACCOUNT)', () => {
  let db: TestDatabase;
  // Two instances without a worker (ROLE=api): every job stays queued, so the counts are exact.
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const env = { ROLE: 'api', SYNC_BUDGET_MS: '0', JOBS_MAX_QUEUED_PER_ACCOUNT: '3' };
    ({
      db,
      apps: [a, b],
    } = await startInstances(env, env));
  });
  afterAll(() => db?.drop());

  it('the call over the cap is a too_many_jobs tool error naming the count and the way out; other accounts are unaffected', async () => {
    const tenant = await configuredTenant(a);
    const other = await configuredTenant(a);
    const started: { job_id: string }[] = [];
    for (let i = 0; i < 3; i++) started.push(await callOk(a, tenant.key, 'write_article', { brief: `Queued ${i}` }));
    for (const s of started) expect(s).toMatchObject({ status: 'running', job_id: expect.any(String) });

    const refused = await callTool(a, tenant.key, 'generate_image', { prompt: 'One too many' });
    expect(refused.isError).toBe(true);
    expect(refused.structured).toBeUndefined();
    const { error } = refused.json;
    expect(error).toEqual({
      code: 'too_many_jobs',
      message:
        'This account already has 3 jobs queued, the most it may have (limit 3); wait for one to finish (get_job) or cancel one (cancel_job), then call generate_image again.',
      details: { queued: 3, limit: 3 },
    });
    expect(await queuedOf(db.url, tenant.accountId)).toBe(3);

    // Another account of the same server queues as usual.
    await expect(callOk(a, other.key, 'write_article', { brief: 'Not affected' })).resolves.toMatchObject({ status: 'running' });

    // Cancelling one frees its place.
    await callOk(a, tenant.key, 'cancel_job', { job_id: started[0].job_id });
    await expect(callOk(b, tenant.key, 'write_article', { brief: 'Fits again' })).resolves.toMatchObject({ status: 'running' });
  });

  it('ten concurrent calls of one account on two instances queue exactly the cap', async () => {
    const tenant = await configuredTenant(a);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => callTool(i % 2 ? a : b, tenant.key, 'write_article', { brief: `Race ${i}` })));
    const codes = results.map((r) => (r.isError ? r.json.error.code : 'queued')).sort();
    expect(codes).toEqual([...Array(3).fill('queued'), ...Array(7).fill('too_many_jobs')]);
    expect(await queuedOf(db.url, tenant.accountId)).toBe(3);
  });

  it('a waiting call whose job ends while its LISTEN connection is cut still answers (the end announced to nobody)', async () => {
    // No worker anywhere on this database: the test ends the job itself, with no NOTIFY.
    const api = await db.app({ ROLE: 'api', SYNC_BUDGET_MS: '120000' });
    try {
      const tenant = await configuredTenant(api);
      const call = callTool(api, tenant.key, 'write_article', { brief: 'Ended while nobody listens' });
      const jobId = await eventually(
        () =>
          withClient(db.url, async (c) => (await c.query(`SELECT id FROM jobs WHERE account_id = $1`, [tenant.accountId])).rows[0]?.id as string | undefined),
        (id) => id !== undefined,
      );
      await withClient(db.url, async (c) => {
        await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'reblog-mcp-listen'`);
        await c.query(`UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE id = $1`, [jobId]);
      });
      // Answered from the read after the reconnect (or the slow safety read), not left to the 120 s budget.
      const answer = await call;
      expect(answer.isError).toBe(true);
      expect(answer.json.error.message).toMatch(/cancelled/);
    } finally {
      await api.close();
    }
  });

  it('the variables are validated at boot, naming the variable', () => {
    for (const name of ['JOBS_MAX_QUEUED_PER_ACCOUNT', 'JOBS_MAX_RUNNING_PER_ACCOUNT']) {
      for (const value of ['0', '-1', 'many', '2.5']) {
        expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
        expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be a whole number from 1 to `));
      }
    }
    expect(loadConfig({})).toMatchObject({ jobsMaxQueuedPerAccount: 20, jobsMaxRunningPerAccount: 2 });
  });
});

describe('jobs: fair claims across accounts (JOBS_MAX_RUNNING_PER_ACCOUNT), and waiting calls woken by events', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    // One worker (this app) with its 4 slots; each job takes 3 s, far longer than the old 1 s polling of waiting calls.
    t = await db.app({ SYNC_BUDGET_MS: '0', LOCAL_PROVIDER_DELAY_MS: '3000', JOBS_MAX_RUNNING_PER_ACCOUNT: '2' });
  });
  afterAll(() => db?.drop());

  it('an account with a backlog runs at most its cap at once, and another account’s job is claimed within the first round', async () => {
    const busy = await configuredTenant(t);
    const late = await configuredTenant(t);
    const backlog: string[] = [];
    for (let i = 0; i < 5; i++) backlog.push((await callOk(t, busy.key, 'write_article', { brief: `Backlog ${i}` })).job_id as string);
    const lone = (await callOk(t, late.key, 'write_article', { brief: 'Lone job' })).job_id as string;

    const rows = await eventually(
      () =>
        withClient(
          db.url,
          async (c) =>
            (await c.query(`SELECT id, account_id, status, started_at, finished_at FROM jobs WHERE id = ANY($1::uuid[])`, [[...backlog, lone]])).rows,
        ),
      (all) => all.every((j) => j.status === 'succeeded'),
    );
    const loneRow = rows.find((j) => j.id === lone)!;
    const busyRows = rows.filter((j) => j.id !== lone);
    // Claimed before the backlog's third job: only the first round of the busy account's jobs went first.
    expect(busyRows.filter((j) => j.started_at < loneRow.started_at).length).toBeLessThanOrEqual(2);
    // Never more than 2 of the busy account's jobs running at the same moment.
    for (const j of busyRows) {
      const overlapping = busyRows.filter((o) => o.started_at <= j.started_at && o.finished_at > j.started_at);
      expect(overlapping.length).toBeLessThanOrEqual(2);
    }
  });

  it('a waiting call reads its job once, then again only when its end is announced, also when another instance runs it', async () => {
    // An instance without a worker takes the call; this app's worker runs the job.
    const api = await db.app({ ROLE: 'api', SYNC_BUDGET_MS: '120000' });
    try {
      const tenant = await configuredTenant(api);
      const jobs = api.app.get(JobsService);
      const reads = jest.spyOn(jobs, 'reread');
      const answer = await callOk(api, tenant.key, 'write_article', { brief: 'Woken by an event' });
      expect(answer).toMatchObject({ status: 'succeeded', job_id: expect.any(String) });
      // The first read (it may have finished already) and the read after the `succeeded` notification; no polling.
      expect(reads.mock.calls.length).toBeLessThanOrEqual(2);
      reads.mockRestore();
    } finally {
      await api.close();
    }
  });
});
