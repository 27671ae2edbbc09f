import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase, eventually, jobRow, withClient, type TestDatabase } from '../support/database.js';
import { configuredTenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import type { ServerProcess } from '../support/server-process.js';
import type { TestApp } from '../support/test-app.js';

/**
 * Jobs across real processes: an API instance (ROLE=api, in this process) enqueues, and built
 * servers (`node dist/src/main.js`, ROLE=worker) run them, die, restart and hand jobs back.
 */
describe('jobs across worker processes (SIGKILL, restart, SIGTERM)', () => {
  let api: TestApp;
  let db: TestDatabase;
  const worker = (extra: Record<string, string> = {}): Promise<ServerProcess> =>
    db.server({ ROLE: 'worker', LOCAL_PROVIDER_DELAY_MS: '5000', SHUTDOWN_GRACE_MS: '0', ...extra });

  beforeAll(async () => {
    db = await createDatabase();
    api = await db.app({ ROLE: 'api', SYNC_BUDGET_MS: '0' });
  }, 180_000);
  afterAll(() => db?.drop());

  const articlesOf = (jobId: string) =>
    withClient(db.url, async (c) => (await c.query('SELECT count(*)::int AS n FROM articles WHERE job_id = $1', [jobId])).rows[0].n as number);

  it('ROLE=api runs no worker; queued jobs are picked up when a worker starts (a restart resumes them)', async () => {
    const tenant = await configuredTenant(api);
    const jobs = await Promise.all([1, 2, 3].map((i) => callOk(api, tenant.key, 'write_article', { brief: `Queued ${i}` })));
    // Several poll periods of an ROLE=all instance: an API-only instance claims nothing. (No event
    // marks a claim that does not happen: letting the periods pass is what this checks.)
    await sleep(2_500);
    for (const { job_id } of jobs) await expect(jobRow(db.url, job_id)).resolves.toMatchObject({ status: 'queued', attempts: 0 });

    const w = await worker({ LOCAL_PROVIDER_DELAY_MS: '0' });
    for (const { job_id } of jobs) {
      await expect(
        eventually(
          () => jobRow(db.url, job_id),
          (j) => j.status !== 'queued' && j.status !== 'running',
        ),
      ).resolves.toMatchObject({ status: 'succeeded', attempts: 1 });
      await expect(articlesOf(job_id)).resolves.toBe(1);
    }
    w.child.kill('SIGKILL');
    await w.exited;
  }, 120_000);

  it('a worker killed with SIGKILL mid-job: the job is reclaimed after its lease and finishes once', async () => {
    const tenant = await configuredTenant(api);
    const first = await worker();
    const { job_id } = await callOk(api, tenant.key, 'write_article', { brief: 'Survives a crash' });
    const claimed = await eventually(
      () => jobRow(db.url, job_id),
      (j) => j.status === 'running' && j.progress > 0,
    );
    expect(claimed.locked_by).toContain(`:${first.child.pid}:`);
    first.child.kill('SIGKILL');
    await expect(first.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
    // Nobody else was running: the dead worker's claim is still there.
    await expect(jobRow(db.url, job_id)).resolves.toMatchObject({ status: 'running', locked_by: claimed.locked_by });

    const second = await worker();
    const done = await eventually(
      () => jobRow(db.url, job_id),
      (j) => j.status === 'succeeded' || j.status === 'failed',
      90_000,
    );
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, locked_by: null });
    await expect(articlesOf(job_id)).resolves.toBe(1);
    const seen = await callOk(api, tenant.key, 'get_job', { job_id });
    expect(seen).toMatchObject({ status: 'succeeded', progress: 1, result: { status: 'succeeded', job_id } });
    second.child.kill('SIGKILL');
    await second.exited;
  }, 180_000);

  it('SIGTERM hands a running job back to the queue without using up an attempt; another worker finishes it', async () => {
    const tenant = await configuredTenant(api);
    const first = await worker();
    const { job_id } = await callOk(api, tenant.key, 'write_article', { brief: 'Handed back' });
    await eventually(
      () => jobRow(db.url, job_id),
      (j) => j.status === 'running' && j.progress > 0,
    );
    first.child.kill('SIGTERM');
    await expect(first.exited).resolves.toEqual({ code: 0, signal: null });
    // Back in the queue at once (not after a lease expiry), with its attempt given back.
    await expect(jobRow(db.url, job_id)).resolves.toMatchObject({ status: 'queued', locked_by: null, attempts: 0 });

    const second = await worker({ LOCAL_PROVIDER_DELAY_MS: '0' });
    await expect(
      eventually(
        () => jobRow(db.url, job_id),
        (j) => j.status === 'succeeded' || j.status === 'failed',
      ),
    ).resolves.toMatchObject({ status: 'succeeded', attempts: 1 });
    await expect(articlesOf(job_id)).resolves.toBe(1);
    second.child.kill('SIGKILL');
    await second.exited;
  }, 180_000);

  it('cancel_job on the API instance stops the job on the worker process (LISTEN/NOTIFY)', async () => {
    const tenant = await configuredTenant(api);
    const w = await worker({ LOCAL_PROVIDER_DELAY_MS: '20000', LOG_LEVEL: 'info' });
    const { job_id } = await callOk(api, tenant.key, 'write_article', { brief: 'Cancelled from afar' });
    await eventually(
      () => jobRow(db.url, job_id),
      (j) => j.status === 'running' && j.progress > 0,
    );
    await expect(callOk(api, tenant.key, 'cancel_job', { job_id })).resolves.toMatchObject({ status: 'cancelled' });
    // The worker process hears it and stops the run, long before its 20 s of work are over.
    await w.waitFor(new RegExp(`Job ${job_id} stopped: cancelled`), 15_000);
    await expect(jobRow(db.url, job_id)).resolves.toMatchObject({ status: 'cancelled', result: null });
    await expect(articlesOf(job_id)).resolves.toBe(0);
    w.child.kill('SIGKILL');
    await w.exited;
  }, 120_000);
});
