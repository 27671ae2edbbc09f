import { createDatabase, eventually, type TestDatabase } from '../support/database.js';
import { configuredTenant, type Tenant } from '../support/fixtures.js';
import { callOk } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';
import { createTask, getTask, modern, waitForTask } from './tasks-wire.js';

/**
 * The product's job tools as tasks: write_article's and generate_image's tasks end with the job's
 * answer (the image inline, docs/protocol.md#jobs-and-long-calls); cancelling the task cancels the job.
 */
describe('write_article and generate_image as tasks', () => {
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

  it('generate_image completes with the job result and the image inline, though the job outlives the budget of a silent call', async () => {
    const taskId = await createTask(t, tenant.key, 'generate_image', { prompt: 'A loaf of rye on a board', aspect_ratio: '1:1' });
    expect((await getTask(t, tenant.key, taskId)).status).toBe('working');
    const done = await waitForTask(t, tenant.key, taskId);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBeUndefined();
    const answer = done.result.structuredContent;
    expect(answer).toMatchObject({
      status: 'succeeded',
      job_id: expect.any(String),
      media: { id: expect.any(String), mime_type: 'image/png', width: expect.any(Number), height: expect.any(Number) },
    });
    expect(answer.media.url).toBe(`${t.config.publicUrl}/media/${answer.media.id}`);
    // The text block with the answer, then the image itself.
    expect(done.result.content).toHaveLength(2);
    expect(JSON.parse(done.result.content[0].text)).toEqual(answer);
    const image = done.result.content[1];
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from(image.data, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    expect((await callOk(t, tenant.key, 'get_job', { job_id: answer.job_id })).status).toBe('succeeded');
  });

  it('tasks/cancel cancels the generate_image job it started', async () => {
    const taskId = await createTask(t, tenant.key, 'generate_image', { prompt: 'A field of barley' });
    const job = await eventually(
      async () =>
        ((await callOk(t, tenant.key, 'list_jobs', {})).items as { id: string; tool: string; status: string }[]).find(
          (j) => j.tool === 'generate_image' && (j.status === 'running' || j.status === 'queued'),
        ),
      (found) => found !== undefined,
      10_000,
    );
    expect((await modern(t, tenant.key, 'tasks/cancel', { taskId })).result.resultType).toBe('complete');
    expect((await getTask(t, tenant.key, taskId)).status).toBe('cancelled');
    await eventually(
      async () => (await callOk(t, tenant.key, 'get_job', { job_id: job!.id })).status as string,
      (status) => status === 'cancelled',
      10_000,
    );
  });
});
