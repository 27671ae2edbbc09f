import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { createDatabase, eventually, jobRow, type TestDatabase } from '../support/database.js';
import { configuredTenant, type Tenant } from '../support/fixtures.js';
import { callOk, connectClient, rpc, toolJson } from '../support/mcp-client.js';
import { slowWriter, type SlowWriter } from '../support/slow-writer.js';
import type { TestApp } from '../support/test-app.js';

/**
 * A writer slower than the clients' patience, scaled down from production with the same order:
 * silent budget (45 s) < the official SDK client's default timeout (60 s) < the writer (75 s), and a
 * heartbeat (10 s) well inside that timeout. Scaled: 1 s < 1.5 s < 3 s, heartbeat 0.3 s.
 */
const SCALE = { silentBudgetMs: 1_000, clientTimeoutMs: 1_500, writerMs: 3_000, heartbeatMs: 300 };
const PRODUCTION = { silentBudgetMs: 45_000, clientTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MSEC, writerMs: 75_000, heartbeatMs: 10_000 };

describe('jobs: a call that outlives the client’s timeout', () => {
  let db: TestDatabase;
  let writer: SlowWriter;
  let t: TestApp;
  let tenant: Tenant;

  beforeAll(async () => {
    writer = await slowWriter(SCALE.writerMs);
    db = await createDatabase();
    // SYNC_BUDGET_MS keeps its default (280 s): longer than the writer.
    t = await db.app({ ...writer.env, SYNC_BUDGET_SILENT_MS: String(SCALE.silentBudgetMs), PROGRESS_HEARTBEAT_MS: String(SCALE.heartbeatMs) });
    tenant = await configuredTenant(t);
  });
  afterAll(async () => {
    await db?.drop();
    await writer?.close();
  });

  it('the scaled scenario keeps the order of production’s numbers', () => {
    for (const s of [SCALE, PRODUCTION]) {
      expect(s.heartbeatMs).toBeLessThan(s.silentBudgetMs);
      expect(s.silentBudgetMs).toBeLessThan(s.clientTimeoutMs);
      expect(s.clientTimeoutMs).toBeLessThan(s.writerMs);
    }
  });

  it('SDK client at its defaults (no progress): the call answers with a job id before the client gives up, and get_job returns the article', async () => {
    const client = await connectClient(t, tenant.key);
    try {
      // `timeout` stands for the SDK's 60 s default, scaled.
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'Patience' } }, undefined, { timeout: SCALE.clientTimeoutMs });
      const answer = toolJson(result);
      expect(answer).toEqual({ status: 'running', job_id: expect.any(String), poll_after_s: expect.any(Number) });
      // Nothing cancelled the job: it finishes, and get_job returns what write_article would have answered.
      const job = await eventually(
        () => callOk(t, tenant.key, 'get_job', { job_id: answer.job_id }),
        (j) => j.status !== 'queued' && j.status !== 'running',
        30_000,
      );
      expect(job).toMatchObject({
        status: 'succeeded',
        result: { status: 'succeeded', job_id: answer.job_id, article: { title: 'A slow draft', source: 'ai', job_id: answer.job_id } },
      });
      await expect(jobRow(db.url, answer.job_id)).resolves.toMatchObject({ cancel_requested: false });
    } finally {
      await client.close();
    }
  });

  it('SDK client with onprogress and resetTimeoutOnProgress: heartbeats keep it waiting, and the call itself returns the article', async () => {
    const client = await connectClient(t, tenant.key);
    try {
      const seen: Progress[] = [];
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'Keep me posted' } }, undefined, {
        timeout: SCALE.clientTimeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: (p) => seen.push(p),
      });
      expect(result.isError).toBeFalsy();
      expect(toolJson(result)).toMatchObject({ status: 'succeeded', article: { title: 'A slow draft', source: 'ai' } });
      // The writer said nothing for longer than the client's timeout: the heartbeats filled the silence.
      const heartbeats = seen.filter((p) => /still working/.test(p.message ?? ''));
      expect(heartbeats.length).toBeGreaterThanOrEqual(2);
      for (const p of heartbeats) expect(p.message).toMatch(/^write_article: still working, 0% done \(job [0-9a-f-]{36}\)$/);
      for (let i = 1; i < seen.length; i++) expect(seen[i].progress).toBeGreaterThan(seen[i - 1].progress);
      expect(seen[0].message).toMatch(/queued/);
      expect(seen[seen.length - 1]).toMatchObject({ progress: 1, total: 1 });
    } finally {
      await client.close();
    }
  });

  it('a raw call that cannot hear progress gets its job id within the silent budget: no progressToken, or no event stream', async () => {
    const call = (id: number, meta: object) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'write_article', arguments: { brief: `Silent ${id}` }, ...meta },
    });
    const noToken = await rpc(t, tenant.key, call(1, {}));
    const noStream = await rpc(t, tenant.key, call(2, { _meta: { progressToken: 'p-2' } }), { Accept: 'application/json' });
    for (const res of [noToken, noStream]) {
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.result.structuredContent).toEqual({ status: 'running', job_id: expect.any(String), poll_after_s: expect.any(Number) });
    }
  });
});

describe('jobs: the heartbeat of a waiting call carries the job’s own progress', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createDatabase();
    // The local writer reports a step every 300 ms; the heartbeat beats three times between two steps.
    t = await db.app({ LOCAL_PROVIDER_DELAY_MS: '3000', PROGRESS_HEARTBEAT_MS: '100' });
  });
  afterAll(() => db?.drop());

  it('between the job’s steps the call repeats its last progress (a hair higher), and says how far it is', async () => {
    const tenant = await configuredTenant(t);
    const client = await connectClient(t, tenant.key);
    try {
      const seen: Progress[] = [];
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'Steps' } }, undefined, { onprogress: (p) => seen.push(p) });
      expect(toolJson(result)).toMatchObject({ status: 'succeeded' });
      for (let i = 1; i < seen.length; i++) expect(seen[i].progress).toBeGreaterThan(seen[i - 1].progress);
      const steps = seen.filter((p) => /% done \(job/.test(p.message ?? '') && !/still working/.test(p.message ?? ''));
      const beats = seen.filter((p) => /still working/.test(p.message ?? ''));
      expect(steps.length).toBeGreaterThanOrEqual(3);
      const after = beats.filter((b) => b.progress > steps[0].progress);
      expect(after.length).toBeGreaterThanOrEqual(1);
      for (const beat of after) {
        // The last step before it, repeated: same percentage, a value within a hair of it.
        const step = [...steps].reverse().find((s) => s.progress < beat.progress)!;
        expect(beat.progress - step.progress).toBeLessThan(0.001);
        expect(beat.message).toBe(step.message!.replace(/: (\d+)% done/, ': still working, $1% done'));
      }
    } finally {
      await client.close();
    }
  });
});
