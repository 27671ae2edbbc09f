import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase, eventually, jobRow, withClient, type TestDatabase } from '../support/database.js';
import { configuredTenant } from '../support/fixtures.js';
import { callTool, initSession, rpc, sessionHeaders } from '../support/mcp-client.js';
import type { TestApp } from '../support/test-app.js';

/**
 * cancel_job racing the job's completion, many times: whichever wins, the job ends in exactly one
 * terminal state that never changes afterwards, and a cancelled job has written nothing.
 */
describe('jobs: cancel racing completion', () => {
  let t: TestApp;
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createDatabase();
  });
  // An app per test: a test may close its own to wait until its worker has stopped every run.
  beforeEach(async () => {
    // Jobs take ~40 ms in 10 steps; calls answer at once with the job id.
    t = await db.app({ SYNC_BUDGET_MS: '0', LOCAL_PROVIDER_DELAY_MS: '40' });
  });
  afterEach(() => t.close());
  afterAll(() => db?.drop());

  it('ends in exactly one terminal state, never changed, with nothing written after a cancel', async () => {
    const tenant = await configuredTenant(t);
    const outcomes = new Map<string, 'cancelled' | 'succeeded'>();
    let cancelled = 0;
    let succeeded = 0;
    // Until both outcomes were seen several times (the race must really be run), within a bound.
    for (let i = 0; i < 400 && (cancelled < 5 || succeeded < 5); i++) {
      const started = (await callTool(t, tenant.key, 'write_article', { brief: `Race ${i}` })).json;
      expect(started.status).toBe('running');
      await sleep(Math.floor(Math.random() * 90));
      const answer = await callTool(t, tenant.key, 'cancel_job', { job_id: started.job_id });
      const value = answer.json;
      if (answer.isError) {
        // Lost the race: the job had already finished, and says how.
        expect(value.error).toEqual({
          code: 'invalid_state',
          message: `Job "${started.job_id}" already succeeded; a finished job cannot be cancelled.`,
          details: { status: 'succeeded' },
        });
        outcomes.set(started.job_id, 'succeeded');
        succeeded++;
      } else {
        expect(value).toMatchObject({ id: started.job_id, status: 'cancelled' });
        outcomes.set(started.job_id, 'cancelled');
        cancelled++;
      }
    }
    expect(cancelled).toBeGreaterThanOrEqual(5);
    expect(succeeded).toBeGreaterThanOrEqual(5);

    const ids = [...outcomes.keys()];
    const read = () =>
      withClient(db.url, async (c) => {
        const jobs = await c.query('SELECT id, status, result, locked_by FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
        const articles = await c.query('SELECT job_id, count(*)::int AS n FROM articles WHERE job_id = ANY($1::uuid[]) GROUP BY job_id', [ids]);
        return { jobs: jobs.rows, articles: new Map<string, number>(articles.rows.map((r) => [r.job_id, r.n])) };
      });
    // Workers of cancelled runs finish their steps; none of them may write anything.
    await eventually(read, (s) => s.jobs.every((j) => j.locked_by === null));
    // The only worker on this database stops: its shutdown waits for every run still finishing its steps.
    await t.close();
    const state = await read();
    for (const job of state.jobs) {
      const outcome = outcomes.get(job.id);
      expect({ id: job.id, status: job.status }).toEqual({ id: job.id, status: outcome });
      expect({ id: job.id, articles: state.articles.get(job.id) ?? 0 }).toEqual({ id: job.id, articles: outcome === 'succeeded' ? 1 : 0 });
      if (outcome === 'cancelled') expect(job.result).toBeNull();
    }
  });

  it('two cancels at once: one cancels, the other is told the job is already cancelled', async () => {
    const tenant = await configuredTenant(t);
    for (let i = 0; i < 10; i++) {
      const started = (await callTool(t, tenant.key, 'write_article', { brief: `Twice ${i}` })).json;
      const answers = await Promise.all([0, 1].map(() => callTool(t, tenant.key, 'cancel_job', { job_id: started.job_id })));
      const errors = answers.filter((a) => a.isError).map((a) => a.json.error.message);
      const wins = answers.filter((a) => !a.isError);
      if (wins.length === 0) {
        // Both lost to the job's completion.
        expect(errors).toEqual([0, 1].map(() => `Job "${started.job_id}" already succeeded; a finished job cannot be cancelled.`));
      } else {
        expect(wins).toHaveLength(1);
        expect(errors).toEqual([`Job "${started.job_id}" already cancelled; a finished job cannot be cancelled.`]);
      }
    }
  });

  describe('notifications/cancelled for a call whose job finishes', () => {
    const writeCall = (id: string, brief: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'write_article', arguments: { brief } } });
    const cancelNote = (id: string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'Request timed out' } });
    const articlesOf = (jobIds: string[]) =>
      withClient(
        db.url,
        async (c) =>
          new Map<string, number>(
            (await c.query('SELECT job_id, count(*)::int AS n FROM articles WHERE job_id = ANY($1::uuid[]) GROUP BY job_id', [jobIds])).rows.map((r) => [
              r.job_id,
              r.n,
            ]),
          ),
      );

    it('after the job succeeded: the cancellation destroys nothing, the job and its article stay as they were', async () => {
      const tenant = await configuredTenant(t);
      const headers = sessionHeaders((await initSession(t, tenant.key)).sessionId);
      const started = (await rpc(t, tenant.key, writeCall('done-1', 'Finished'), headers)).body.result.structuredContent;
      expect(started.status).toBe('running');
      const done = await eventually(
        () => jobRow(db.url, started.job_id),
        (j) => j.status !== 'queued' && j.status !== 'running',
      );
      expect(done).toMatchObject({ status: 'succeeded', cancel_requested: false });

      expect((await rpc(t, tenant.key, cancelNote('done-1'), headers)).status).toBe(202);
      // The cancellation is handled before the 202.
      await expect(jobRow(db.url, started.job_id)).resolves.toEqual(done);
      expect((await articlesOf([started.job_id])).get(started.job_id)).toBe(1);
      const job = (await callTool(t, tenant.key, 'get_job', { job_id: started.job_id })).json;
      expect(job).toMatchObject({ status: 'succeeded', result: { article: { id: done.result.article.id } } });
      expect((await callTool(t, tenant.key, 'get_article', { id: done.result.article.id })).json).toMatchObject({
        id: done.result.article.id,
        job_id: started.job_id,
      });
    });

    it('at the moment it finishes, many times: a job that produced its article keeps it; a running one is cancelled and writes nothing', async () => {
      const tenant = await configuredTenant(t);
      const headers = sessionHeaders((await initSession(t, tenant.key)).sessionId);
      const outcomes = new Map<string, string>();
      let cancelled = 0;
      let succeeded = 0;
      for (let i = 0; i < 400 && (cancelled < 5 || succeeded < 5); i++) {
        const started = (await rpc(t, tenant.key, writeCall(`race-${i}`, `Race ${i}`), headers)).body.result.structuredContent;
        expect(started.status).toBe('running');
        await sleep(Math.floor(Math.random() * 90));
        expect((await rpc(t, tenant.key, cancelNote(`race-${i}`), headers)).status).toBe(202);
        // Whatever won is final by the 202.
        const { status } = await jobRow(db.url, started.job_id);
        if (status === 'succeeded') succeeded++;
        else if (status === 'cancelled') cancelled++;
        outcomes.set(started.job_id, status);
      }
      expect(cancelled).toBeGreaterThanOrEqual(5);
      expect(succeeded).toBeGreaterThanOrEqual(5);
      expect([...outcomes.values()].every((s) => s === 'succeeded' || s === 'cancelled')).toBe(true);

      // The only worker stops once every cancelled run has finished its steps: none may write anything.
      const ids = [...outcomes.keys()];
      await eventually(
        () =>
          withClient(
            db.url,
            async (c) => (await c.query('SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND locked_by IS NOT NULL', [ids])).rows[0].n,
          ),
        (n) => n === 0,
      );
      await t.close();
      const articles = await articlesOf(ids);
      for (const id of ids) {
        const job = await jobRow(db.url, id);
        const outcome = outcomes.get(id);
        expect({ id, status: job.status, articles: articles.get(id) ?? 0 }).toEqual({ id, status: outcome, articles: outcome === 'succeeded' ? 1 : 0 });
        if (outcome === 'succeeded') expect(job).toMatchObject({ cancel_requested: false, result: { article: { job_id: id } } });
        else expect(job).toMatchObject({ cancel_requested: true, result: null });
      }
    });
  });
});
