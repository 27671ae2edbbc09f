import type { TestApp } from '../support/test-app.js';
import { createDatabase, jobRow, withClient, type TestDatabase } from '../support/database.js';
import { configuredTenant } from '../support/fixtures.js';
import { callError, rpc } from '../support/mcp-client.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';

describe('jobs: provider failures become failed jobs with messages a model can act on', () => {
  let t: TestApp;
  let db: TestDatabase;
  let fake: FakeOpenAi;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    fake.answer = { status: 500, body: '{"error":{"message":"upstream exploded"}}' };
    db = await createDatabase();
    t = await db.app({
      SYNC_BUDGET_MS: '120000',
      WRITER_PROVIDER: 'openai',
      WRITER_BASE_URL: fake.url,
      WRITER_API_KEY: 'sk-provider-secret',
      WRITER_MODEL: 'test-model',
      IMAGE_PROVIDER: 'openai',
      IMAGE_BASE_URL: fake.url,
      IMAGE_API_KEY: 'sk-provider-secret',
    });
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
    await fake?.close();
  });

  const jobIdOf = (message: string) => /job ([0-9a-f-]{36}) failed/.exec(message)?.[1];

  it('HTTP 500 from the provider: write_article answers a tool error saying to retry later; the job is failed, not retried', async () => {
    const tenant = await configuredTenant(t);
    fake.seen.length = 0;
    fake.answer = { status: 500, body: '{"error":{"message":"upstream exploded"}}' };
    const error = await callError(t, tenant.key, 'write_article', { brief: 'Anything' });
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/^The write_article job [0-9a-f-]{36} failed: The writer provider failed with HTTP 500\./);
    expect(error.message).toMatch(/call the tool again/);
    const jobId = jobIdOf(error.message)!;
    const row = await jobRow(db.url, jobId);
    expect(row).toMatchObject({ status: 'failed', attempts: 1, result: null, error: { code: 'unavailable', message: expect.stringContaining('HTTP 500') } });
    const articles = await withClient(db.url, (c) => c.query('SELECT count(*)::int AS n FROM articles WHERE job_id = $1', [jobId]));
    expect(articles.rows[0].n).toBe(0);
    // get_job shows the same failure.
    const res = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_job', arguments: { job_id: jobId } } });
    expect(res.body.result.structuredContent).toMatchObject({ id: jobId, status: 'failed', error: row.error });
    expect(res.body.result.structuredContent.result).toBeUndefined();

    // The provider saw this server's key, never the caller's credential.
    expect(fake.seen.length).toBeGreaterThan(0);
    for (const request of fake.seen) {
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.authorization).toBe('Bearer sk-provider-secret');
      expect(request.body).not.toContain(tenant.key);
      // Tracing is off in this file: no trace context is added.
      expect(request.headers.traceparent).toBeUndefined();
      expect(request.headers.tracestate).toBeUndefined();
    }
  });

  it('HTTP 400 from the provider: a tool error saying the request must change', async () => {
    const tenant = await configuredTenant(t);
    fake.answer = { status: 400, body: '{"error":{"message":"prompt rejected by policy"}}' };
    const error = await callError(t, tenant.key, 'write_article', { brief: 'Anything' });
    expect(error.code).toBe('unprocessable');
    expect(error.message).toMatch(/The writer provider rejected the request \(HTTP 400: "prompt rejected by policy"\); rephrase or shorten the request/);
    await expect(jobRow(db.url, jobIdOf(error.message)!)).resolves.toMatchObject({ status: 'failed', error: { code: 'unprocessable' } });
  });

  it('generate_image: the image provider failing stores no media and sets no featured image', async () => {
    const tenant = await configuredTenant(t);
    fake.seen.length = 0;
    fake.answer = { status: 503, body: 'Service Unavailable' };
    const error = await callError(t, tenant.key, 'generate_image', { prompt: 'a loaf' });
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/^The generate_image job [0-9a-f-]{36} failed: The image provider failed with HTTP 503\./);
    expect(fake.seen.every((r) => r.path === '/v1/images/generations')).toBe(true);
    const media = await withClient(db.url, (c) => c.query('SELECT count(*)::int AS n FROM media WHERE job_id = $1', [jobIdOf(error.message)]));
    expect(media.rows[0].n).toBe(0);
  });
});
