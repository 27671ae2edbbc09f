import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { createDatabase, eventually, jobRow, withClient, type TestDatabase } from '../support/database.js';
import { admin, configuredTenant } from '../support/fixtures.js';
import { connectClient, initSession, rpc, sessionHeaders, toolJson } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/** Splits an SSE body into the JSON of its `data:` lines, event by event. */
function sseMessages(body: string): any[] {
  return body
    .split(/\n\n/)
    .map((event) =>
      event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter(Boolean)
    .map((data) => JSON.parse(data));
}

describe('progress over SSE, and notifications/cancelled', () => {
  let t: TestApp;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createDatabase();
    t = await db.app({ SYNC_BUDGET_MS: '120000', LOCAL_PROVIDER_DELAY_MS: '2000' });
  });
  afterAll(() => db?.drop());

  it('the SDK client’s onprogress receives increasing notifications/progress, then the result', async () => {
    const tenant = await configuredTenant(t);
    const client = await connectClient(t, tenant.key);
    try {
      const seen: Progress[] = [];
      const result = await client.callTool({ name: 'write_article', arguments: { brief: 'Streaming' } }, undefined, { onprogress: (p) => seen.push(p) });
      expect(result.isError).toBeFalsy();
      expect(toolJson(result)).toMatchObject({ status: 'succeeded', article: { source: 'ai' } });
      expect(seen.length).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < seen.length; i++) expect(seen[i].progress).toBeGreaterThan(seen[i - 1].progress);
      for (const p of seen) {
        expect(p.total).toBe(1);
        expect(p.progress).toBeGreaterThanOrEqual(0);
        expect(p.progress).toBeLessThanOrEqual(1);
        expect(p.message).toMatch(/^write_article: /);
      }
      expect(seen[0].message).toMatch(/queued/);
      expect(seen[seen.length - 1]).toMatchObject({ progress: 1 });
    } finally {
      await client.close();
    }
  });

  it('raw: Content-Type text/event-stream, progress events with the token, the JSON-RPC response last, logged before it was sent', async () => {
    const tenant = await configuredTenant(t);
    const res = await rpc(t, tenant.key, {
      jsonrpc: '2.0',
      id: 'req-7',
      method: 'tools/call',
      params: { name: 'generate_image', arguments: { prompt: 'steam' }, _meta: { progressToken: 'tok-1' } },
    }).buffer(true);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const messages = sseMessages(res.text);
    const last = messages.pop();
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const m of messages) {
      expect(m).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok-1', progress: expect.any(Number), total: 1, message: expect.any(String) },
      });
    }
    expect(last).toMatchObject({ jsonrpc: '2.0', id: 'req-7', result: { structuredContent: { status: 'succeeded', media: { mime_type: 'image/png' } } } });
    expect(last.result.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    // The response was sent after its activity entry was durable.
    const activity = await admin(t, 'get', `/admin/v1/accounts/${tenant.accountId}/activity?tool=generate_image`, undefined, 200);
    expect(activity.items).toEqual([expect.objectContaining({ method: 'tools/call', tool: 'generate_image', outcome: 'ok' })]);
  });

  it('without text/event-stream in Accept, or without a progressToken, the answer is plain JSON', async () => {
    const tenant = await configuredTenant(t);
    const plain = await rpc(
      t,
      tenant.key,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_article', arguments: { brief: 'x' }, _meta: { progressToken: 5 } } },
      { Accept: 'application/json' },
    );
    expect(plain.headers['content-type']).toMatch(/^application\/json/);
    expect(plain.body.result.structuredContent.status).toBe('succeeded');
    const noToken = await rpc(t, tenant.key, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_article', arguments: { brief: 'y' } } });
    expect(noToken.headers['content-type']).toMatch(/^application\/json/);
    expect(noToken.body.result.structuredContent.status).toBe('succeeded');
  });

  it('a tool error after progress ends the stream as the last event', async () => {
    const tenant = await configuredTenant(t);
    const pending = rpc(t, tenant.key, {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'write_article', arguments: { brief: 'z' }, _meta: { progressToken: 'p' } },
    })
      .buffer(true)
      // supertest sends on then(): start the call now.
      .then((r) => r);
    const [job] = await eventually(
      () => callJobs(tenant.key),
      (items) => items.length === 1 && items[0].status === 'running' && items[0].progress > 0,
    );
    await rpc(t, tenant.key, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'cancel_job', arguments: { job_id: job.id } } });
    const res = await pending;
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const last = sseMessages(res.text).pop();
    expect(last.id).toBe(3);
    expect(last.result.isError).toBe(true);
    expect(toolJson(last.result).error).toEqual({
      code: 'invalid_state',
      message: `The write_article job ${job.id} was cancelled, so nothing was written; call write_article again to start over.`,
      details: { job_id: job.id },
    });
  });

  async function callJobs(token: string) {
    const res = await rpc(t, token, { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'list_jobs', arguments: {} } });
    return res.body.result.structuredContent.items as { id: string; status: string; progress: number }[];
  }

  it('notifications/cancelled sent to another instance cancels the job of the in-flight call', async () => {
    // A second instance on the same database, without a worker: it only receives the notification.
    const other = await db.app({ ROLE: 'api' });
    try {
      const tenant = await configuredTenant(t);
      const { sessionId: session } = await initSession(t, tenant.key);
      const headers = sessionHeaders(session);
      const pending = rpc(
        t,
        tenant.key,
        { jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name: 'write_article', arguments: { brief: 'Cancel me' } } },
        headers,
      ).then((r) => r); // sent now
      const [job] = await eventually(
        () => callJobs(tenant.key),
        (items) => items.length === 1 && items[0].status === 'running',
      );
      // Another request id of the same session, and the same id without the session, cancel nothing.
      for (const [id, h] of [
        ['call-2', headers],
        ['call-1', {}],
      ] as const) {
        const res = await rpc(other, tenant.key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } }, h);
        expect(res.status).toBe(202);
      }
      await expect(jobRow(db.url, job.id)).resolves.toMatchObject({ status: 'running' });

      const note = await rpc(
        other,
        tenant.key,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-1', reason: 'The user changed their mind' } },
        headers,
      );
      expect(note.status).toBe(202);
      const answer = await pending;
      expect(answer.body.result.isError).toBe(true);
      expect(toolJson(answer.body.result).error.code).toBe('invalid_state');
      await expect(jobRow(db.url, job.id)).resolves.toMatchObject({ status: 'cancelled', cancel_requested: true });
    } finally {
      await other.close();
    }
  });

  it('the SDK client aborting a call sends notifications/cancelled, which cancels its job', async () => {
    const tenant = await configuredTenant(t);
    const client = await connectClient(t, tenant.key);
    try {
      const abort = new AbortController();
      const call = client.callTool({ name: 'write_article', arguments: { brief: 'Aborted' } }, undefined, { signal: abort.signal });
      const [job] = await eventually(
        () => callJobs(tenant.key),
        (items) => items.length === 1 && items[0].status === 'running',
      );
      abort.abort('no longer needed');
      await expect(call).rejects.toThrow();
      await expect(
        eventually(
          () => jobRow(db.url, job.id),
          (j) => j.status !== 'running',
        ),
      ).resolves.toMatchObject({ status: 'cancelled' });
    } finally {
      await client.close();
    }
  });

  it('without a session it cancels nothing: two stateless calls of one credential may share a request id', async () => {
    const tenant = await configuredTenant(t);
    const call = (brief: string) =>
      rpc(t, tenant.key, { jsonrpc: '2.0', id: 'same-id', method: 'tools/call', params: { name: 'write_article', arguments: { brief } } }).then((r) => r); // sent now
    const pending = [call('First client'), call('Second client')];
    const running = await eventually(
      () => callJobs(tenant.key),
      (items) => items.length === 2 && items.every((j) => j.status === 'running'),
    );
    const note = await rpc(t, tenant.key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'same-id' } });
    expect(note.status).toBe(202);
    // The cancellation is handled before the 202: neither job was touched.
    // Nothing names them for a cancellation: no request key is stored, nor looked up for them.
    for (const job of running) await expect(jobRow(db.url, job.id)).resolves.toMatchObject({ status: 'running', cancel_requested: false, request_key: null });
    for (const answer of await Promise.all(pending)) expect(toolJson(answer.body.result)).toMatchObject({ status: 'succeeded' });
  });

  describe('a cancellation that overtakes its call', () => {
    let other: TestApp;
    beforeAll(async () => {
      // The notification reaches an instance without a worker, as a gateway may send it anywhere.
      other = await db.app({ ROLE: 'api' });
    });
    afterAll(async () => {
      await other?.close();
    });

    async function session(key: string) {
      return sessionHeaders((await initSession(t, key)).sessionId);
    }
    const writeCall = (id: string, brief: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'write_article', arguments: { brief } } });
    const articleCount = (tenant: { projectIds: string[] }) =>
      withClient(db.url, async (c) =>
        Number((await c.query(`SELECT count(*) AS n FROM articles WHERE project_id = ANY($1::uuid[])`, [tenant.projectIds])).rows[0].n),
      );

    it('sent before the call, to another instance: the call’s job is cancelled as it is created, nothing is written', async () => {
      const tenant = await configuredTenant(t);
      const headers = await session(tenant.key);
      const before = await articleCount(tenant);
      const note = await rpc(other, tenant.key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'early-1' } }, headers);
      expect(note.status).toBe(202);

      const answer = await rpc(t, tenant.key, writeCall('early-1', 'Never written'), headers);
      expect(answer.body.result.isError).toBe(true);
      const error = toolJson(answer.body.result).error;
      expect(error.code).toBe('invalid_state');
      expect(error.message).toMatch(/was cancelled/);
      const jobs = await callJobs(tenant.key);
      expect(jobs.map((j) => j.status)).toEqual(['cancelled']);
      await expect(jobRow(db.url, jobs[0].id)).resolves.toMatchObject({ status: 'cancelled', cancel_requested: true, result: null });
      expect(await articleCount(tenant)).toBe(before);

      // Another id of the same session runs as usual.
      const next = await rpc(t, tenant.key, writeCall('early-2', 'Written'), headers);
      expect(next.body.result.isError).toBeFalsy();
    });

    it('sent at the same moment as the call, ten times over, on two instances: every job ends cancelled, whichever arrives first', async () => {
      const tenant = await configuredTenant(t);
      const headers = await session(tenant.key);
      const before = await articleCount(tenant);
      const answers = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const [answer] = await Promise.all([
            rpc(t, tenant.key, writeCall(`race-${i}`, `Race ${i}`), headers),
            rpc(other, tenant.key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `race-${i}` } }, headers),
          ]);
          return answer;
        }),
      );
      for (const answer of answers) expect(toolJson(answer.body.result).error?.code).toBe('invalid_state');
      const jobs = await callJobs(tenant.key);
      expect(jobs).toHaveLength(10);
      for (const job of jobs) expect(job.status).toBe('cancelled');
      expect(await articleCount(tenant)).toBe(before);
    });

    it('without a session it is not remembered: request ids are reused there, so a later call with the same id runs', async () => {
      const tenant = await configuredTenant(t);
      const note = await rpc(other, tenant.key, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'no-session' } });
      expect(note.status).toBe(202);
      const answer = await rpc(t, tenant.key, writeCall('no-session', 'Runs'));
      expect(answer.body.result.isError).toBeFalsy();
      expect(toolJson(answer.body.result)).toMatchObject({ status: 'succeeded' });
      await expect(
        withClient(
          db.url,
          async (c) => (await c.query(`SELECT count(*)::int AS n FROM request_cancellations WHERE credential_id = $1`, [tenant.keyId])).rows[0].n,
        ),
      ).resolves.toBe(0);
    });
  });
});
