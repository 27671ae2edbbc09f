import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import request from 'supertest';
import { OpenAiHttpClient } from '../../src/ai/openai-http.client.js';
import { flushTelemetry, shutdownTelemetry, startTelemetry, tracer } from '../../src/common/telemetry.js';
import { createDatabase, eventually, type TestDatabase } from '../support/database.js';
import { configuredTenant } from '../support/fixtures.js';
import { call, callError, callOk, rpc, toolJson } from '../support/mcp-client.js';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import type { TestApp } from '../support/test-app.js';

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

/**
 * A job's run is a CONSUMER span of its own trace, linked to the traced call that queued it, though it
 * runs on another instance (here: an `api` instance queues, a `worker` instance runs).
 */
describe('tracing: a job run is linked to the call that queued it, across instances', () => {
  let receiver: OtlpReceiver;
  let db: TestDatabase;
  let api: TestApp;
  let worker: TestApp;
  const saved = { ...process.env };

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    await startTelemetry();
    db = await createDatabase();
    const env = { SYNC_BUDGET_MS: '200', LOCAL_PROVIDER_DELAY_MS: '600' };
    api = await db.app({ ...env, ROLE: 'api' });
    worker = await db.app({ ...env, ROLE: 'worker' });
  });
  afterAll(async () => {
    await api?.close();
    await worker?.close();
    await db?.drop();
    await shutdownTelemetry();
    await receiver?.close();
    process.env = saved;
  });

  it('write_article queued by a traced call on the api instance: the worker instance runs it in a span linked to that call', async () => {
    const tenant = await configuredTenant(api);
    const body = call('queue-1', 'write_article', { brief: 'Sourdough for beginners', title: 'Sourdough basics' });
    const res = await rpc(api, tenant.key, { ...body, params: { ...body.params, _meta: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } } });
    const started = toolJson(res.body.result);
    expect(started).toMatchObject({ status: 'running', job_id: expect.any(String) });
    await eventually(
      () => callOk(api, tenant.key, 'get_job', { job_id: started.job_id }),
      (j) => j.status === 'succeeded',
    );

    const jobSpan = await eventually(
      async () => {
        await flushTelemetry();
        return receiver.spans.find((s) => s.kind === CONSUMER && s.attributes['reblog.job.id'] === started.job_id);
      },
      (s) => s !== undefined,
    );
    const queued = receiver.spans.find((s) => s.kind === SERVER && s.attributes['jsonrpc.request.id'] === 'queue-1')!;
    expect(queued).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    expect(jobSpan!.name).toBe('job write_article');
    expect(jobSpan!.parentSpanId).toBeUndefined();
    expect(jobSpan!.links).toEqual([expect.objectContaining({ traceId: queued.traceId, spanId: queued.spanId })]);
    expect(jobSpan!.attributes).toMatchObject({
      'reblog.job.tool': 'write_article',
      'reblog.account.id': tenant.accountId,
      'reblog.project.id': tenant.projectIds[0],
    });
    // The api instance has no worker: the run was the other instance's.
    expect(api.config.role).toBe('api');
    expect(worker.config.role).toBe('worker');
    // The run's statements are its children.
    const statements = receiver.spans.filter((s) => s.parentSpanId === jobSpan!.spanId && s.attributes['db.system.name'] === 'postgresql');
    expect(statements.map((s) => s.name)).toEqual(expect.arrayContaining([expect.stringMatching(/^jobs\./)]));

    // Its run time, by handler: over OTLP and on the worker's /metrics.
    await flushTelemetry();
    expect(receiver.latest('reblog.job.run.duration')).toEqual([
      expect.objectContaining({ count: 1, attributes: { 'reblog.job.tool': 'write_article', 'reblog.job.outcome': 'succeeded' } }),
    ]);
    // The queue depth over OTLP, as /metrics's reblog_jobs{status} (nothing waits now).
    expect(receiver.latest('reblog.jobs')).toEqual(
      expect.arrayContaining([
        { attributes: { 'reblog.job.status': 'queued' }, value: 0 },
        { attributes: { 'reblog.job.status': 'running' }, value: 0 },
      ]),
    );
    const text = (await request(worker.baseUrl).get('/metrics')).text;
    expect(text).toMatch(/^reblog_jobs\{status="queued"\} 0$/m);
    expect(text).toMatch(/^reblog_job_run_duration_seconds_count\{tool="write_article",outcome="succeeded"\} 1$/m);
  });

  it("the provider's HTTP calls are CLIENT spans of the job run, without its key or the prompt", async () => {
    const fake: FakeOpenAi = await startFakeOpenAi();
    fake.answer = { status: 500, body: '{"error":{"message":"upstream exploded"}}' };
    // A database of its own: the worker instance above (local provider) must not take this job.
    const own = await createDatabase();
    const provided = await own.app({
      SYNC_BUDGET_MS: '120000',
      WRITER_PROVIDER: 'openai',
      WRITER_BASE_URL: fake.url,
      WRITER_API_KEY: 'sk-provider-secret',
      WRITER_MODEL: 'test-model',
      ROLE: 'all',
    });
    try {
      const tenant = await configuredTenant(provided);
      const error = await callError(provided, tenant.key, 'write_article', { brief: 'A secret brief' });
      const jobId = /job ([0-9a-f-]{36}) failed/.exec(error.message)![1];
      // The answer can leave before the run's span ends (the job's failure is told as soon as it is written).
      const jobSpan = (await eventually(
        async () => {
          await flushTelemetry();
          return receiver.spans.find((s) => s.kind === CONSUMER && s.attributes['reblog.job.id'] === jobId);
        },
        (s) => s !== undefined,
      ))!;
      const calls = receiver.spans.filter((s) => s.parentSpanId === jobSpan.spanId && s.kind === CLIENT && s.attributes['http.request.method'] === 'POST');
      // One span per attempt (a 500 is retried by the client before the job fails).
      expect(calls.length).toBe(fake.seen.length);
      // Each attempt carried its own span's trace context: the provider's trace continues ours.
      expect(fake.seen.map((r) => r.headers.traceparent).sort()).toEqual(calls.map((s) => `00-${s.traceId}-${s.spanId}-01`).sort());
      for (const span of calls) {
        expect(span.traceId).toBe(jobSpan.traceId);
        expect(span).toMatchObject({
          name: 'POST',
          attributes: { 'url.full': `${fake.url}/chat/completions`, 'server.address': '127.0.0.1', 'http.response.status_code': 500, 'error.type': '500' },
        });
      }
      const text = JSON.stringify(calls);
      expect(text).not.toContain('sk-provider-secret');
      expect(text).not.toContain('A secret brief');
      // The job's trace is a root of its own: no trace state to carry.
      expect(fake.seen.every((r) => r.headers.tracestate === undefined)).toBe(true);
    } finally {
      await provided.close();
      await own.drop();
      await fake.close();
    }
  });

  it("a provider call made in a traced context with a trace state carries both traceparent and tracestate of the call's span", async () => {
    const fake: FakeOpenAi = await startFakeOpenAi();
    fake.answer = { status: 200, body: '{"ok":true}' };
    try {
      const parent = propagation.extract(ROOT_CONTEXT, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'rojo=00f067aa0ba902b7' });
      const client = new OpenAiHttpClient('image', { baseUrl: fake.url, maxAttempts: 1 });
      await context.with(parent, () =>
        tracer.startActiveSpan('caller', (span) =>
          client.postJson('images/generations', { prompt: 'a loaf' }, new AbortController().signal).finally(() => span.end()),
        ),
      );
      await flushTelemetry();
      const caller = receiver.spans.find((s) => s.name === 'caller' && s.traceId === CLIENT_TRACE)!;
      const post = receiver.spans.find((s) => s.parentSpanId === caller.spanId && s.kind === CLIENT)!;
      expect(post).toMatchObject({ name: 'POST', attributes: { 'url.full': `${fake.url}/images/generations`, 'reblog.provider': 'image' } });
      expect(fake.seen).toHaveLength(1);
      expect(fake.seen[0].headers).toMatchObject({ traceparent: `00-${CLIENT_TRACE}-${post.spanId}-01`, tracestate: 'rojo=00f067aa0ba902b7' });
    } finally {
      await fake.close();
    }
  });
});
