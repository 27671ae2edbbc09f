import { createDatabase, eventually, type TestDatabase } from '../support/database.js';
import { configuredTenant, type Tenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';
import { createTask, getTask, modern, waitForTask } from './tasks-wire.js';

/** The product's job tools as tasks: write_article's task ends with the job's answer; cancelling the task cancels the job. */
describe('write_article as a task', () => {
  let db: TestDatabase;
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    db = await createDatabase();
    // A task's run is not a silent call (no connection waits for it): it waits for its job past SYNC_BUDGET_SILENT_MS.
    t = await db.app({ LOCAL_PROVIDER_DELAY_MS: '1500', SYNC_BUDGET_SILENT_MS: '200' });
    tenant = await configuredTenant(t);
  });
  afterAll(() => db?.drop());

  it('completes with the job result inline, though the job outlives the budget of a silent call', async () => {
    const taskId = await createTask(t, tenant.key, 'write_article', { brief: 'Sourdough' });
    expect((await getTask(t, tenant.key, taskId)).status).toBe('working');
    const done = await waitForTask(t, tenant.key, taskId);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBeUndefined();
    expect(done.result.structuredContent).toMatchObject({ status: 'succeeded', job_id: expect.any(String), article: { id: expect.any(String) } });
  });

  it('tasks/cancel cancels the job it started', async () => {
    const taskId = await createTask(t, tenant.key, 'write_article', { brief: 'Rye' });
    const running = await eventually(
      async () => (await callOk(t, tenant.key, 'list_jobs', {})).items as { id: string; status: string }[],
      (items) => items.some((job) => job.status === 'running' || job.status === 'queued'),
      10_000,
    );
    const job = running.find((j) => j.status === 'running' || j.status === 'queued')!;
    expect((await modern(t, tenant.key, 'tasks/cancel', { taskId })).result.resultType).toBe('complete');
    expect((await getTask(t, tenant.key, taskId)).status).toBe('cancelled');
    await eventually(
      async () => (await callOk(t, tenant.key, 'get_job', { job_id: job.id })).status as string,
      (status) => status === 'cancelled',
      10_000,
    );
  });
});
