import { ConformanceFixturesModule } from '../conformance/conformance-fixtures.module.js';
import { slowComputeEnded, slowComputeTicks } from '../conformance/tasks-fixtures.js';
import { createDatabase, eventually, withClient, type TestDatabase } from '../support/database.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import type { TestApp } from '../support/test-app.js';
import { createTask, getTask, modern, waitForTask } from './tasks-wire.js';

/**
 * Tasks across instances on one database: created on A, polled, answered and cancelled on B (the run
 * on A stops); an instance that stops, or stops renewing its lease, leaves its tasks failed, not
 * working forever.
 */
const LEASE = { TASK_LEASE_MS: '900' };

describe('tasks across instances', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    db = await createDatabase();
    a = await db.app(LEASE, [ConformanceFixturesModule]);
    b = await db.app(LEASE, [ConformanceFixturesModule]);
    tenant = await createTenant(a);
  });
  afterAll(() => db?.drop());

  /** The database's clock, and when the lease a task took at its creation (TASK_LEASE_MS) ends on it. */
  const dbNow = () => withClient(db.url, async (c) => (await c.query('SELECT now() AS now')).rows[0].now as Date);
  const leaseEndOf = (taskId: string) =>
    withClient(
      db.url,
      async (c) => (await c.query(`SELECT created_at + interval '900 milliseconds' AS ends FROM mcp_tasks WHERE id = $1`, [taskId])).rows[0].ends as Date,
    );

  it('created on A, polled on B until completed; input answered on B resumes there', async () => {
    const taskId = await createTask(a, tenant.key, 'slow_compute', { seconds: 1.5 });
    expect((await getTask(b, tenant.key, taskId)).status).toBe('working');
    // Past the lease A took at the start (in the database's time): A renews it, so B does not take the
    // task for lost.
    const leaseEnd = await leaseEndOf(taskId);
    await eventually(
      () => dbNow(),
      (now) => now > leaseEnd,
      15_000,
      20,
    );
    expect((await getTask(b, tenant.key, taskId)).status).toBe('working');
    const done = await waitForTask(b, tenant.key, taskId);
    expect(done.status).toBe('completed');
    expect(done.result.content[0].text).toBe('Computed for 1.5s.');

    const asking = await createTask(a, tenant.key, 'confirm_delete', { filename: 'b.txt' });
    await waitForTask(b, tenant.key, asking, (task) => task.status === 'input_required');
    await modern(b, tenant.key, 'tasks/update', { taskId: asking, inputResponses: { confirm: { action: 'accept', content: { confirm: false } } } });
    expect((await waitForTask(a, tenant.key, asking)).result.content[0].text).toBe('Kept b.txt.');
  });

  it('cancelled on B: the run on A stops', async () => {
    const taskId = await createTask(a, tenant.key, 'slow_compute', { seconds: 60, label: 'cross-cancel' });
    await eventually(
      async () => slowComputeTicks.get('cross-cancel') ?? 0,
      (ticks) => ticks > 0,
      15_000,
      20,
    );
    expect((await modern(b, tenant.key, 'tasks/cancel', { taskId })).result.resultType).toBe('complete');
    // A hears of it through the database (LISTEN/NOTIFY): its run ends on the aborted signal, long before its 60 s.
    expect(
      await eventually(
        async () => slowComputeEnded.get('cross-cancel'),
        (ended) => ended !== undefined,
        15_000,
        20,
      ),
    ).toBe('stopped');
    expect(slowComputeTicks.get('cross-cancel')).toBeLessThan(600);
    expect((await getTask(a, tenant.key, taskId)).status).toBe('cancelled');
  });

  it('a task whose instance stopped renewing its lease is failed, not working forever', async () => {
    const taskId = await createTask(b, tenant.key, 'slow_compute', { seconds: 5 });
    // As if B had died: its lease is no longer renewed.
    await withClient(db.url, (c) => c.query(`UPDATE mcp_tasks SET instance = 'gone' WHERE id = $1`, [taskId]));
    const failed = await waitForTask(a, tenant.key, taskId, (task) => task.status !== 'working');
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: -32603, message: expect.stringMatching(/instance running this task stopped/) });
    await modern(a, tenant.key, 'tasks/cancel', { taskId });
  });

  it('an instance that stops fails its running tasks at once', async () => {
    const c = await db.app(LEASE, [ConformanceFixturesModule]);
    const taskId = await createTask(c, tenant.key, 'slow_compute', { seconds: 60, label: 'stopping' });
    await eventually(
      async () => slowComputeTicks.get('stopping') ?? 0,
      (ticks) => ticks > 0,
      15_000,
      20,
    );
    await c.close();
    const failed = await getTask(a, tenant.key, taskId);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe(-32603);
  });
});
